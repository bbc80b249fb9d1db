"""Small models with a Cast from int64 of a shape-derived value (Shape -> ... -> Cast), the
forms exporters write for attention scaling, means and positions, to see whether a backend
fails on them as they are or after --target. Writes NAME.onnx and NAME.inputs.npz (seed 0)
to the current directory, the corpus layout tests/backends/harness.py reads:

    mkdir /tmp/sc && cd /tmp/sc && python $REPO/targets/probes/shape_cast_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py \\
        --backends nncase-k210,tflite,rknn2 --corpus /tmp/sc --out /tmp/sc/out

  shape_cast_scale   x / Sqrt(Cast(Shape(x)[2], float))        x [1,8,16]
  shape_cast_mean    ReduceSum(x, 1) / Cast(Shape(x)[1], float) x [1,8,16]
  shape_cast_range   x + Cast(Range(0, Shape(x)[1], 1), float)[:, None]   x [1,8,16]

Each with a dynamic axis 1 ("n") and, as *_static, with static shapes. Recorded results:
shape_cast_models.txt.
"""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)


def C(name, a):
    return nh.from_array(np.asarray(a), name)


def mk(name, nodes, inits, dynamic):
    dims = [1, "n" if dynamic else 8, 16]
    x = h.make_tensor_value_info("x", T.FLOAT, dims)
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    g = h.make_graph(nodes, name, [x], [y], initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7)
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m, full_check=True)
    name = name if dynamic else name + "_static"
    onnx.save(m, f"{name}.onnx")
    np.savez(f"{name}.inputs.npz", x=rng.standard_normal((1, 8, 16)).astype(np.float32))


for dynamic in (True, False):
    mk(
        "shape_cast_scale",
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "i2"], ["d"], axis=0),
            h.make_node("Cast", ["d"], ["df"], to=T.FLOAT),
            h.make_node("Sqrt", ["df"], ["r"]),
            h.make_node("Div", ["x", "r"], ["y"]),
        ],
        [C("i2", np.int64(2))],
        dynamic,
    )
    mk(
        "shape_cast_mean",
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "i1"], ["n"], axis=0),
            h.make_node("Cast", ["n"], ["nf"], to=T.FLOAT),
            h.make_node("ReduceSum", ["x", "ax"], ["t"], keepdims=1),
            h.make_node("Div", ["t", "nf"], ["y"]),
        ],
        [C("i1", np.int64(1)), C("ax", np.array([1], np.int64))],
        dynamic,
    )
    mk(
        "shape_cast_range",
        [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "i1"], ["n"], axis=0),
            h.make_node("Range", ["zero", "n", "one"], ["p"]),
            h.make_node("Cast", ["p"], ["pf"], to=T.FLOAT),
            h.make_node("Unsqueeze", ["pf", "ax"], ["pu"]),
            h.make_node("Add", ["x", "pu"], ["y"]),
        ],
        [C("i1", np.int64(1)), C("zero", np.int64(0)), C("one", np.int64(1)), C("ax", np.array([1], np.int64))],
        dynamic,
    )
