"""Single-op models for the ops nncase-k210.toml lists as missing from reading nncase's
importer source (opcode.def) rather than from a run: does nncase 1.9 refuse them, or run
them right? Also the reductions the list leaves out (ReduceSumSquare, ReduceLogSum,
ReduceLogSumExp), as controls. Writes NAME.onnx, NAME.inputs.npz (seed 0) and NAME.ref.npz
(onnxruntime's outputs) to the current directory; nncase_embedding.py (run with the nncase
venv's python, one model per run) runs each on nncase 1.9 (k210, simulator) and prints the
error per output. Results: nncase_listed_ops.txt.

    mkdir /tmp/ops && cd /tmp/ops && python $REPO/targets/probes/nncase_listed_ops.py
    for f in *.onnx; do $REPO/.backends/nncase-k210/venv/bin/python \\
        $REPO/targets/probes/nncase_embedding.py $f; done
"""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
V = h.make_tensor_value_info
SHAPE = [1, 4, 8, 8]


def mk(name, nodes, inputs, out_shape, inits=(), feeds=None, opset=13, out_type=T.FLOAT):
    g = h.make_graph(nodes, name, inputs, [V("y", out_type, out_shape)], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=7)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")
    given, feeds = feeds or {}, {}
    for i in inputs:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = given[i.name] if i.name in given else rng.standard_normal(dims).astype(np.float32)
    np.savez(f"{name}.inputs.npz", **feeds)
    s = ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"])
    np.savez(f"{name}.ref.npz", *s.run(None, feeds))


x = V("x", T.FLOAT, SHAPE)
x2 = V("x2", T.FLOAT, SHAPE)

# Reductions (opset 13: axes is an attribute for all but ReduceSum), over the channel axis
# (GRN's norm in ConvNeXt-V2 reduces the spatial axes: both are probed), keepdims.
for op in ("ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"):
    for tag, axes, shape in (("c", [1], [1, 1, 8, 8]), ("hw", [2, 3], [1, 4, 1, 1])):
        feeds = {"x": np.abs(rng.standard_normal(SHAPE)).astype(np.float32) + 0.5} if op == "ReduceLogSum" else None
        mk(f"{op}_{tag}", [h.make_node(op, ["x"], ["y"], axes=axes, keepdims=1)], [x], shape, feeds=feeds)
# ConvNeXt-V2's GRN as torch exports it: ReduceL2 over H, W then a mean over C and a Div.
mk(
    "ReduceL2_grn",
    [
        h.make_node("ReduceL2", ["x"], ["g"], axes=[2, 3], keepdims=1),
        h.make_node("ReduceMean", ["g"], ["m"], axes=[1], keepdims=1),
        h.make_node("Add", ["m", "eps"], ["d"]),
        h.make_node("Div", ["g", "d"], ["n"]),
        h.make_node("Mul", ["x", "n"], ["y"]),
    ],
    [x],
    SHAPE,
    [nh.from_array(np.array(1e-6, np.float32), "eps")],
)

# Element-wise ops of the list.
mk("Atan", [h.make_node("Atan", ["x"], ["y"])], [x], SHAPE)
mk(
    "Atanh",
    [h.make_node("Atanh", ["x"], ["y"])],
    [x],
    SHAPE,
    feeds={"x": rng.uniform(-0.9, 0.9, SHAPE).astype(np.float32)},
)
mk("Shrink", [h.make_node("Shrink", ["x"], ["y"], lambd=0.5, bias=0.1)], [x], SHAPE)
mk("Mean", [h.make_node("Mean", ["x", "x2"], ["y"])], [x, x2], SHAPE)
mk("GlobalLpPool", [h.make_node("GlobalLpPool", ["x"], ["y"], p=2)], [x], [1, 4, 1, 1])
mk("LpPool", [h.make_node("LpPool", ["x"], ["y"], p=2, kernel_shape=[2, 2], strides=[2, 2])], [x], [1, 4, 4, 4])
mk(
    "EyeLike",
    [h.make_node("EyeLike", ["x"], ["e"]), h.make_node("Add", ["x", "e"], ["y"])],
    [V("x", T.FLOAT, [8, 8])],
    [8, 8],
)
