"""Small models behind the control-flow lowerings (if-to-where, unroll-loop): each shows on
a real backend that the original form is refused and the written form runs and matches.
Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the corpus layout
tests/backends/harness.py reads, so the harness runs them as they are and after --target
and compares with onnxruntime:

    mkdir /tmp/cf && cd /tmp/cf && python $REPO/targets/probes/control_flow_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py \\
        --backends rknn2,nncase-k210 --corpus /tmp/cf --out /tmp/cf/out

  if_runtime_pos, if_runtime_neg  If(ReduceSum(x) > 0): relu(x) * 2, else tanh(x) - 1;
                                  x [1,4,8,8], its sum positive / negative (each branch taken)
  loop_const3                     Loop with trip count 3: h = tanh(h + x) * (i + 1), each step's
                                  h scanned; x [2,8]
  slice_reverse                   x[:, ::-1] (Slice, step -1 on axis 1) then Relu; x [1,8,4]
  slice_step2                     x[:, 0::2] (Slice, step 2 on axis 1, swin's patch merging) then Relu

Recorded results: control_flow_models.txt.
"""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
V = h.make_tensor_value_info


def C(name, a):
    return nh.from_array(np.asarray(a), name)


def mk(name, nodes, inputs, outputs, inits, feeds, opset=16, ir=8):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")
    np.savez(f"{name}.inputs.npz", **feeds)


def if_runtime(name, sign):
    x = V("x", T.FLOAT, [1, 4, 8, 8])
    then_g = h.make_graph(
        [h.make_node("Relu", ["x"], ["r"]), h.make_node("Mul", ["r", "two"], ["a"])],
        "then",
        [],
        [V("a", T.FLOAT, [1, 4, 8, 8])],
    )
    else_g = h.make_graph(
        [h.make_node("Tanh", ["x"], ["t"]), h.make_node("Sub", ["t", "one"], ["b"])],
        "else",
        [],
        [V("b", T.FLOAT, [1, 4, 8, 8])],
    )
    nodes = [
        h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        h.make_node("Greater", ["s", "zero"], ["c"]),
        h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g),
    ]
    inits = [C("zero", np.float32(0)), C("one", np.float32(1)), C("two", np.float32(2))]
    feed = (np.abs(rng.standard_normal((1, 4, 8, 8))) * sign).astype(np.float32)
    mk(name, nodes, [x], [V("y", T.FLOAT, [1, 4, 8, 8])], inits, {"x": feed})


if_runtime("if_runtime_pos", 1.0)
if_runtime("if_runtime_neg", -1.0)

body = h.make_graph(
    [
        h.make_node("Identity", ["cin"], ["cout"]),
        h.make_node("Add", ["h", "x"], ["s"]),
        h.make_node("Tanh", ["s"], ["t"]),
        h.make_node("Add", ["i", "one_i"], ["i1"]),
        h.make_node("Cast", ["i1"], ["f"], to=T.FLOAT),
        h.make_node("Mul", ["t", "f"], ["h2"]),
        h.make_node("Identity", ["h2"], ["e"]),
    ],
    "body",
    [V("i", T.INT64, []), V("cin", T.BOOL, []), V("h", T.FLOAT, [2, 8])],
    [V("cout", T.BOOL, []), V("h2", T.FLOAT, [2, 8]), V("e", T.FLOAT, [2, 8])],
    [C("one_i", np.int64(1))],
)
mk(
    "loop_const3",
    [h.make_node("Loop", ["n", "c", "h0"], ["y", "ys"], body=body)],
    [V("x", T.FLOAT, [2, 8])],
    [V("y", T.FLOAT, [2, 8]), V("ys", T.FLOAT, [3, 2, 8])],
    [C("n", np.int64(3)), C("c", np.bool_(True)), C("h0", np.zeros((2, 8), np.float32))],
    {"x": rng.standard_normal((2, 8)).astype(np.float32)},
)

mk(
    "slice_reverse",
    [
        h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["r"]),
        h.make_node("Relu", ["r"], ["y"]),
    ],
    [V("x", T.FLOAT, [1, 8, 4])],
    [V("y", T.FLOAT, [1, 8, 4])],
    [
        C("starts", np.array([-1], np.int64)),
        C("ends", np.array([np.iinfo(np.int64).min], np.int64)),
        C("axes", np.array([1], np.int64)),
        C("steps", np.array([-1], np.int64)),
    ],
    {"x": rng.standard_normal((1, 8, 4)).astype(np.float32)},
)

mk(
    "slice_step2",
    [
        h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["r"]),
        h.make_node("Relu", ["r"], ["y"]),
    ],
    [V("x", T.FLOAT, [1, 8, 4])],
    [V("y", T.FLOAT, [1, 4, 4])],
    [
        C("starts", np.array([0], np.int64)),
        C("ends", np.array([8], np.int64)),
        C("axes", np.array([1], np.int64)),
        C("steps", np.array([2], np.int64)),
    ],
    {"x": rng.standard_normal((1, 8, 4)).astype(np.float32)},
)
