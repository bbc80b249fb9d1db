"""Small models behind the ncnn profile's facts (targets/ncnn.toml), each written as
NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the corpus layout
tests/backends/harness.py reads; the harness runs each on ncnn as it is and after
`--target ncnn`, and with --probe runs the blockers --target names (--allow-remaining) to
show whether ncnn fails without the fact:

    mkdir /tmp/ncnn-probe && cd /tmp/ncnn-probe && python $REPO/targets/probes/ncnn_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py --backends ncnn \\
        --corpus /tmp/ncnn-probe --out /tmp/ncnn-probe/out --probe

  extdata_matmul         x [1,8,32] @ W [32,64], W stored as external data (extdata_matmul.data)
  slice_rev_axis{1,2}    x [1,6,8][:, ::-1] / [:, :, ::-1] (Slice step -1 over the whole axis)
  slice_rev_part         x [1,6,8][:, 4:0:-1] (step -1 over part of the axis)
  slice_rev_w4d          x [1,3,8,8][..., ::-1] (a horizontal flip)
  slice_rev_const        x [1,6,8] + C[:, ::-1] (the reversed tensor is a constant)
  slice_step2            x [1,6,8][:, ::2]
  slice_step_neg2        x [1,6,8][:, ::-2]
  cast_i64_float         ids int64 [1,8] -> Cast float -> Mul 0.5
  cast_i64_bool          ids int64 [1,8] -> Cast bool -> Where(., x, 0)
  reducesum_axes_input13 ReduceSum-13 of x [1,5,32] over axis 2, axes as a constant input (keepdims 0)
  reducesum_axes_attr11  the same as ReduceSum-11 with axes as an attribute
  cmp_{greater,less,equal} Where(x > 0 / x < 0 / x == 0, x, 0) on x [1,6,8]
  cast_f16               Cast(Cast(x, float16), float)
  batch2_ln              LayerNorm(x [2,5,32]) (static batch 2, items independent)
  batch2_merge           x [2,5,32] -> Reshape [10,32] -> MatMul -> Reshape [2,5,16] (batch merged)
  batch2_transpose       x [2,5,32] -> Transpose [5,2,32] -> Relu -> Transpose back (batch moved)
  batch2_reduce0         ReduceMean(x [2,5,32], axis 0, keepdims) + x (a reduction over the batch)

Recorded results: ncnn_models.txt.
"""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)


def C(name, a):
    return nh.from_array(np.asarray(a), name)


def save(name, nodes, inputs, inits, feeds, opset=13, external=False):
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    g = h.make_graph(nodes, name, inputs, [y], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m, full_check=True)
    if external:
        onnx.save(m, f"{name}.onnx", save_as_external_data=True, location=f"{name}.data", size_threshold=0)
    else:
        onnx.save(m, f"{name}.onnx")
    np.savez(f"{name}.inputs.npz", **feeds)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def x_of(*shape):
    return h.make_tensor_value_info("x", T.FLOAT, list(shape))


def slice_model(name, starts, ends, axes, steps, shape=(1, 6, 8)):
    save(
        name,
        [h.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])],
        [x_of(*shape)],
        [
            C("s", np.array(starts, np.int64)),
            C("e", np.array(ends, np.int64)),
            C("a", np.array(axes, np.int64)),
            C("t", np.array(steps, np.int64)),
        ],
        {"x": f32(*shape)},
    )


INT_MIN = np.iinfo(np.int64).min
save(
    "extdata_matmul",
    [h.make_node("MatMul", ["x", "w"], ["y"])],
    [x_of(1, 8, 32)],
    [C("w", f32(32, 64))],
    {"x": f32(1, 8, 32)},
    external=True,
)
slice_model("slice_rev_axis1", [-1], [INT_MIN], [1], [-1])
slice_model("slice_rev_axis2", [-1], [INT_MIN], [2], [-1])
slice_model("slice_rev_part", [4], [0], [1], [-1])
slice_model("slice_rev_w4d", [-1], [INT_MIN], [3], [-1], shape=(1, 3, 8, 8))
save(
    "slice_rev_const",
    [h.make_node("Slice", ["c", "s", "e", "a", "t"], ["r"]), h.make_node("Add", ["x", "r"], ["y"])],
    [x_of(1, 6, 8)],
    [
        C("c", f32(1, 6, 8)),
        C("s", np.array([-1], np.int64)),
        C("e", np.array([INT_MIN], np.int64)),
        C("a", np.array([1], np.int64)),
        C("t", np.array([-1], np.int64)),
    ],
    {"x": f32(1, 6, 8)},
)
slice_model("slice_step2", [0], [6], [1], [2])
slice_model("slice_step_neg2", [-1], [INT_MIN], [1], [-2])
ids = h.make_tensor_value_info("ids", T.INT64, [1, 8])
save(
    "cast_i64_float",
    [h.make_node("Cast", ["ids"], ["f"], to=T.FLOAT), h.make_node("Mul", ["f", "half"], ["y"])],
    [ids],
    [C("half", np.float32(0.5))],
    {"ids": rng.integers(0, 5, (1, 8)).astype(np.int64)},
)
save(
    "cast_i64_bool",
    [h.make_node("Cast", ["ids"], ["b"], to=T.BOOL), h.make_node("Where", ["b", "x", "zero"], ["y"])],
    [ids, x_of(1, 8)],
    [C("zero", np.float32(0))],
    {"ids": rng.integers(0, 2, (1, 8)).astype(np.int64), "x": f32(1, 8)},
)
save(
    "reducesum_axes_input13",
    [h.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
    [x_of(1, 5, 32)],
    [C("axes", np.array([2], np.int64))],
    {"x": f32(1, 5, 32)},
)
save(
    "reducesum_axes_attr11",
    [h.make_node("ReduceSum", ["x"], ["y"], axes=[2], keepdims=0)],
    [x_of(1, 5, 32)],
    [],
    {"x": f32(1, 5, 32)},
    opset=11,
)
for op in ("Greater", "Less", "Equal"):
    save(
        "cmp_" + op.lower(),
        [h.make_node(op, ["x", "zero"], ["b"]), h.make_node("Where", ["b", "x", "zero"], ["y"])],
        [x_of(1, 6, 8)],
        [C("zero", np.float32(0))],
        {"x": f32(1, 6, 8)},
    )
save(
    "cast_f16",
    [h.make_node("Cast", ["x"], ["c"], to=T.FLOAT16), h.make_node("Cast", ["c"], ["y"], to=T.FLOAT)],
    [x_of(1, 6, 8)],
    [],
    {"x": f32(1, 6, 8)},
)
save(
    "batch2_ln",
    [h.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
    [x_of(2, 5, 32)],
    [C("g", f32(32)), C("b", f32(32))],
    {"x": f32(2, 5, 32)},
    opset=17,
)
save(
    "batch2_merge",
    [
        h.make_node("Reshape", ["x", "s1"], ["r"]),
        h.make_node("MatMul", ["r", "w"], ["m"]),
        h.make_node("Reshape", ["m", "s2"], ["y"]),
    ],
    [x_of(2, 5, 32)],
    [C("s1", np.array([10, 32], np.int64)), C("w", f32(32, 16)), C("s2", np.array([2, 5, 16], np.int64))],
    {"x": f32(2, 5, 32)},
)
save(
    "batch2_transpose",
    [
        h.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
        h.make_node("Relu", ["t"], ["r"]),
        h.make_node("Transpose", ["r"], ["y"], perm=[1, 0, 2]),
    ],
    [x_of(2, 5, 32)],
    [],
    {"x": f32(2, 5, 32)},
)
save(
    "batch2_reduce0",
    [h.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=1), h.make_node("Add", ["x", "m"], ["y"])],
    [x_of(2, 5, 32)],
    [],
    {"x": f32(2, 5, 32)},
)
