"""OpenVINO's low-precision transformations on an Add or Mul whose two inputs are both
DequantizeLinear outputs, one of them a constant's (an int8 weight, a bias or a mask
quantized by quantize_static), beside the forms around it: both activations, the
constant's DequantizeLinear folded to float (fold-qdq(weights=true)), the constant at the
activation's rank, and a float constant quantized in the graph (Q -> DQ, as QAT exports
and quantize_static write a bias, a norm weight or a mask). Each model runs with OpenVINO's own python (read_model + compile_model
on CPU) against onnxruntime's outputs (NAME.ref.npz, written here):

    python targets/probes/ov_qdq_binary.py DIR
    .backends/openvino/venv/bin/python targets/probes/ov_qdq_binary.py --run DIR/*.onnx

The quantized corpus's decoder (Add of the scores' and the causal mask's DequantizeLinear),
QAT encoder (a bias's) and QAT decoder (an RMSNorm weight's, Mul) were refused so:
'[AddTransformation] ... CALLBACK HAS THROWN: Check 'index < m_inputs.size()' failed'.
ov_qdq_binary.txt holds the results for OpenVINO 2026.4.1."""

import sys
from pathlib import Path

import numpy as np

X = np.random.default_rng(0).standard_normal((1, 2, 8, 8)).astype(np.float32)


def _models():
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    rng = np.random.default_rng(1)
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 2, 8, 8])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 2, 8, 8])
    act = [
        h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        h.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
    ]
    base = [h.make_tensor("s", T.FLOAT, [], [0.03]), h.make_tensor("z", T.INT8, [], [0])]

    def const_dq(shape):
        w = h.make_tensor("w", T.INT8, shape, rng.integers(-100, 100, shape).ravel().tolist())
        inits = [w, h.make_tensor("ws", T.FLOAT, [], [0.02]), h.make_tensor("wz", T.INT8, [], [0])]
        return [h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"])], inits

    for op in ("Add", "Mul"):
        for rank_name, shape in (("vector", [8]), ("matrix", [8, 8]), ("same_rank", [1, 2, 8, 8])):
            nodes, inits = const_dq(shape)
            yield (
                f"{op.lower()}_dq_act_dq_const_{rank_name}",
                act + nodes + [h.make_node(op, ["d", "wd"], ["y"])],
                base + inits,
                [x],
                [y],
            )
        # a float constant quantized in the graph, Q -> DQ (a QAT bias or weight, a mask)
        for rank_name, shape in (("vector", [8]), ("matrix", [8, 8]), ("same_rank", [1, 2, 8, 8])):
            wf = (rng.integers(-100, 100, shape) * 0.02).astype(np.float32)
            qdq = [
                h.make_node("QuantizeLinear", ["wf", "ws", "wz"], ["wq"]),
                h.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"]),
            ]
            inits = [
                nh.from_array(wf, "wf"),
                h.make_tensor("ws", T.FLOAT, [], [0.02]),
                h.make_tensor("wz", T.INT8, [], [0]),
            ]
            yield (
                f"{op.lower()}_dq_act_qdq_const_{rank_name}",
                act + qdq + [h.make_node(op, ["d", "wd"], ["y"])],
                base + inits,
                [x],
                [y],
            )
        # the constant's DequantizeLinear folded to float (what fold-qdq(weights=true) writes)
        w = (rng.integers(-100, 100, [8, 8]) * 0.02).astype(np.float32)
        yield (
            f"{op.lower()}_dq_act_float_const_matrix",
            act + [h.make_node(op, ["d", "wf"], ["y"])],
            base + [nh.from_array(w, "wf")],
            [x],
            [y],
        )
        # two activations, each quantized
        act2 = [
            h.make_node("QuantizeLinear", ["x2", "s", "z"], ["q2"]),
            h.make_node("DequantizeLinear", ["q2", "s", "z"], ["d2"]),
        ]
        yield (
            f"{op.lower()}_dq_act_dq_act",
            act + act2 + [h.make_node(op, ["d", "d2"], ["y"])],
            base,
            [
                x,
                h.make_tensor_value_info("x2", T.FLOAT, [1, 2, 8, 8]),
            ],
            [y],
        )


def write(folder: Path):
    import onnx
    import onnxruntime as ort
    from onnx import helper as h

    folder.mkdir(parents=True, exist_ok=True)
    for name, nodes, inits, inputs, outputs in _models():
        model = h.make_model(
            h.make_graph(nodes, name, inputs, outputs, inits), opset_imports=[h.make_opsetid("", 13)], ir_version=8
        )
        onnx.checker.check_model(model, full_check=True)
        path = folder / f"{name}.onnx"
        onnx.save(model, str(path))
        feeds = {i.name: X for i in inputs}
        ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
        np.savez(folder / f"{name}.ref.npz", y=ref)


def run(paths):
    import openvino as ov

    core = ov.Core()
    print("openvino", ov.__version__)
    for p in paths:
        name = Path(p).name
        try:
            model = core.read_model(p)
            compiled = core.compile_model(model, "CPU")
            y = compiled([X] * len(model.inputs))[compiled.output(0)]
            ref = np.load(p.replace(".onnx", ".ref.npz"))["y"]
            print(f"{name} OK, max error {float(np.abs(y.astype(np.float64) - ref).max()):.3g}")
        except Exception as e:  # noqa: BLE001 (a refusal is the probe's result)
            text = " ".join(str(e).split())
            at = text.find("[")
            print(name, "FAIL", text[at if at >= 0 else 0 :][:200])


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        run(sys.argv[2:])
    else:
        write(Path(sys.argv[1]))
