"""fold-constants against the reference: every ONNX backend node test whose ops have
kernels, with all inputs turned into initializers, must fold completely, and the folded
outputs must equal the test's expected outputs and onnxruntime's. Random inputs check
broadcasting and dtypes against onnxruntime too."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
from backend_node_cases import node_test_dir
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

FOLD = "fold-constants(max-size=1073741824)"
# Ops the issue names: each must be folded in at least one backend case.
REQUIRED_OPS = {
    "Shape",
    "Size",
    "Gather",
    "Unsqueeze",
    "Squeeze",
    "Concat",
    "Reshape",
    "Slice",
    "Cast",
    "Range",
    "ConstantOfShape",
    "Expand",
    "Transpose",
    "Equal",
    "Less",
    "Greater",
    "Where",
    "Not",
    "And",
    "Or",
    "Xor",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Neg",
    "Abs",
    "Sqrt",
    "Pow",
    "ReduceProd",
    "ReduceSum",
    "ReduceMax",
    "ReduceMin",
    "Identity",
    "Flatten",
    "Tile",
    "NonZero",
    "Constant",
    "Min",
    "Max",
    "Mod",
    "Floor",
    "Ceil",
    "Exp",
    "Log",
    "Sign",
}
# Why a node may legitimately stay: these mean "no kernel for this form", not a bug.
NOT_OURS = {"left/no-kernel", "left/unsupported", "left/custom-domain", "left/non-deterministic"}


def _tolerance(dtype: np.dtype) -> tuple[float, float]:
    if dtype == np.float16:
        return 1e-3, 1e-3
    if str(dtype) == "bfloat16":
        return 1e-2, 1e-2
    if dtype == np.float32:
        return 1e-4, 1e-5
    return 1e-12, 1e-12


def _close(actual: np.ndarray, expected: np.ndarray) -> str | None:
    if str(actual.dtype) == "bfloat16" and str(expected.dtype) == "bfloat16":
        if not np.array_equal(actual.view(np.uint16), expected.view(np.uint16)):
            a, e = actual.astype(np.float32), expected.astype(np.float32)
            same = (a == e) | (np.isnan(a) & np.isnan(e))
            return None if same.all() else f"bfloat16 values differ: {a[~same][:8]} vs {e[~same][:8]}"
        return None
    if actual.shape != expected.shape:
        return f"shape {actual.shape} != {expected.shape}"
    if actual.dtype != expected.dtype:
        return f"dtype {actual.dtype} != {expected.dtype}"
    if actual.dtype.kind in "fc":
        rtol, atol = _tolerance(actual.dtype)
        a = actual.astype(np.float64)
        e = expected.astype(np.float64)
        if not np.allclose(a, e, rtol=rtol, atol=atol, equal_nan=True):
            return f"values differ: max abs err {np.nanmax(np.abs(a - e)) if a.size else 0}"
        return None
    if actual.dtype.kind in "OSU":
        return None if actual.tolist() == expected.tolist() else "strings differ"
    return (
        None if np.array_equal(actual, expected) else f"values differ: {actual.ravel()[:8]} vs {expected.ravel()[:8]}"
    )


def _load_tensor(path) -> onnx.TensorProto | None:
    t = onnx.TensorProto()
    try:
        t.ParseFromString(path.read_bytes())
    except Exception:  # noqa: BLE001 - sequences/optionals are not tensors
        return None
    return t if t.data_type else None


def _fold_case(case_dir):
    """Returns (status, detail, op_types) for one backend case."""
    model = onnx.load(case_dir / "model.onnx")
    data = case_dir / "test_data_set_0"
    if not data.exists():
        return "skip", "no data", set()
    ops = {n.op_type for n in model.graph.node}
    if any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
        return "skip", "other domain", ops
    if any(not vi.type.HasField("tensor_type") for vi in list(model.graph.input) + list(model.graph.output)):
        return "skip", "non-tensor inputs or outputs", ops
    inputs = [_load_tensor(data / f"input_{i}.pb") for i in range(len(model.graph.input))]
    outputs = [_load_tensor(data / f"output_{i}.pb") for i in range(len(model.graph.output))]
    if any(t is None for t in inputs + outputs):
        return "skip", "non-tensor data", ops
    folded_input = onnx.ModelProto()
    folded_input.CopyFrom(model)
    del folded_input.graph.input[:]
    for vi, t in zip(model.graph.input, inputs):
        t.name = vi.name
        folded_input.graph.initializer.append(t)
    report: list = []
    try:
        folded = osg.run(folded_input, FOLD, report=report)
    except Exception as e:  # noqa: BLE001
        return "fail", f"pass error: {e}", ops
    counts = report[0]["counts"]
    if any(n.op_type != "Constant" for n in folded.graph.node):
        if set(k for k in counts if k.startswith("left/")) & NOT_OURS:
            return "skip", f"left: {counts}", ops
        return "fail", f"not folded: {counts}", ops
    # Constant nodes are sources the pass leaves in place (extract-constants moves them).
    values = ReferenceEvaluator(folded).run(None, {})
    inits = {t.name for t in folded.graph.initializer} | {o for n in folded.graph.node for o in n.output}
    folded_values = {vi.name: v for vi, v in zip(folded.graph.output, values)}
    expected = [numpy_helper.to_array(t) for t in outputs]
    try:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        feeds = {vi.name: numpy_helper.to_array(t) for vi, t in zip(model.graph.input, inputs)}
        runtime = sess.run(None, feeds)
    except Exception:  # noqa: BLE001 - onnxruntime lacks some kernels/opsets; the reference still checks
        runtime = None
    for i, vi in enumerate(model.graph.output):
        if vi.name not in inits:
            return "fail", f"output {vi.name} is not constant", ops
        problem = _close(folded_values[vi.name], expected[i])
        if problem:
            return "fail", f"output {vi.name} vs expected: {problem}", ops
        if runtime is not None and runtime[i].dtype.kind not in "OSU":
            problem = _close(folded_values[vi.name], np.asarray(runtime[i]).astype(expected[i].dtype))
            if problem:
                return "fail", f"output {vi.name} vs onnxruntime: {problem}", ops
    return "ok", "", ops


def test_backend_node_cases_fold_completely_and_match():
    folded_ops: set[str] = set()
    failures, ok = [], 0
    for case_dir in sorted(p.parent for p in node_test_dir().glob("*/model.onnx")):
        status, detail, ops = _fold_case(case_dir)
        if status == "ok":
            ok += 1
            folded_ops |= ops
        elif status == "fail":
            failures.append(f"{case_dir.name}: {detail}")
    assert not failures, f"{len(failures)} cases failed ({ok} folded):\n" + "\n".join(failures[:200])
    missing = REQUIRED_OPS - folded_ops
    assert not missing, f"no backend case folded for {sorted(missing)}"
    assert ok > 400, f"only {ok} backend cases folded"


# ---- random inputs vs onnxruntime ------------------------------------------------------
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Min", "Max", "Equal", "Less", "Greater", "Mod"]
DTYPES = [
    np.float32,
    np.float64,
    np.float16,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
]
SHAPES = [((3, 1, 4), (2, 1)), ((), (5,)), ((2, 3), (2, 3)), ((4, 1), (1, 5)), ((1,), (0,))]


def _random(rng, shape, dtype):
    if np.issubdtype(dtype, np.floating):
        return (rng.standard_normal(shape) * 3).astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -50), min(info.max, 50)
    return rng.integers(lo, hi + 1, size=shape).astype(dtype)


def _run_both(op, arrays, attrs=None, out_type=None):
    """Folds a one-node model whose inputs are initializers; returns (folded, ort) or None
    when onnxruntime has no kernel for it."""
    names = [f"x{i}" for i in range(len(arrays))]
    node = helper.make_node(op, names, ["y"], **(attrs or {}))
    inits = [numpy_helper.from_array(a, n) for a, n in zip(arrays, names)]
    out = helper.make_tensor_value_info("y", out_type or inits[0].data_type, None)
    graph = helper.make_graph([node], "g", [], [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 9
    try:
        expected = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})[0]
    except Exception:  # noqa: BLE001 - not implemented in onnxruntime for this dtype
        return None
    report: list = []
    folded = osg.run(model, FOLD, report=report)
    assert not folded.graph.node, f"{op} not folded: {report[0]['counts']}"
    (y,) = [t for t in folded.graph.initializer if t.name == "y"]
    return numpy_helper.to_array(y), np.asarray(expected)


@pytest.mark.parametrize("op", BINARY)
def test_binary_ops_random_inputs_match_onnxruntime(op):
    rng = np.random.default_rng(0)
    checked = 0
    for dtype, (sa, sb) in itertools.product(DTYPES, SHAPES):
        a, b = _random(rng, sa, dtype), _random(rng, sb, dtype)
        attrs = None
        if op in ("Div", "Mod") and np.issubdtype(dtype, np.integer):
            b[b == 0] = 3
        if op == "Mod" and np.issubdtype(dtype, np.floating):
            attrs = {"fmod": 1}
        if op == "Pow":
            if np.issubdtype(dtype, np.integer):
                b = np.abs(b) % 4
                if np.issubdtype(dtype, np.unsignedinteger):
                    continue
            else:
                a = np.abs(a)
        out_type = onnx.TensorProto.BOOL if op in ("Equal", "Less", "Greater") else None
        got = _run_both(op, [a, b], attrs, out_type)
        if got is None:
            continue
        folded, runtime = got
        problem = _close(folded, runtime)
        assert problem is None, f"{op} {np.dtype(dtype).name} {sa} x {sb}: {problem}"
        checked += 1
    assert checked >= 10, f"only {checked} {op} combinations ran in onnxruntime"


@pytest.mark.parametrize(
    "target", [np.float32, np.float64, np.float16, np.int8, np.int32, np.int64, np.uint8, np.uint16, np.bool_]
)
def test_cast_random_inputs_match_onnxruntime(target):
    rng = np.random.default_rng(1)
    for source in [np.float32, np.float64, np.float16, np.int64, np.int32, np.uint8, np.bool_]:
        if source == np.bool_:
            x = rng.integers(0, 2, size=(3, 4)).astype(np.bool_)
        elif np.issubdtype(source, np.floating):
            x = (rng.standard_normal((3, 4)) * 20).astype(source)
            if np.issubdtype(target, np.unsignedinteger):
                x = np.abs(x)
        else:
            x = _random(rng, (3, 4), source)
            if np.issubdtype(target, np.unsignedinteger):
                x = np.abs(x)
        to = helper.np_dtype_to_tensor_dtype(np.dtype(target))
        got = _run_both("Cast", [x], {"to": to}, to)
        if got is None:
            continue
        problem = _close(*got)
        assert problem is None, f"Cast {np.dtype(source).name} -> {np.dtype(target).name}: {problem}"


def test_where_and_expand_broadcast_match_onnxruntime():
    rng = np.random.default_rng(2)
    cond = rng.integers(0, 2, size=(2, 1, 3)).astype(np.bool_)
    for dtype in [np.float32, np.float16, np.int64, np.uint8, np.bool_]:
        x = _random(rng, (4, 1), dtype) if dtype != np.bool_ else rng.integers(0, 2, (4, 1)).astype(np.bool_)
        y = _random(rng, (3,), dtype) if dtype != np.bool_ else rng.integers(0, 2, (3,)).astype(np.bool_)
        got = _run_both("Where", [cond, x, y], None, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
        if got is not None:
            assert _close(*got) is None, f"Where {np.dtype(dtype).name}"
        got = _run_both(
            "Expand", [x, np.array([2, 4, 3], dtype=np.int64)], None, helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        )
        if got is not None:
            assert _close(*got) is None, f"Expand {np.dtype(dtype).name}"


def test_corpus_model_has_nothing_foldable_left(corpus_model, oracle):
    """On every real export: after folding, no node but a Constant reads only constants,
    except those the pass reports it left (with a reason)."""
    original = onnx.load(corpus_model.path)
    report: list = []
    folded = osg.run(original, "fold-constants", report=report)
    oracle.assert_valid(folded)
    constant = {t.name for t in folded.graph.initializer} - {i.name for i in folded.graph.input}
    constant |= {o for n in folded.graph.node if n.op_type == "Constant" for o in n.output}
    left = sum(v for k, v in report[0]["counts"].items() if k.startswith("left/"))
    foldable = [
        n.op_type for n in folded.graph.node if n.op_type != "Constant" and all(not i or i in constant for i in n.input)
    ]
    assert len(foldable) <= left, f"foldable nodes left: {foldable}, counts {report[0]['counts']}"


def test_sparse_constant_is_refused_and_reported():
    sparse = helper.make_sparse_tensor(
        numpy_helper.from_array(np.array([5.0], np.float32), "v"),
        numpy_helper.from_array(np.array([2], np.int64), "i"),
        [4],
    )
    nodes = [helper.make_node("Constant", [], ["s"], sparse_value=sparse), helper.make_node("Add", ["s", "k"], ["Y"])]
    k = numpy_helper.from_array(np.ones(4, np.float32), "k")
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [4])], [k])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    report: list = []
    folded = osg.run(model, "fold-constants", report=report)
    assert [n.op_type for n in folded.graph.node] == ["Constant", "Add"]
    assert report[0]["counts"] == {"left/unsupported": 1}
    assert not report[0]["changed"]


def test_max_size_option_bounds_every_folded_output():
    big = helper.make_node("ConstantOfShape", ["n"], ["c"])
    n = numpy_helper.from_array(np.array([1000], np.int64), "n")
    graph = helper.make_graph([big], "g", [], [helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, [1000])], [n])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    report: list = []
    kept = osg.run(model, "fold-constants(max-size=3999)", report=report)
    assert [x.op_type for x in kept.graph.node] == ["ConstantOfShape"]
    assert report[0]["counts"] == {"left/over-max-size": 1}
    folded = osg.run(model, "fold-constants(max-size=4000)")
    assert not folded.graph.node


UNARY = ["Neg", "Abs", "Sqrt", "Exp", "Log", "Floor", "Ceil", "Round", "Sign", "Reciprocal", "Relu", "Sin", "Cos"]


@pytest.mark.parametrize("op", UNARY)
def test_unary_ops_random_inputs_match_onnxruntime(op):
    rng = np.random.default_rng(3)
    checked = 0
    for dtype in DTYPES:
        x = _random(rng, (3, 5), dtype)
        if op in ("Sqrt", "Log") and np.issubdtype(dtype, np.floating):
            x = np.abs(x) + dtype(0.5)
        if op == "Round" and np.issubdtype(dtype, np.floating):
            x[0, :3] = np.array([0.5, 1.5, -2.5], dtype)  # ties go to even
        got = _run_both(op, [x])
        if got is None:
            continue
        problem = _close(*got)
        assert problem is None, f"{op} {np.dtype(dtype).name}: {problem}"
        checked += 1
    assert checked >= 2, f"only {checked} {op} dtypes ran in onnxruntime"


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin", "ReduceMean"])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_reductions_random_inputs_match_onnxruntime(op, keepdims):
    rng = np.random.default_rng(4)
    checked = 0
    for dtype in [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8]:
        x = _random(rng, (2, 3, 4), dtype)
        if op == "ReduceProd" and np.issubdtype(dtype, np.integer):
            x = (np.abs(x) % 3).astype(dtype)
        for axes in ([1], [0, 2], [-1], None):
            arrays = [x] if axes is None else [x, np.array(axes, np.int64)]
            got = _run_both(op, arrays, {"keepdims": keepdims})
            if got is None:
                continue
            problem = _close(*got)
            assert problem is None, f"{op} {np.dtype(dtype).name} axes={axes}: {problem}"
            checked += 1
    assert checked >= 8


def test_movement_ops_random_inputs_match_onnxruntime():
    rng = np.random.default_rng(5)
    for dtype in [np.float32, np.float16, np.int8, np.int64, np.bool_]:
        x = _random(rng, (3, 4, 5), dtype) if dtype != np.bool_ else rng.integers(0, 2, (3, 4, 5)).astype(np.bool_)
        cases = [
            ("Transpose", [x], {"perm": [2, 0, 1]}),
            ("Gather", [x, np.array([[2, -1], [0, 1]], np.int64)], {"axis": 1}),
            (
                "Slice",
                [
                    x,
                    np.array([-1, 1], np.int64),
                    np.array([-100, 4], np.int64),
                    np.array([2, 1], np.int64),
                    np.array([-1, 2], np.int64),
                ],
                None,
            ),
            ("Tile", [x, np.array([2, 1, 3], np.int64)], None),
            ("Concat", [x, x[:, :1]], {"axis": 1}),
            ("Reshape", [x, np.array([0, -1], np.int64)], None),
            ("Flatten", [x], {"axis": 2}),
        ]
        for op, arrays, attrs in cases:
            got = _run_both(op, arrays, attrs)
            if got is None:
                continue
            problem = _close(*got)
            assert problem is None, f"{op} {np.dtype(dtype).name}: {problem}"


def test_every_backend_node_model_as_is_stays_valid():
    """With their inputs left as inputs, nothing folds in most models, but the pass (shape
    inference included) must never fail or leave a model the checker refuses."""
    from backend_node_cases import node_models

    failures = []
    for path in node_models():
        try:
            onnx.checker.check_model(osg.run(onnx.load(path), "fold-constants"))
        except Exception as e:  # noqa: BLE001 - collect every failure
            failures.append(f"{path.parent.name}: {type(e).__name__}: {str(e)[:200]}")
    assert not failures, f"{len(failures)} failed:\n" + "\n".join(failures[:40])


def _resize_model(x, attrs, scales=None, sizes=None, opset=18):
    inits = [numpy_helper.from_array(x, "x")]
    names = ["x", "", "", ""]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        names[2] = "scales"
    if sizes is not None:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        names[3] = "sizes"
    node = helper.make_node("Resize", names[: 4 if sizes is not None else 3], ["y"], **attrs)
    out = helper.make_tensor_value_info("y", inits[0].data_type, None)
    graph = helper.make_graph([node], "g", [], [out], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model


def _resize_both(x, attrs, scales=None, sizes=None):
    """Folds Resize(x, roi omitted, scales or sizes); onnxruntime's result, computed in
    float32 for the element types its Resize lacks (double, float16)."""
    model = _resize_model(x, attrs, scales, sizes)
    runtime = model if x.dtype == np.float32 else _resize_model(x.astype(np.float32), attrs, scales, sizes)
    expected = ort.InferenceSession(runtime.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})[0]
    report: list = []
    folded = osg.run(model, FOLD, report=report)
    assert not folded.graph.node, f"Resize {attrs} not folded: {report[0]['counts']}"
    (y,) = [t for t in folded.graph.initializer if t.name == "y"]
    return numpy_helper.to_array(y), np.asarray(expected)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
def test_resize_random_inputs_match_onnxruntime(mode):
    """Position-embedding and mask resizes (up, down, one axis, to length 1) in every
    coordinate mode the kernel folds, given by scales and by sizes."""
    rng = np.random.default_rng(11)
    coordinate_modes = ["half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"]
    checked = 0
    for dtype in [np.float32, np.float64, np.float16]:
        x = _random(rng, (1, 3, 5, 7), dtype)
        for coords in coordinate_modes:
            attrs = {"mode": mode, "coordinate_transformation_mode": coords}
            if mode == "cubic":
                attrs["cubic_coeff_a"] = -0.75 if coords != "asymmetric" else -0.5
            if mode == "nearest":
                attrs["nearest_mode"] = {"half_pixel": "round_prefer_floor", "asymmetric": "floor"}.get(coords, "ceil")
            cases = [{"sizes": [1, 3, 9, 4]}, {"sizes": [1, 3, 1, 12]}, {"sizes": [1, 3, 5, 7]}]
            if coords != "align_corners":
                cases += [{"scales": [1.0, 1.0, 2.0, 0.5]}, {"scales": [1.0, 1.0, 1.5, 3.0]}]
            for case in cases:
                got, expected = _resize_both(x, attrs, **case)
                tol = {np.float16: 2e-3}.get(dtype, 1e-5)
                assert np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol), (
                    f"{np.dtype(dtype).name} {attrs} {case}: max err {np.abs(got - expected).max()}"
                )
                checked += 1
            if mode == "cubic":
                got, expected = _resize_both(x, {**attrs, "exclude_outside": 1}, sizes=[1, 3, 8, 3])
                assert np.allclose(got, expected, rtol=tol, atol=tol), f"exclude_outside {attrs}"
    assert checked >= 50


def test_resize_forms_the_kernel_does_not_fold_stay():
    """antialias and tf_crop_and_resize are left as nodes (no kernel form), never guessed."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    for attrs in ({"mode": "linear", "antialias": 1}, {"coordinate_transformation_mode": "tf_crop_and_resize"}):
        node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
        inits = [numpy_helper.from_array(x, "x"), numpy_helper.from_array(np.array([1, 1, 2, 2], np.int64), "sizes")]
        out = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
        model = helper.make_model(
            helper.make_graph([node], "g", [], [out], initializer=inits),
            opset_imports=[helper.make_opsetid("", 18)],
        )
        report: list = []
        folded = osg.run(model, FOLD, report=report)
        assert [n.op_type for n in folded.graph.node] == ["Resize"], attrs
        assert report[0]["counts"].get("left/unsupported") == 1, report[0]["counts"]


def test_cumsum_random_inputs_match_onnxruntime():
    rng = np.random.default_rng(7)
    checked = 0
    for dtype in [np.float32, np.float64, np.int32, np.int64]:
        x = _random(rng, (2, 3, 4), dtype)
        for axis, exclusive, reverse in itertools.product([0, -1, 1], [0, 1], [0, 1]):
            got = _run_both("CumSum", [x, np.array(axis, np.int64)], {"exclusive": exclusive, "reverse": reverse})
            if got is None:
                continue
            assert _close(*got) is None, f"{np.dtype(dtype).name} axis={axis} {exclusive=} {reverse=}"
            checked += 1
    assert checked >= 40


def test_matmul_softmax_layernorm_random_inputs_match_onnxruntime():
    """The kernels that fold a constant attention block (a DETR decoder's first self-attention)."""
    rng = np.random.default_rng(13)
    cases = [
        ("MatMul", [(3, 4), (4, 5)], None),
        ("MatMul", [(2, 1, 3, 4), (5, 4, 2)], None),
        ("MatMul", [(4,), (2, 4, 3)], None),
        ("MatMul", [(2, 3, 4), (4,)], None),
        ("Softmax", [(2, 3, 5)], {"axis": -1}),
        ("Softmax", [(2, 3, 5)], {"axis": 1}),
        ("LayerNormalization", [(2, 3, 8), (8,), (8,)], {"epsilon": 1e-5}),
        ("LayerNormalization", [(2, 3, 8), (3, 8)], {"axis": 1}),
    ]
    checked = 0
    for dtype in [np.float32, np.float64, np.float16, np.int32, np.int64]:
        for op, shapes, attrs in cases:
            if op != "MatMul" and not np.issubdtype(dtype, np.floating):
                continue
            got = _run_both(op, [_random(rng, s, dtype) for s in shapes], attrs)
            if got is None:
                continue
            assert _close(*got) is None, f"{op} {shapes} {np.dtype(dtype).name}: {_close(*got)}"
            checked += 1
    assert checked >= 15


def test_matmul_over_the_multiply_add_budget_stays():
    """Two constants whose product would take seconds to compute are left as a MatMul."""
    a = np.ones((1024, 1024), np.float32)
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    inits = [numpy_helper.from_array(a, "a"), numpy_helper.from_array(a, "b")]
    out = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph([node], "g", [], [out], initializer=inits), opset_imports=[helper.make_opsetid("", 18)]
    )
    report: list = []
    folded = osg.run(model, FOLD, report=report)
    assert [n.op_type for n in folded.graph.node] == ["MatMul"]
    assert report[0]["counts"].get("left/over-max-size") == 1, report[0]["counts"]
