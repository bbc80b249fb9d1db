"""Dynamic quantization (what onnxruntime's quantize_dynamic writes) on each backend: does it
refuse DynamicQuantizeLinear, MatMulInteger, ConvInteger, and which standard forms of the
same computation does it run? One small model per form (float input, float output, static
shapes, opset 13, every value typed), each with its inputs (NAME.inputs.npz) and onnxruntime's outputs
(NAME.ref.npz):

  dq_dql                 x -> DynamicQuantizeLinear -> (Cast(y), scale, Cast(zero point))
  dq_dql_matmulinteger   the quantizer's MatMul: DynamicQuantizeLinear, MatMulInteger with int8
                         weights, Cast, Mul by a_scale * b_scale
  dq_dql_convinteger     the same with ConvInteger (3x3, pads 1)
  dq_matmulinteger       MatMulInteger alone (uint8 activations from a Cast, zero point 100)
  dq_convinteger         ConvInteger alone
  dq_decomposed_mmi      DynamicQuantizeLinear as decompose-dynamic-quantize writes it
                         (ReduceMin/ReduceMax ... QuantizeLinear), then MatMulInteger
  dq_decomposed_float    the same, with the MatMulInteger in float: (Cast(y) - Cast(zp)) MatMul
                         (W - w_zp) as float weights (integers: exact while every partial sum
                         stays below 2^24)
  dq_decomposed_int32    the same, with MatMul on int32 (Cast(y) - Cast(zp) in int32)
  dq_float_casts         the quantization in float (Clip(Round(x / scale) + zp, 0, 255): the
                         same integers as QuantizeLinear) cast to uint8, the MatMulInteger as
                         Cast to float, Sub, MatMul, Cast to int32: each op's types kept
  dq_float_fused         what decompose-dynamic-quantize(to=float) writes: the quantization and
                         the MatMul in float, no integer type left (Clip(Round(x / scale) + zp,
                         0, 255) - zp, MatMul by W - w_zp as float weights)
  dq_float_fused_conv    the same with ConvInteger (Conv by float weights)

    mkdir /tmp/dq && cd /tmp/dq && python $REPO/targets/probes/dynamic_quant_models.py
    for b in rknn2 nncase-k210 tflite openvino; do for f in *.onnx; do
      $REPO/.backends/$b/venv/bin/python $REPO/tests/backends/runners/run-$b.py \\
          $f ${f%.onnx}.inputs.npz out-$b-${f%.onnx}; done; done
    python $REPO/targets/probes/dynamic_quant_models.py --compare out-rknn2 out-nncase-k210 out-tflite out-openvino

Results: dynamic_quant_models.txt.
"""

import json
import sys
from pathlib import Path

import numpy as np

K, N = 32, 16
RNG = np.random.default_rng(0)
W = RNG.integers(-127, 128, (K, N)).astype(np.int8)
WSCALE = np.float32(0.02)
CW = RNG.integers(-127, 128, (8, 4, 3, 3)).astype(np.int8)


def _helpers():
    from onnx import TensorProto, helper, numpy_helper

    return TensorProto, helper, numpy_helper


def _model(name, nodes, inputs, outputs, inits):
    import onnx

    T, h, nh = _helpers()
    graph = h.make_graph(nodes, name, inputs, outputs, [nh.from_array(np.asarray(v), k) for k, v in inits.items()])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)], ir_version=7)
    # Every value typed (nncase 1.9 refuses a value without value_info, as --target's plan
    # would annotate them).
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, f"{name}.onnx")
    return model


def _io(shape_in, shape_out, n_out=1):
    T, h, _ = _helpers()
    ins = [h.make_tensor_value_info("x", T.FLOAT, shape_in)]
    outs = [h.make_tensor_value_info(f"out{i}", T.FLOAT, s) for i, s in enumerate(shape_out)][:n_out]
    return ins, outs


def _decomposed(x, prefix):
    """DynamicQuantizeLinear(x) in standard ops, as decompose-dynamic-quantize writes it."""
    _, h, _ = _helpers()
    p = prefix
    nodes = [
        h.make_node("ReduceMin", [x], [p + "mn"], keepdims=0),
        h.make_node("ReduceMax", [x], [p + "mx"], keepdims=0),
        h.make_node("Min", [p + "mn", "zero"], [p + "lo"]),
        h.make_node("Max", [p + "mx", "zero"], [p + "hi"]),
        h.make_node("Sub", [p + "hi", p + "lo"], [p + "range"]),
        h.make_node("Div", [p + "range", "qmax"], [p + "s255"]),
        h.make_node("Sign", [p + "range"], [p + "nonempty"]),
        h.make_node("Sub", ["one", p + "nonempty"], [p + "empty"]),
        h.make_node("Add", [p + "s255", p + "empty"], [p + "scale"]),
        h.make_node("Div", [p + "lo", p + "scale"], [p + "lo_s"]),
        h.make_node("Sub", ["zero", p + "lo_s"], [p + "zpf"]),
        h.make_node("Clip", [p + "zpf", "zero", "qmax"], [p + "zpc"]),
        h.make_node("Round", [p + "zpc"], [p + "zpr"]),
        h.make_node("Cast", [p + "zpr"], [p + "zp"], to=2),
        h.make_node("QuantizeLinear", [x, p + "scale", p + "zp"], [p + "q"]),
    ]
    consts = {"zero": np.float32(0), "one": np.float32(1), "qmax": np.float32(255)}
    return nodes, consts, p + "q", p + "scale", p + "zp"


def _float_quant(x, scale, zpf, prefix):
    """x quantized as QuantizeLinear does, in float: Clip(Round(x / scale) + zp, 0, 255), and
    the same minus the zero point (`zpf`: the zero point as a float)."""
    T, h, _ = _helpers()
    p = prefix
    nodes = [
        h.make_node("Identity", [zpf], [p + "zpf"]),
        h.make_node("Div", [x, scale], [p + "xs"]),
        h.make_node("Round", [p + "xs"], [p + "xr"]),
        h.make_node("Add", [p + "xr", p + "zpf"], [p + "xz"]),
        h.make_node("Clip", [p + "xz", "zero", "qmax"], [p + "qf"]),
        h.make_node("Sub", [p + "qf", p + "zpf"], [p + "qc"]),
    ]
    return nodes, p + "qf", p + "qc"


def _float_forms(models, x, xc):
    T, h, _ = _helpers()
    ins, outs = _io([1, 8, K], [[1, 8, N]])
    dec, consts, _, s, zp = _decomposed("x", "d_")
    dec = dec[:-2]  # the zero point's Cast and the QuantizeLinear
    fq, qf, qc = _float_quant("x", s, "d_zpr", "f_")  # the zero point before its Cast to uint8
    scale = [h.make_node("Mul", [s, "ws"], ["ss"]), h.make_node("Mul", ["accf", "ss"], ["out0"])]
    casts = [
        h.make_node("Cast", ["d_zpr"], [zp], to=T.UINT8),
        h.make_node("Cast", [qf], ["q8"], to=T.UINT8),
        h.make_node("Cast", ["q8"], ["q8f"], to=T.FLOAT),
        h.make_node("Cast", [zp], ["zp8f"], to=T.FLOAT),
        h.make_node("Sub", ["q8f", "zp8f"], ["q8c"]),
        h.make_node("MatMul", ["q8c", "Wf"], ["acc_f"]),
        h.make_node("Cast", ["acc_f"], ["acc"], to=T.INT32),
        h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
    ]
    finits = {**consts, "Wf": W.astype(np.float32), "ws": WSCALE}
    models["dq_float_casts"] = (_model("dq_float_casts", [*dec, *fq, *casts, *scale], ins, outs, finits), x)
    fused = [h.make_node("MatMul", [qc, "Wf"], ["accf"])]
    models["dq_float_fused"] = (_model("dq_float_fused", [*dec, *fq, *fused, *scale], ins, outs, finits), x)
    ins, outs = _io([1, 4, 8, 8], [[1, 8, 8, 8]])
    conv = [h.make_node("Conv", [qc, "CWf"], ["accf"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])]
    cinits = {**consts, "CWf": CW.astype(np.float32), "ws": WSCALE}
    models["dq_float_fused_conv"] = (_model("dq_float_fused_conv", [*dec, *fq, *conv, *scale], ins, outs, cinits), xc)


def write_models():
    import onnxruntime as ort

    T, h, _ = _helpers()
    x = RNG.standard_normal((1, 8, K)).astype(np.float32)
    xi = RNG.integers(0, 256, (1, 8, K)).astype(np.float32)
    xc = RNG.standard_normal((1, 4, 8, 8)).astype(np.float32)
    xci = RNG.integers(0, 256, (1, 4, 8, 8)).astype(np.float32)
    wzp = {"W": W, "wzp": np.int8(0), "ws": WSCALE}
    tail = [
        h.make_node("Cast", ["acc"], ["accf"], to=T.FLOAT),
        h.make_node("Mul", ["s", "ws"], ["ss"]),
        h.make_node("Mul", ["accf", "ss"], ["out0"]),
    ]
    dql = h.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "zp"])
    models = {}

    ins, _ = _io([1, 8, K], [])
    outs = [
        h.make_tensor_value_info("out0", T.FLOAT, [1, 8, K]),
        h.make_tensor_value_info("out1", T.FLOAT, []),
        h.make_tensor_value_info("out2", T.FLOAT, []),
    ]
    casts = [h.make_node("Cast", ["q"], ["out0"], to=T.FLOAT), h.make_node("Identity", ["s"], ["out1"])]
    casts.append(h.make_node("Cast", ["zp"], ["out2"], to=T.FLOAT))
    models["dq_dql"] = (_model("dq_dql", [dql, *casts], ins, outs, {}), x)

    ins, outs = _io([1, 8, K], [[1, 8, N]])
    mmi = h.make_node("MatMulInteger", ["q", "W", "zp", "wzp"], ["acc"])
    models["dq_dql_matmulinteger"] = (_model("dq_dql_matmulinteger", [dql, mmi, *tail], ins, outs, wzp), x)

    ins, outs = _io([1, 4, 8, 8], [[1, 8, 8, 8]])
    conv = h.make_node("ConvInteger", ["q", "CW", "zp", "wzp"], ["acc"], pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    cinits = {"CW": CW, "wzp": np.int8(0), "ws": WSCALE}
    models["dq_dql_convinteger"] = (_model("dq_dql_convinteger", [dql, conv, *tail], ins, outs, cinits), xc)

    ins, outs = _io([1, 8, K], [[1, 8, N]])
    alone = [
        h.make_node("Cast", ["x"], ["q"], to=T.UINT8),
        h.make_node("MatMulInteger", ["q", "W", "azp", "wzp"], ["acc"]),
        h.make_node("Cast", ["acc"], ["out0"], to=T.FLOAT),
    ]
    models["dq_matmulinteger"] = (_model("dq_matmulinteger", alone, ins, outs, {**wzp, "azp": np.uint8(100)}), xi)

    ins, outs = _io([1, 4, 8, 8], [[1, 8, 8, 8]])
    alone = [
        h.make_node("Cast", ["x"], ["q"], to=T.UINT8),
        h.make_node("ConvInteger", ["q", "CW", "azp", "wzp"], ["acc"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        h.make_node("Cast", ["acc"], ["out0"], to=T.FLOAT),
    ]
    cinits = {"CW": CW, "wzp": np.int8(0), "azp": np.uint8(100)}
    models["dq_convinteger"] = (_model("dq_convinteger", alone, ins, outs, cinits), xci)

    dec, consts, q, s, zp = _decomposed("x", "d_")
    ins, outs = _io([1, 8, K], [[1, 8, N]])
    mmi = h.make_node("MatMulInteger", [q, "W", zp, "wzp"], ["acc"])
    tail_d = [h.make_node("Identity", [s], ["s"]), *tail]
    models["dq_decomposed_mmi"] = (_model("dq_decomposed_mmi", [*dec, mmi, *tail_d], ins, outs, {**wzp, **consts}), x)

    as_float = [
        h.make_node("Cast", [q], ["qf"], to=T.FLOAT),
        h.make_node("Cast", [zp], ["zpf"], to=T.FLOAT),
        h.make_node("Sub", ["qf", "zpf"], ["qc"]),
        h.make_node("MatMul", ["qc", "Wf"], ["accf"]),
    ]
    finits = {**consts, "Wf": W.astype(np.float32), "ws": WSCALE}
    nodes = [*dec, *as_float, h.make_node("Identity", [s], ["s"]), *tail[1:]]
    models["dq_decomposed_float"] = (_model("dq_decomposed_float", nodes, ins, outs, finits), x)

    as_int = [
        h.make_node("Cast", [q], ["qi"], to=T.INT32),
        h.make_node("Cast", [zp], ["zpi"], to=T.INT32),
        h.make_node("Sub", ["qi", "zpi"], ["qc"]),
        h.make_node("MatMul", ["qc", "Wi"], ["acc"]),
    ]
    iinits = {**consts, "Wi": W.astype(np.int32), "ws": WSCALE}
    nodes = [*dec, *as_int, h.make_node("Identity", [s], ["s"]), *tail]
    models["dq_decomposed_int32"] = (_model("dq_decomposed_int32", nodes, ins, outs, iinits), x)

    _float_forms(models, x, xc)
    for name, (model, feed) in models.items():
        np.savez(f"{name}.inputs.npz", x=feed)
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        got = sess.run(None, {"x": feed})
        np.savez(f"{name}.ref.npz", **{f"out{i}": g for i, g in enumerate(got)})
        print(name, sorted({n.op_type for n in model.graph.node}))


def compare(out_prefixes):
    names = sorted(p.name[: -len(".ref.npz")] for p in Path(".").glob("*.ref.npz"))
    for prefix in out_prefixes:
        for name in names:
            out = Path(f"{prefix}-{name}")
            if not out.exists():
                continue
            result = json.loads((out / "result.json").read_text()) if (out / "result.json").exists() else {}
            line = f"{prefix} {name}: {result.get('status', 'no result (crashed)')} {result.get('stage', '')}"
            if result.get("status") == "ok":
                ref = np.load(f"{name}.ref.npz")
                with np.load(out / "outputs.npz") as got:
                    errs = []
                    for key in ref.files:
                        g, r = got[key].astype(np.float64), ref[key].astype(np.float64)
                        if g.shape != r.shape and g.ndim == 4:
                            g = g.transpose(0, 3, 1, 2)
                        errs.append(f"{key} {np.abs(g.reshape(r.shape) - r).max():.3g}")
                line += " max abs error vs onnxruntime: " + ", ".join(errs)
                line += f" (output range {np.abs(ref['out0']).max():.3g})"
            else:
                line += " " + result.get("message", "")[:300]
            print(line)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        compare(sys.argv[2:])
    else:
        write_models()
