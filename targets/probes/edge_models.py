"""Small models behind the rknn2 and nncase-k210 facts: each one shows
one fact on the real backend. Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current
directory, the corpus layout tests/backends/harness.py reads, so the harness runs them on a
backend before and after --target and compares with onnxruntime:

    mkdir /tmp/edge && cd /tmp/edge && python targets/probes/edge_models.py
    python tests/backends/harness.py --backends rknn2 --corpus /tmp/edge --out /tmp/edge/out \\
        --models sc_const_after_matmul,sc_const_after_add,...

rknn2 (rknn-toolkit2 2.5, rk3588 simulator):
  sc_const_after_{matmul,gemm,conv}  ScatterND, constant indices, data from MatMul/Gemm/Conv
  sc_const_after_add                 the same after an Add (control)
  sc_runtime_after_matmul            runtime indices after a MatMul (control)
  out_copy_of_output                 outputs y and Identity(y)
  out_copy_of_input                  outputs Relu(x) and Identity(x)
  out_constant                       outputs Relu(x) and a constant
  if_constant                        If on a constant condition
nncase-k210 (nncase 1.9):
  reducesum_axes_input13             ReduceSum-13 with axes as a (constant) input
  reducesum_axes_attr11              ReduceSum-11 with axes as an attribute (control)
  fp16_compute                       Cast to float16, Relu and Mul in float16, Cast back
  lstm_{forwa,bidir}[_init]_b{1,2}   LSTM forward/bidirectional, with/without initial states, batch 1/2
  rnn_{gru,lstm}_{forwa,bidir}_{out,mm}  GRU/LSTM at batch 1, Y as the graph output (out) or
                                     consumed as exporters write it (mm: the directions merged
                                     by Squeeze or Transpose+Reshape, then a MatMul)
"""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)


def mk(name, nodes, inputs, outputs, inits=(), opset=16, ir=8):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")
    feeds = {}
    for i in inputs:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        elem = i.type.tensor_type.elem_type
        if elem == T.INT64:
            feeds[i.name] = np.array([[1], [3], [4]], np.int64)
        else:
            feeds[i.name] = rng.standard_normal(dims).astype(np.float32)
    np.savez(f"{name}.inputs.npz", **feeds)


V = h.make_tensor_value_info
C = lambda n, a: nh.from_array(np.asarray(a), n)  # noqa: E731
W8 = C("w", rng.standard_normal((8, 8)).astype(np.float32))
ROWS = C("rows", np.array([[0], [2], [5]], np.int64))
x68, v38, y68 = V("x", T.FLOAT, [6, 8]), V("v", T.FLOAT, [3, 8]), V("y", T.FLOAT, [6, 8])

# ---------------------------------------------------------------- rknn2: ScatterND
mk(
    "sc_const_after_matmul",
    [h.make_node("MatMul", ["x", "w"], ["h"]), h.make_node("ScatterND", ["h", "rows", "v"], ["y"])],
    [x68, v38],
    [y68],
    [W8, ROWS],
)
mk(
    "sc_const_after_gemm",
    [
        h.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
        h.make_node("ScatterND", ["h", "rows", "v"], ["y"]),
    ],
    [x68, v38],
    [y68],
    [W8, C("b", rng.standard_normal(8).astype(np.float32)), ROWS],
)
mk(
    "sc_const_after_conv",
    [
        h.make_node("Conv", ["x", "w"], ["h"]),
        h.make_node("ScatterND", ["h", "idx", "v"], ["y"]),
    ],
    [V("x", T.FLOAT, [1, 4, 8, 8]), V("v", T.FLOAT, [2, 8, 8])],
    [V("y", T.FLOAT, [1, 4, 8, 8])],
    [C("w", rng.standard_normal((4, 4, 1, 1)).astype(np.float32)), C("idx", np.array([[0, 1], [0, 3]], np.int64))],
)
mk(
    "sc_const_after_add",
    [h.make_node("Add", ["x", "b"], ["h"]), h.make_node("ScatterND", ["h", "rows", "v"], ["y"])],
    [x68, v38],
    [y68],
    [C("b", rng.standard_normal(8).astype(np.float32)), ROWS],
)
mk(
    "sc_runtime_after_matmul",
    [h.make_node("MatMul", ["x", "w"], ["h"]), h.make_node("ScatterND", ["h", "idx", "v"], ["y"])],
    [x68, V("idx", T.INT64, [3, 1]), v38],
    [y68],
    [W8],
)

# ---------------------------------------------------------------- rknn2: graph outputs
x4 = V("x", T.FLOAT, [1, 4, 8, 8])
y4, z4 = V("y", T.FLOAT, [1, 4, 8, 8]), V("z", T.FLOAT, [1, 4, 8, 8])
mk(
    "out_copy_of_output",
    [h.make_node("Relu", ["x"], ["y"]), h.make_node("Identity", ["y"], ["z"])],
    [x4],
    [y4, z4],
)
mk(
    "out_copy_of_input",
    [h.make_node("Relu", ["x"], ["y"]), h.make_node("Identity", ["x"], ["z"])],
    [x4],
    [y4, z4],
)
mk(
    "out_constant",
    [h.make_node("Relu", ["x"], ["y"]), h.make_node("Constant", [], ["z"], value=C("c", np.ones(4, np.float32)))],
    [x4],
    [y4, V("z", T.FLOAT, [4])],
)
then_g = h.make_graph([h.make_node("Relu", ["x"], ["t"])], "then", [], [V("t", T.FLOAT, [1, 4, 8, 8])])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"])], "else", [], [V("e", T.FLOAT, [1, 4, 8, 8])])
mk(
    "if_constant",
    [h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
    [x4],
    [y4],
    [C("c", np.array(True))],
)

# ---------------------------------------------------------------- nncase-k210
mk(
    "reducesum_axes_input13",
    [h.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=1)],
    [x4],
    [V("y", T.FLOAT, [1, 4, 8, 1])],
    [C("a", np.array([-1], np.int64))],
    opset=13,
    ir=7,
)
mk(
    "reducesum_axes_attr11",
    [h.make_node("ReduceSum", ["x"], ["y"], keepdims=1, axes=[-1])],
    [x4],
    [V("y", T.FLOAT, [1, 4, 8, 1])],
    opset=11,
    ir=7,
)
mk(
    "fp16_compute",
    [
        h.make_node("Cast", ["x"], ["xh"], to=T.FLOAT16),
        h.make_node("Relu", ["xh"], ["r"]),
        h.make_node("Mul", ["r", "s"], ["m"]),
        h.make_node("Cast", ["m"], ["y"], to=T.FLOAT),
    ],
    [x4],
    [y4],
    [C("s", np.array([0.5], np.float16))],
    opset=13,
    ir=7,
)

# ---------------------------------------------------------------- nncase-k210: LSTM
# crnn_dynamic_w_op13's BiLSTM (zero initial states from ConstantOfShape, folded by --target;
# batch 2), in each form: lstm_{forwa,bidir}[_init]_b{1,2}.
for direction, dirs in (("forward", 1), ("bidirectional", 2)):
    for init in (False, True):
        for batch in (1, 2):
            ins = ["x", "W", "R", "B", "", "h0", "c0"] if init else ["x", "W", "R", "B"]
            inits = [
                C("W", rng.standard_normal((dirs, 32, 6)).astype(np.float32) * 0.3),
                C("R", rng.standard_normal((dirs, 32, 8)).astype(np.float32) * 0.3),
                C("B", rng.standard_normal((dirs, 64)).astype(np.float32) * 0.1),
            ]
            if init:
                inits += [
                    C("h0", np.zeros((dirs, batch, 8), np.float32)),
                    C("c0", np.zeros((dirs, batch, 8), np.float32)),
                ]
            mk(
                f"lstm_{direction[:5]}{'_init' if init else ''}_b{batch}",
                [h.make_node("LSTM", ins, ["y"], direction=direction, hidden_size=8)],
                [V("x", T.FLOAT, [5, batch, 6])],
                [V("y", T.FLOAT, [5, dirs, batch, 8])],
                inits,
                opset=13,
                ir=7,
            )

# ---------------------------------------------------------------- nncase-k210: GRU / LSTM consumers
# crnn_op13_b1 (tests/backends/batch1_corpus.py: a BiGRU, its directions merged by
# Transpose+Reshape, then Linear) runs wrong after --target; Y consumed the way torch exports
# it, for each cell and direction: rnn_{gru,lstm}_{forwa,bidir}_{out,mm}.
for cell, gates in (("GRU", 3), ("LSTM", 4)):
    for direction, dirs in (("forward", 1), ("bidirectional", 2)):
        inits = [
            C("W", rng.standard_normal((dirs, gates * 16, 32)).astype(np.float32) * 0.3),
            C("R", rng.standard_normal((dirs, gates * 16, 16)).astype(np.float32) * 0.3),
            C("B", rng.standard_normal((dirs, 2 * gates * 16)).astype(np.float32) * 0.1),
        ]
        attrs = {"hidden_size": 16, "direction": direction}
        if cell == "GRU":
            attrs["linear_before_reset"] = 1
        rnn = h.make_node(cell, ["x", "W", "R", "B"], ["Y"], **attrs)
        name = f"rnn_{cell.lower()}_{direction[:5]}"
        mk(f"{name}_out", [rnn], [V("x", T.FLOAT, [24, 1, 32])], [V("Y", T.FLOAT, [24, dirs, 1, 16])], inits, 13, 7)
        if dirs == 1:
            merge = [h.make_node("Squeeze", ["Y", "axis1"], ["m"])]
            extra = [C("axis1", np.array([1], np.int64))]
        else:
            merge = [
                h.make_node("Transpose", ["Y"], ["t"], perm=[0, 2, 1, 3]),
                h.make_node("Reshape", ["t", "shape"], ["m"]),
            ]
            extra = [C("shape", np.array([24, 1, 32], np.int64))]
        fc = C("fc", rng.standard_normal((dirs * 16, 12)).astype(np.float32))
        mk(
            f"{name}_mm",
            [rnn, *merge, h.make_node("MatMul", ["m", "fc"], ["y"])],
            [V("x", T.FLOAT, [24, 1, 32])],
            [V("y", T.FLOAT, [24, 1, 12])],
            [*inits, *extra, fc],
            13,
            7,
        )
