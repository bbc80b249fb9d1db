"""Small models behind the nncase-k210 fact on integer index arithmetic (issue: a RoBERTa-style
encoder is exact in onnxruntime after --target but wrong in nncase, from the embedding sum on).
Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the corpus layout
tests/backends/harness.py reads, and NAME.ref.npz (onnxruntime's outputs) when onnxruntime
is importable; nncase_embedding.py (run with the nncase venv's python) runs every model on
nncase 1.9 and compares with NAME.ref.npz:

    mkdir /tmp/emb && cd /tmp/emb && python $REPO/targets/probes/embedding_models.py
    $REPO/.backends/nncase-k210/venv/bin/python $REPO/targets/probes/nncase_embedding.py
"""

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
V = h.make_tensor_value_info
C = lambda n, a: nh.from_array(np.asarray(a), n)  # noqa: E731
S = 8  # sequence length
TABLE = rng.standard_normal((50, 16)).astype(np.float32)
POS = rng.standard_normal((S + 2, 16)).astype(np.float32)
IDS = np.array([[0, 5, 17, 3, 42, 9, 1, 2]], np.int64)


def mk(name, nodes, inputs, outputs, inits=(), feeds=None, opset=13, ir=7):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=ir)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")
    given, feeds = feeds or {}, {}  # in graph order, as the harness protocol says
    for i in inputs:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        feeds[i.name] = given[i.name] if i.name in given else rng.standard_normal(dims).astype(np.float32)
    np.savez(f"{name}.inputs.npz", **feeds)
    try:
        import onnxruntime as ort
    except ImportError:
        return
    s = ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"])
    np.savez(f"{name}.ref.npz", *s.run(None, feeds))


def ids(dtype=np.int64, value=IDS):
    return V("ids", T.INT64 if dtype == np.int64 else T.INT32, list(value.shape)), {"ids": value.astype(dtype)}


# Gather rows of a table by runtime indices
for dt in (np.int64, np.int32):
    i, f = ids(dt)
    tag = "i64" if dt == np.int64 else "i32"
    mk(
        f"gather_{tag}",
        [h.make_node("Gather", ["table", "ids"], ["y"])],
        [i],
        [V("y", T.FLOAT, [1, S, 16])],
        [C("table", TABLE)],
        f,
    )
    # ids only passed through arithmetic
    mk(
        f"ids_add_{tag}",
        [h.make_node("Add", ["ids", "one"], ["y"])],
        [i],
        [V("y", T.INT64 if dt == np.int64 else T.INT32, [1, S])],
        [C("one", np.array(1, dt))],
        f,
    )
    mk(f"ids_cast_{tag}", [h.make_node("Cast", ["ids"], ["y"], to=T.FLOAT)], [i], [V("y", T.FLOAT, [1, S])], [], f)
# Gather with constant indices (position ids as a constant)
mk(
    "gather_const",
    [h.make_node("Gather", ["table", "pidx"], ["g"]), h.make_node("Add", ["x", "g"], ["y"])],
    [V("x", T.FLOAT, [1, S, 16])],
    [V("y", T.FLOAT, [1, S, 16])],
    [C("table", TABLE), C("pidx", np.arange(2, S + 2, dtype=np.int64)[None])],
)
# Gather + Add of two embeddings (word by ids, position by constant)
i, f = ids()
mk(
    "gather_add_pos",
    [
        h.make_node("Gather", ["table", "ids"], ["a"]),
        h.make_node("Gather", ["pos", "pidx"], ["b"]),
        h.make_node("Add", ["a", "b"], ["y"]),
    ],
    [i],
    [V("y", T.FLOAT, [1, S, 16])],
    [C("table", TABLE), C("pos", POS), C("pidx", np.arange(2, S + 2, dtype=np.int64)[None])],
    f,
)
# RoBERTa position ids: mask = ids != pad; pos = cumsum(mask) * mask + pad
pad = 1
nodes = [
    h.make_node("Equal", ["ids", "padv"], ["eq"]),
    h.make_node("Not", ["eq"], ["ne"]),
    h.make_node("Cast", ["ne"], ["mi"], to=T.INT32),
    h.make_node("CumSum", ["mi", "ax"], ["cs"]),
    h.make_node("Mul", ["cs", "mi"], ["cm"]),
    h.make_node("Cast", ["cm"], ["cm64"], to=T.INT64),
    h.make_node("Add", ["cm64", "padv"], ["pid"]),
]
ninits = [C("padv", np.array(pad, np.int64)), C("ax", np.array(1, np.int32))]
mk("roberta_posids", nodes, [i], [V("pid", T.INT64, [1, S])], ninits, f)
mk(
    "roberta_posids_gather",
    nodes + [h.make_node("Gather", ["pos", "pid"], ["y"])],
    [i],
    [V("y", T.FLOAT, [1, S, 16])],
    ninits + [C("pos", POS)],
    f,
)
# each step alone
mk(
    "equal_i64",
    [h.make_node("Equal", ["ids", "padv"], ["eq"]), h.make_node("Cast", ["eq"], ["y"], to=T.FLOAT)],
    [i],
    [V("y", T.FLOAT, [1, S])],
    [C("padv", np.array(pad, np.int64))],
    f,
)
mk(
    "cumsum_f",
    [h.make_node("CumSum", ["x", "ax"], ["y"])],
    [V("x", T.FLOAT, [1, S])],
    [V("y", T.FLOAT, [1, S])],
    [C("ax", np.array(1, np.int32))],
)
i32, f32 = ids(np.int32, (IDS != 1).astype(np.int32))
mk(
    "cumsum_i32",
    [h.make_node("CumSum", ["ids", "ax"], ["c"]), h.make_node("Cast", ["c"], ["y"], to=T.FLOAT)],
    [i32],
    [V("y", T.FLOAT, [1, S])],
    [C("ax", np.array(1, np.int32))],
    f32,
)
i64b, f64b = ids(np.int64, (IDS != 1).astype(np.int64))
mk(
    "cumsum_i64",
    [h.make_node("CumSum", ["ids", "ax"], ["c"]), h.make_node("Cast", ["c"], ["y"], to=T.FLOAT)],
    [i64b],
    [V("y", T.FLOAT, [1, S])],
    [C("ax", np.array(1, np.int64))],
    f64b,
)
mk(
    "mul_i64",
    [h.make_node("Mul", ["ids", "ids"], ["c"]), h.make_node("Cast", ["c"], ["y"], to=T.FLOAT)],
    [i],
    [V("y", T.FLOAT, [1, S])],
    [],
    f,
)
# tables of more rows, indices spread over them
for rows in (64, 256, 1024, 4096, 30522):
    for width in (16, 32, 128):
        tab = rng.standard_normal((rows, width)).astype(np.float32)
        i, f = ids(np.int64, rng.integers(0, rows, (2, S)))
        mk(
            f"gather_rows{rows}_w{width}",
            [h.make_node("Gather", ["table", "ids"], ["y"])],
            [i],
            [V("y", T.FLOAT, [2, S, width])],
            [C("table", tab)],
            f,
        )
# two inputs: is the kmodel's input order the graph's?
ab = [V("a", T.FLOAT, [2, 8]), V("b", T.FLOAT, [2, 8])]
mk("order_sub", [h.make_node("Sub", ["a", "b"], ["y"])], ab, [V("y", T.FLOAT, [2, 8])])
mk("order_sub_ba", [h.make_node("Sub", ["a", "b"], ["y"])], ab[::-1], [V("y", T.FLOAT, [2, 8])])
mk(
    "order_relu_b_first",
    [h.make_node("Relu", ["b"], ["rb"]), h.make_node("Relu", ["a"], ["ra"]), h.make_node("Sub", ["ra", "rb"], ["y"])],
    ab,
    [V("y", T.FLOAT, [2, 8])],
)
i, f = ids(np.int64, rng.integers(0, 50, (2, S)))
mk(
    "order_gather_second",
    [h.make_node("Gather", ["table", "ids"], ["g"]), h.make_node("Add", ["g", "x"], ["y"])],
    [V("x", T.FLOAT, [2, S, 16]), i],
    [V("y", T.FLOAT, [2, S, 16])],
    [C("table", TABLE)],
    f,
)
mk(
    "order_gather_first",
    [h.make_node("Gather", ["table", "ids"], ["g"]), h.make_node("Add", ["g", "x"], ["y"])],
    [i, V("x", T.FLOAT, [2, S, 16])],
    [V("y", T.FLOAT, [2, S, 16])],
    [C("table", TABLE)],
    dict(f),
)
# the embedding read twice: by a residual Add and by the block behind it (an RMSNorm + MatMul)
W32 = C("w", rng.standard_normal((16, 16)).astype(np.float32))
i, f = ids(np.int64, np.array([[47, 3, 25, 11, 40]]))
g = h.make_node("Gather", ["table", "ids"], ["g"])
rms = [
    h.make_node("Pow", ["g", "two"], ["p"]),
    h.make_node("ReduceMean", ["p"], ["ms"], axes=[-1]),
    h.make_node("Add", ["ms", "eps"], ["mse"]),
    h.make_node("Sqrt", ["mse"], ["rs"]),
    h.make_node("Div", ["g", "rs"], ["n"]),
    h.make_node("MatMul", ["n", "w"], ["o"]),
]
rinits = [C("table", TABLE), C("two", np.array(2, np.float32)), C("eps", np.array(1e-6, np.float32)), W32]
mk("residual_rms", [g, *rms, h.make_node("Add", ["g", "o"], ["y"])], [i], [V("y", T.FLOAT, [1, 5, 16])], rinits, f)
mk(
    "residual_mm",
    [g, h.make_node("MatMul", ["g", "w"], ["o"]), h.make_node("Add", ["g", "o"], ["y"])],
    [i],
    [V("y", T.FLOAT, [1, 5, 16])],
    [C("table", TABLE), W32],
    f,
)
mk(
    "residual_relu",
    [g, h.make_node("Relu", ["g"], ["o"]), h.make_node("Add", ["g", "o"], ["y"])],
    [i],
    [V("y", T.FLOAT, [1, 5, 16])],
    [C("table", TABLE)],
    f,
)
x5 = V("x", T.FLOAT, [1, 5, 16])
mk(
    "residual_rms_input",
    [h.make_node("Identity", ["x"], ["g"]), *rms, h.make_node("Add", ["g", "o"], ["y"])],
    [x5],
    [V("y", T.FLOAT, [1, 5, 16])],
    rinits[1:],
)
mk(
    "residual_rms_relu",
    [h.make_node("Relu", ["x"], ["g"]), *rms, h.make_node("Add", ["g", "o"], ["y"])],
    [x5],
    [V("y", T.FLOAT, [1, 5, 16])],
    rinits[1:],
)
# optimum's llama mask: Cast(attention_mask, bool) -> Flatten -> Gather(constant indices) -> Reshape
# -> And(causal) -> Where, beside an embedding that lives across it
ids5 = np.array([[47, 3, 25, 11, 40]], np.int64)
am = V("attention_mask", T.INT64, [1, 5])
for kind in ("bool", "float"):
    et = T.BOOL if kind == "bool" else T.FLOAT
    mask = [
        h.make_node("Cast", ["attention_mask"], ["mb"], to=et),
        h.make_node("Flatten", ["mb"], ["mf"], axis=2),
        h.make_node("Gather", ["mf", "gidx"], ["mg"], axis=0),
        h.make_node("Reshape", ["mg", "mshape"], ["mr"]),
    ]
    if kind == "bool":
        mask += [h.make_node("And", ["causal", "mr"], ["ma"]), h.make_node("Where", ["ma", "zero", "neg"], ["bias"])]
        causal = C("causal", np.tril(np.ones((5, 5), bool))[None, None])
    else:
        mask += [h.make_node("Mul", ["causal", "mr"], ["ma"]), h.make_node("Sub", ["ma", "one"], ["bias"])]
        causal = C("causal", np.tril(np.ones((5, 5), np.float32))[None, None])
    minits = [
        causal,
        C("gidx", np.arange(5, dtype=np.int64).reshape(1, 1, 1, 5)),
        C("mshape", np.array([1, 1, 1, 5], np.int64)),
        C("zero", np.array(0, np.float32)),
        C("neg", np.array(-3.4028234663852886e38, np.float32)),
        C("one", np.array(1, np.float32)),
    ]
    for emb in ("gather", "input"):
        first = (
            [h.make_node("Gather", ["table", "ids"], ["g"])] if emb == "gather" else [h.make_node("Relu", ["x"], ["g"])]
        )
        ins = [V("ids", T.INT64, [1, 5]) if emb == "gather" else x5, am]
        feeds = {"ids": ids5} if emb == "gather" else {}
        feeds["attention_mask"] = np.ones((1, 5), np.int64)
        mk(
            f"llama_mask_{kind}_{emb}",
            [*first, *mask, h.make_node("Relu", ["g"], ["r"]), h.make_node("Add", ["g", "r"], ["y"])],
            ins,
            [V("y", T.FLOAT, [1, 5, 16]), V("bias", T.FLOAT, [1, 1, 5, 5])],
            [C("table", TABLE), *minits],
            feeds,
        )
        mk(
            f"llama_maskonly_{kind}_{emb}",
            [*first, *mask[:3], h.make_node("Relu", ["g"], ["r"]), h.make_node("Add", ["g", "r"], ["y"])],
            ins,
            [V("y", T.FLOAT, [1, 5, 16]), V("mg", et, [1, 1, 1, 5, 1])],
            [C("table", TABLE), *minits[1:2]],
            dict(feeds),
        )
# one Gather whose indices are rank 4 (output rank 5) vs rank 1, on bool / float / int64 data
for kind, et, npt in (("bool", T.BOOL, bool), ("float", T.FLOAT, np.float32), ("i64", T.INT64, np.int64)):
    for rank in (1, 2, 4):
        shape = [1] * (rank - 1) + [5]
        mk(
            f"gather_{kind}_idxrank{rank}",
            [h.make_node("Gather", ["d", "gi"], ["y"], axis=0)],
            [V("d", et, [5, 1])],
            [V("y", et, [*shape, 1])],
            [C("gi", np.arange(5, dtype=np.int64).reshape(shape))],
            {"d": (np.arange(5) % 2).astype(npt).reshape(5, 1)},
        )
    mk(
        f"reshape_{kind}_rank5",
        [h.make_node("Reshape", ["d", "s5"], ["y"])],
        [V("d", et, [5, 1])],
        [V("y", et, [1, 1, 1, 5, 1])],
        [C("s5", np.array([1, 1, 1, 5, 1], np.int64))],
        {"d": (np.arange(5) % 2).astype(npt).reshape(5, 1)},
    )
# the pieces of optimum's mask alone: Cast(int64 -> bool), Flatten, Gather
am_feed = {"attention_mask": np.ones((1, 5), np.int64)}
steps = [
    h.make_node("Cast", ["attention_mask"], ["mb"], to=T.BOOL),
    h.make_node("Flatten", ["mb"], ["mf"], axis=2),
    h.make_node("Gather", ["mf", "gidx"], ["mg"], axis=0),
]
outs = [V("mb", T.BOOL, [1, 5]), V("mf", T.BOOL, [5, 1]), V("mg", T.BOOL, [1, 1, 1, 5, 1])]
gidx = C("gidx", np.arange(5, dtype=np.int64).reshape(1, 1, 1, 5))
for k in (1, 2, 3):
    mk(f"mask_steps{k}", steps[:k], [am], [outs[k - 1]], [gidx] if k == 3 else [], dict(am_feed))
mk(
    "cast_i64_bool_flatten_f",
    [h.make_node("Cast", ["attention_mask"], ["mb"], to=T.FLOAT), h.make_node("Flatten", ["mb"], ["y"], axis=2)],
    [am],
    [V("y", T.FLOAT, [5, 1])],
    [],
    dict(am_feed),
)
mk(
    "flatten_bool_input",
    [h.make_node("Flatten", ["b"], ["y"], axis=2)],
    [V("b", T.BOOL, [1, 5])],
    [V("y", T.BOOL, [5, 1])],
    [],
    {"b": np.ones((1, 5), bool)},
)
mk(
    "flatten_f_axis2",
    [h.make_node("Flatten", ["b"], ["y"], axis=2)],
    [V("b", T.FLOAT, [1, 5])],
    [V("y", T.FLOAT, [5, 1])],
    [],
    {"b": np.ones((1, 5), np.float32)},
)
# Flatten by axis and rank, as the output and consumed (then a Relu); the same move as a Reshape
for shape in ([1, 5], [2, 3, 4]):
    r = len(shape)
    for axis in range(0, r + 1):
        outer = int(np.prod(shape[:axis]))
        fshape = [outer, int(np.prod(shape)) // outer]
        xin = V("x", T.FLOAT, shape)
        tag = f"r{r}_axis{axis}"
        mk(f"flatten_{tag}", [h.make_node("Flatten", ["x"], ["y"], axis=axis)], [xin], [V("y", T.FLOAT, fshape)])
        mk(
            f"flatten_{tag}_relu",
            [h.make_node("Flatten", ["x"], ["f"], axis=axis), h.make_node("Relu", ["f"], ["y"])],
            [xin],
            [V("y", T.FLOAT, fshape)],
        )
        mk(
            f"flatten_{tag}_as_reshape_relu",
            [h.make_node("Reshape", ["x", "s"], ["f"]), h.make_node("Relu", ["f"], ["y"])],
            [xin],
            [V("y", T.FLOAT, fshape)],
            [C("s", np.array(fshape, np.int64))],
        )
# negative Gather indices (ONNX counts them from the end): constant and run-time
x28 = V("x", T.FLOAT, [2, S, 16])
for idx in (-1, S - 1):
    tag = "neg" if idx < 0 else "pos"
    mk(
        f"gather_const_{tag}_axis1",
        [h.make_node("Gather", ["x", "k"], ["y"], axis=1)],
        [x28],
        [V("y", T.FLOAT, [2, 16])],
        [C("k", np.array(idx, np.int64))],
    )
    mk(
        f"gather_const_{tag}_axis1_vec",
        [h.make_node("Gather", ["x", "k"], ["y"], axis=1)],
        [x28],
        [V("y", T.FLOAT, [2, 2, 16])],
        [C("k", np.array([idx, 0], np.int64))],
    )
i, f = ids(np.int64, np.array([[-1, 5, -50, 3, 42, -2, 1, 2]]))
mk(
    "gather_runtime_negative",
    [h.make_node("Gather", ["table", "ids"], ["y"])],
    [i],
    [V("y", T.FLOAT, [1, S, 16])],
    [C("table", TABLE)],
    f,
)
