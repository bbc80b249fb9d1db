"""Opset-21 forms on OpenVINO: int4/uint4 DequantizeLinear (per-tensor, per-axis, blocked),
int8 blocked, activation Q -> DQ, and the ops whose version 21 is new (Cast to int4, Reshape,
Transpose, Squeeze/Unsqueeze, Flatten, Pad, Shape, Size, Identity, ConstantOfShape,
CastLike, GroupNormalization-21, QLinearMatMul-21), each a small model beside a MatMul or an
activation, run with OpenVINO's own python (read_model + compile_model on CPU) against
onnxruntime's outputs (NAME.ref.npz, written here):

    python targets/probes/opset21_models.py DIR                          # writes DIR/*.onnx
    .backends/openvino/venv/bin/python targets/probes/opset21_models.py --run DIR/*.onnx

Two int8 models at opset 13 (*_op13) show OpenVINO's own error on a quantized weight,
whatever the opset. opset21_models.txt holds the results for OpenVINO 2026.4.1."""

import sys
from pathlib import Path

import numpy as np

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 32)).astype(np.float32)


def _models():
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    x = h.make_tensor_value_info("x", T.FLOAT, [2, 32])
    w_int = RNG.integers(-8, 8, (32, 16))
    w_uint = RNG.integers(0, 16, (32, 16))

    def dq_matmul(name, wtype, values, scale_shape, axis=None, block=None, zero=None):
        scale = nh.from_array((RNG.random(scale_shape) * 0.1 + 0.01).astype(np.float32), "s")
        w = h.make_tensor("w", wtype, [32, 16], values.ravel().tolist())
        inputs, inits = ["w", "s"], [w, scale]
        if zero is not None:
            inits.append(h.make_tensor("z", wtype, scale_shape, [zero] * int(np.prod(scale_shape))))
            inputs.append("z")
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if block is not None:
            attrs["block_size"] = block
        nodes = [h.make_node("DequantizeLinear", inputs, ["wf"], **attrs), h.make_node("MatMul", ["x", "wf"], ["y"])]
        return name, nodes, inits, [x], [h.make_tensor_value_info("y", T.FLOAT, [2, 16])]

    yield dq_matmul("dq_int4_tensor", T.INT4, w_int, [])
    yield dq_matmul("dq_int4_axis", T.INT4, w_int, [16], axis=1)
    yield dq_matmul("dq_int4_block", T.INT4, w_int, [2, 16], axis=0, block=16)
    yield dq_matmul("dq_uint4_tensor_zp", T.UINT4, w_uint, [], zero=8)
    yield dq_matmul("dq_uint4_block_zp", T.UINT4, w_uint, [2, 16], axis=0, block=16, zero=8)
    yield dq_matmul("dq_int16_axis", T.INT16, RNG.integers(-3000, 3000, (32, 16)), [16], axis=1)
    yield dq_matmul("dq_uint16_tensor_zp", T.UINT16, RNG.integers(0, 6000, (32, 16)), [], zero=3000)
    yield dq_matmul("dq_int8_block", T.INT8, RNG.integers(-128, 128, (32, 16)), [2, 16], axis=0, block=16)
    yield dq_matmul("dq_int8_axis", T.INT8, RNG.integers(-128, 128, (32, 16)), [16], axis=1)
    # The same per-axis int8 form at opset 13: OpenVINO's own error on a quantized weight
    # (its CPU plugin quantizes the activations of a MatMul with compressed weights).
    yield dq_matmul("dq_int8_axis_op13", T.INT8, RNG.integers(-128, 128, (32, 16)), [16], axis=1)
    yield dq_matmul("dq_int8_tensor_op13", T.INT8, RNG.integers(-128, 128, (32, 16)), [])

    # Activation Q -> DQ (int8 and int4 per tensor), before a Relu.
    for qt, zp in ((T.INT8, 0), (T.UINT8, 128), (T.INT4, 0), (T.INT16, 0), (T.UINT16, 30000)):
        name = f"qdq_act_{T.DataType.Name(qt).lower()}"
        inits = [h.make_tensor("s", T.FLOAT, [], [0.05]), h.make_tensor("z", qt, [], [zp])]
        nodes = [
            h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
            h.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
            h.make_node("Relu", ["d"], ["y"]),
        ]
        yield name, nodes, inits, [x], [h.make_tensor_value_info("y", T.FLOAT, [2, 32])]

    shape = h.make_tensor("shape", T.INT64, [3], [2, 4, 8])
    f = lambda n, s: h.make_tensor_value_info(n, T.FLOAT, s)  # noqa: E731
    yield (
        "reshape_transpose",
        [
            h.make_node("Reshape", ["x", "shape"], ["r"]),
            h.make_node("Transpose", ["r"], ["y"], perm=[0, 2, 1]),
        ],
        [shape],
        [x],
        [f("y", [2, 8, 4])],
    )
    axes = h.make_tensor("axes", T.INT64, [1], [1])
    yield (
        "unsqueeze_squeeze_flatten",
        [
            h.make_node("Unsqueeze", ["x", "axes"], ["u"]),
            h.make_node("Squeeze", ["u", "axes"], ["s"]),
            h.make_node("Flatten", ["s"], ["y"], axis=1),
        ],
        [axes],
        [x],
        [f("y", [2, 32])],
    )
    pads = h.make_tensor("pads", T.INT64, [4], [0, 1, 0, 2])
    yield (
        "pad_identity",
        [
            h.make_node("Pad", ["x", "pads"], ["p"]),
            h.make_node("Identity", ["p"], ["y"]),
        ],
        [pads],
        [x],
        [f("y", [2, 35])],
    )
    yield (
        "shape_size_constantofshape",
        [
            h.make_node("Shape", ["x"], ["sh"]),
            h.make_node("ConstantOfShape", ["sh"], ["c"], value=h.make_tensor("v", T.FLOAT, [1], [2.0])),
            h.make_node("Size", ["x"], ["n"]),
            h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
            h.make_node("Mul", ["c", "x"], ["m"]),
            h.make_node("Add", ["m", "nf"], ["y"]),
        ],
        [],
        [x],
        [f("y", [2, 32])],
    )
    yield (
        "cast_int4_castlike",
        [
            h.make_node("Cast", ["x"], ["i"], to=T.INT4),
            h.make_node("CastLike", ["i", "x"], ["y"]),
        ],
        [],
        [x],
        [f("y", [2, 32])],
    )
    yield (
        "cast_float_castlike",
        [
            h.make_node("Cast", ["x"], ["i"], to=T.INT8),
            h.make_node("CastLike", ["i", "x"], ["y"]),
        ],
        [],
        [x],
        [f("y", [2, 32])],
    )
    for stash in (1, None):
        attrs = {"num_groups": 2}
        if stash is not None:
            attrs["stash_type"] = stash
        yield (
            f"groupnorm21{'_stash' if stash else ''}",
            [
                h.make_node("Reshape", ["x", "shape4"], ["x4"]),
                h.make_node("GroupNormalization", ["x4", "gs", "gb"], ["y"], **attrs),
            ],
            [
                h.make_tensor("shape4", T.INT64, [4], [2, 8, 2, 2]),
                nh.from_array(RNG.standard_normal(8).astype(np.float32), "gs"),
                nh.from_array(RNG.standard_normal(8).astype(np.float32), "gb"),
            ],
            [x],
            [h.make_tensor_value_info("y", T.FLOAT, [2, 8, 2, 2])],
        )
    qw = h.make_tensor("qw", T.INT8, [32, 16], RNG.integers(-128, 128, (32, 16)).ravel().tolist())
    yield (
        "qlinearmatmul21",
        [
            h.make_node("QuantizeLinear", ["x", "as", "az"], ["qa"]),
            h.make_node("QLinearMatMul", ["qa", "as", "az", "qw", "ws", "wz", "ys", "yz"], ["qy"]),
            h.make_node("DequantizeLinear", ["qy", "ys", "yz"], ["y"]),
        ],
        [
            h.make_tensor("as", T.FLOAT, [], [0.03]),
            h.make_tensor("az", T.INT8, [], [0]),
            qw,
            h.make_tensor("ws", T.FLOAT, [], [0.01]),
            h.make_tensor("wz", T.INT8, [], [0]),
            h.make_tensor("ys", T.FLOAT, [], [0.05]),
            h.make_tensor("yz", T.INT8, [], [0]),
        ],
        [x],
        [h.make_tensor_value_info("y", T.FLOAT, [2, 16])],
    )


def write(folder: Path):
    import onnx
    import onnxruntime as ort
    from onnx import helper as h

    folder.mkdir(parents=True, exist_ok=True)
    for name, nodes, inits, inputs, outputs in _models():
        graph = h.make_graph(nodes, name, inputs, outputs, inits)
        opset = 13 if name.endswith("_op13") else 21
        model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=10 if opset == 21 else 8)
        onnx.checker.check_model(model, full_check=True)
        path = folder / f"{name}.onnx"
        onnx.save(model, str(path))
        ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": X})[0]
        np.savez(folder / f"{name}.ref.npz", y=ref)


def run(paths):
    import openvino as ov

    core = ov.Core()
    print("openvino", ov.__version__)
    for p in paths:
        name = Path(p).name
        try:
            compiled = core.compile_model(core.read_model(p), "CPU")
            y = compiled([X])[compiled.output(0)]
            ref = np.load(p.replace(".onnx", ".ref.npz"))["y"]
            err = float(np.abs(y.astype(np.float64) - ref).max())
            print(
                f"{name} OK, max error {err:.3g} ({err / max(float(np.abs(ref).max()), 1e-30):.2g} of the output's range)"
            )
        except Exception as e:  # noqa: BLE001 (a refusal is the probe's result)
            print(name, "FAIL", " ".join(str(e).split())[:240])


if __name__ == "__main__":
    if sys.argv[1] == "--run":
        run(sys.argv[2:])
    else:
        write(Path(sys.argv[1]))
