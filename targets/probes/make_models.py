"""Single-op models behind the "measured here ... single-op models vs onnxruntime" facts in
targets/*.toml. Writes them to the current directory; run each backend's probe
(nncase_k210.py, rknn2.py, onnxruntime_old.py, openvino_probe.py) with that backend's
python on the files, then compare the saved outputs with onnxruntime (compare.py).
Input: x float32 [1, 4, 8, 8], standard normal, seed 0."""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def mk(name, nodes, inputs, outputs, inits=(), opset=13, ir=7):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")


X = lambda n, s, t=T.FLOAT: h.make_tensor_value_info(n, t, s)
x = X("x", [1, 4, 8, 8])
y = X("y", None)
C = lambda n, a: nh.from_array(np.array(a), n)
mk(
    "LayerNormalization17",
    [h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1)],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("s", np.ones(8, np.float32)), C("b", np.zeros(8, np.float32))],
    17,
    8,
)
mk(
    "ConvTranspose",
    [h.make_node("ConvTranspose", ["x", "w"], ["y"])],
    [x],
    [X("y", [1, 2, 10, 10])],
    [C("w", np.ones((4, 2, 3, 3), np.float32))],
)
mk("Erf", [h.make_node("Erf", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Reciprocal", [h.make_node("Reciprocal", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Neg", [h.make_node("Neg", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Abs", [h.make_node("Abs", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Sign", [h.make_node("Sign", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Round", [h.make_node("Round", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk(
    "IsNaN",
    [h.make_node("IsNaN", ["x"], ["m"]), h.make_node("Where", ["m", "z", "x"], ["y"])],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("z", np.zeros(1, np.float32))],
)
mk("CumSum", [h.make_node("CumSum", ["x", "a"], ["y"])], [x], [X("y", [1, 4, 8, 8])], [C("a", np.array(3, np.int64))])
mk(
    "TopK",
    [h.make_node("TopK", ["x", "k"], ["y", "i"], axis=-1)],
    [x],
    [X("y", [1, 4, 8, 3])],
    [C("k", np.array([3], np.int64))],
)
mk("Trilu", [h.make_node("Trilu", ["x"], ["y"], upper=1)], [x], [X("y", [1, 4, 8, 8])], opset=14)
mk(
    "Mod",
    [h.make_node("Mod", ["x", "d"], ["y"], fmod=1)],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("d", np.array([3.0], np.float32))],
)
mk(
    "Einsum",
    [h.make_node("Einsum", ["x", "x"], ["y"], equation="bchw,bcwk->bchk")],
    [x],
    [X("y", [1, 4, 8, 8])],
    opset=12,
)
mk(
    "GridSample",
    [h.make_node("GridSample", ["x", "g"], ["y"])],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("g", np.zeros((1, 8, 8, 2), np.float32))],
    opset=16,
    ir=8,
)
mk("NonZero", [h.make_node("NonZero", ["x"], ["y"])], [x], [X("y", [4, None], T.INT64)])
mk(
    "GatherND",
    [h.make_node("GatherND", ["x", "i"], ["y"])],
    [x],
    [X("y", [2, 8, 8])],
    [C("i", np.array([[0, 1], [0, 2]], np.int64))],
)
mk(
    "ScatterElements",
    [h.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=3)],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("i", np.zeros((1, 4, 8, 1), np.int64)), C("u", np.ones((1, 4, 8, 1), np.float32))],
)
mk(
    "ScatterND_add",
    [h.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction="add")],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("i", np.array([[0, 1]], np.int64)), C("u", np.ones((1, 8, 8), np.float32))],
    opset=16,
    ir=8,
)
mk(
    "ResizeCubic",
    [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic")],
    [x],
    [X("y", [1, 4, 16, 16])],
    [C("sc", np.array([1, 1, 2, 2], np.float32))],
)
mk(
    "ResizeLinear",
    [h.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear")],
    [x],
    [X("y", [1, 4, 16, 16])],
    [C("sc", np.array([1, 1, 2, 2], np.float32))],
)
mk("Softplus", [h.make_node("Softplus", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("HardSwish", [h.make_node("HardSwish", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])], opset=14)
mk("Sum", [h.make_node("Sum", ["x", "x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])
mk("Gelu20", [h.make_node("Gelu", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])], opset=20, ir=9)
mk(
    "InstanceNorm",
    [h.make_node("InstanceNormalization", ["x", "s", "b"], ["y"])],
    [x],
    [X("y", [1, 4, 8, 8])],
    [C("s", np.ones(4, np.float32)), C("b", np.zeros(4, np.float32))],
)
mk("Ceil", [h.make_node("Ceil", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])])

for mode in ["nearest", "linear", "cubic"]:
    for ctm in ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"]:
        kw = dict(mode=mode, coordinate_transformation_mode=ctm)
        if mode == "nearest":
            kw["nearest_mode"] = "floor"
        mk(
            f"R_{mode}_{ctm}",
            [h.make_node("Resize", ["x", "", "sc"], ["y"], **kw)],
            [x],
            [X("y", [1, 4, 16, 16])],
            [C("sc", np.array([1, 1, 2, 2], np.float32))],
        )
mk(
    "ReduceMean18",
    [h.make_node("ReduceMean", ["x", "a"], ["y"], keepdims=1)],
    [x],
    [X("y", [1, 4, 8, 1])],
    [C("a", np.array([-1], np.int64))],
    18,
    8,
)
mk(
    "Split18",
    [h.make_node("Split", ["x"], ["y", "z"], axis=1, num_outputs=2)],
    [x],
    [X("y", [1, 2, 8, 8]), X("z", [1, 2, 8, 8])],
    [],
    18,
    8,
)
mk("Relu19", [h.make_node("Relu", ["x"], ["y"])], [x], [X("y", [1, 4, 8, 8])], [], 19, 9)
