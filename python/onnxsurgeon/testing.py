"""Test oracle for onnxsurgeon: numerical equivalence, validity and op histograms.

A rewrite is only correct if the rewritten model computes the same function as the
original one, so every pass test runs both models in onnxruntime on the same inputs and
compares all outputs.  Graph optimizations are disabled in the sessions: otherwise ORT
would apply its own fusions (LayerNorm, GELU, constant folding...) to both models and
could hide a difference, or a broken pattern, that the rewrite introduced.

This module is deliberately pure Python (onnx, onnxruntime, numpy) and imports nothing
from the onnxsurgeon package, so it works before the C++ extension is built and can check
the CLI as an external program.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Union

import numpy as np
import onnx
import onnxruntime as ort

__all__ = [
    "ModelLike",
    "InputSets",
    "OutputComparison",
    "default_tolerance",
    "compare_outputs",
    "comparable",
    "load_model",
    "random_inputs",
    "run_model",
    "assert_outputs_close",
    "assert_equivalent",
    "assert_valid",
    "op_histogram",
    "assert_ops",
    "domains",
    "TOLERANCES",
    "tolerance_for",
]

ModelLike = Union[onnx.ModelProto, bytes, str, os.PathLike]
# One input set ({input name: array}) or several (a model with an If is only judged once
# every branch has run: a merged decoder needs use_cache_branch False and True).
InputSets = Union[Mapping[str, np.ndarray], Sequence[Mapping[str, np.ndarray]]]

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _load_tolerance():
    """The per-dtype tolerance table --check, compare and bisect use (tolerance.py beside
    this file), loaded by path: this module must not import the compiled package."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tolerance.py")
    spec = importlib.util.spec_from_file_location("onnxsurgeon_tolerance", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_tolerance = _load_tolerance()
# (atol, rtol) per numpy dtype name; integers and bool exact. The one table (tolerance.py).
TOLERANCES = _tolerance.TOLERANCES


def tolerance_for(dtype) -> tuple[float, float]:
    """(atol, rtol) --check applies to an element type (a numpy dtype or its name)."""
    return _tolerance.tolerance_for(np.dtype(dtype).name if not isinstance(dtype, str) else dtype)


# --------------------------------------------------------------------------- loading


def _is_path(model: object) -> bool:
    return isinstance(model, (str, os.PathLike))


def load_model(model: ModelLike, *, load_external_data: bool = False) -> onnx.ModelProto:
    """Returns `model` as a ModelProto.

    External data is not loaded by default: structure checks (histograms, signatures)
    do not need weights, and skipping them keeps multi-GB models cheap to inspect.
    """
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    if _is_path(model):
        return onnx.load(os.fspath(model), load_external_data=load_external_data)
    raise TypeError(f"expected onnx.ModelProto, bytes or a path, got {type(model).__name__}")


def _describe(model: ModelLike) -> str:
    if _is_path(model):
        return os.fspath(model)
    if isinstance(model, onnx.ModelProto):
        return f"<ModelProto graph {model.graph.name!r}>"
    return f"<{len(model)} bytes>"


def _session(model: ModelLike, label: str) -> ort.InferenceSession:
    """A CPU session with every ORT graph optimization disabled (see module docstring).

    Paths are handed to ORT as paths so that external data next to the file is found
    and models above the 2 GiB protobuf limit work.
    """
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    # One thread: reductions then always run in the same order, so two runs of the same
    # model are bit-identical and any difference is the rewrite's.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    if _is_path(model):
        source: Union[str, bytes] = os.fspath(model)
    elif isinstance(model, onnx.ModelProto):
        source = model.SerializeToString()
    elif isinstance(model, (bytes, bytearray)):
        source = bytes(model)
    else:
        raise TypeError(f"expected onnx.ModelProto, bytes or a path, got {type(model).__name__}")
    try:
        return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # ORT raises its own exception types (Fail, InvalidGraph...)
        raise RuntimeError(f"onnxruntime cannot load the {label} model {_describe(model)}: {exc}") from exc


# ---------------------------------------------------------------------------- inputs


def _graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that the caller must feed (initializers listed as inputs excluded)."""
    initializers = {init.name for init in model.graph.initializer}
    initializers.update(init.values.name for init in model.graph.sparse_initializer)
    return [vi for vi in model.graph.input if vi.name not in initializers]


def random_inputs(
    model: ModelLike,
    dim_values: Mapping[str, int] | None = None,
    *,
    seed: int = 0,
    default_dim: int = 2,
    int_range: tuple[int, int] = (0, 2),
) -> dict[str, np.ndarray]:
    """Random feeds for every graph input, keyed by input name.

    Symbolic dimensions take their value from `dim_values` (keyed by dim_param) or
    `default_dim`.  Floats are standard normal; integers are drawn from the half-open
    `int_range`, small so that they are valid token ids, gather indices and loop counts
    for any real model; booleans are uniform.  Random data is no substitute for real
    inputs where semantics matter: a random 0/1 attention mask over few tokens often
    leaves one visible key, and attention then ignores the queries entirely.
    """
    proto = load_model(model)
    dim_values = dict(dim_values or {})
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for vi in _graph_inputs(proto):
        if not vi.type.HasField("tensor_type"):
            raise ValueError(f"input {vi.name!r} is not a tensor ({vi.type.WhichOneof('value')}); pass inputs=")
        tensor_type = vi.type.tensor_type
        if not tensor_type.HasField("shape"):
            raise ValueError(f"input {vi.name!r} has no shape (unknown rank); pass inputs=")
        shape = []
        for dim in tensor_type.shape.dim:
            if dim.HasField("dim_value"):
                shape.append(dim.dim_value)
            elif dim.HasField("dim_param") and dim.dim_param in dim_values:
                shape.append(int(dim_values[dim.dim_param]))
            else:
                shape.append(default_dim)
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type))
        if dtype.kind == "f" or dtype.name == "bfloat16":
            value = rng.standard_normal(shape).astype(dtype)
        elif dtype.kind in "iu":
            value = rng.integers(int_range[0], int_range[1], size=shape).astype(dtype)
        elif dtype.kind == "b":
            value = rng.integers(0, 2, size=shape).astype(bool)
        else:
            raise ValueError(f"input {vi.name!r}: cannot generate random {dtype} data; pass inputs=")
        feeds[vi.name] = value
    return feeds


def _check_feeds(session: ort.InferenceSession, inputs: Mapping[str, np.ndarray], label: str) -> None:
    wanted = [i.name for i in session.get_inputs()]
    missing = [n for n in wanted if n not in inputs]
    unexpected = [n for n in inputs if n not in wanted]
    if missing or unexpected:
        raise ValueError(f"{label} model inputs are {wanted}; missing feeds {missing}, unexpected feeds {unexpected}")


def _run(session: ort.InferenceSession, inputs: Mapping[str, np.ndarray], label: str) -> dict[str, np.ndarray]:
    _check_feeds(session, inputs, label)
    names = [o.name for o in session.get_outputs()]
    values = session.run(names, {k: np.asarray(v) for k, v in inputs.items()})
    return {name: comparable(value) for name, value in zip(names, values)}


def comparable(value: object) -> np.ndarray:
    """An output as an array the comparison understands. onnxruntime returns a seq(map)
    output (skl2onnx's ZipMap: one {class: probability} per row) as a list of dicts; it
    becomes a structured array with one field per key (str(key), in the map's order), so
    a changed key set shows as a dtype difference and the values compare elementwise."""
    if isinstance(value, list) and value and all(isinstance(row, dict) for row in value):
        keys = list(value[0])
        if any(list(row) != keys for row in value):
            raise ValueError("seq(map) output whose rows have different keys")
        kind = np.result_type(*[np.asarray(v).dtype for v in value[0].values()])
        dtype = np.dtype([(str(k), kind) for k in keys])
        return np.array([tuple(row[k] for k in keys) for row in value], dtype=dtype)
    if isinstance(value, list):  # seq(tensor): stacked when the shapes agree
        return np.stack([np.asarray(v) for v in value]) if value else np.zeros((0,), np.float32)
    array = np.asarray(value)
    if array.dtype == object and all(isinstance(v, str) for v in array.flat):
        return array.astype(str)  # string tensors: as numpy (and np.savez) keep them
    return array


def run_model(model: ModelLike, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Runs `model` in onnxruntime (CPU, no graph optimizations); outputs in graph order."""
    return _run(_session(model, "given"), inputs, "given")


# ------------------------------------------------------------------------ comparison


def _format_index(index: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in index) + "]" if index else "[] (scalar)"


def _scalar(value: np.generic) -> str:
    item = value.item() if hasattr(value, "item") else value
    return f"{item:.9g}" if isinstance(item, float) else repr(item)


def default_tolerance(dtype: np.dtype, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    """(rtol, atol) for an output of `dtype`: the given values, else the dtype's entry in the
    one table (tolerance.py; 0, 0 for exact dtypes: integers, bools, strings)."""
    dtype = np.dtype(dtype)
    if dtype.names:  # ZipMap rows: the fields' dtype
        dtype = dtype.fields[dtype.names[0]][0]
    default_atol, default_rtol = tolerance_for(dtype)
    return (default_rtol if rtol is None else rtol), (default_atol if atol is None else atol)


@dataclasses.dataclass
class OutputComparison:
    """How one output of a model compares with its reference, elementwise."""

    name: str
    dtype: str
    shape: tuple
    ok: bool
    problem: str = ""  # why not ok: dtype, shape, or the worst element
    elements: int = 0
    off: int = 0  # elements beyond tolerance (or different, for exact dtypes)
    max_abs: float = 0.0
    max_rel: float = 0.0
    rtol: float = 0.0
    atol: float = 0.0

    @property
    def share_off(self) -> float:
        return self.off / self.elements if self.elements else 0.0


def _numeric(array: np.ndarray) -> np.ndarray:
    if array.dtype.names:
        from numpy.lib import recfunctions

        return recfunctions.structured_to_unstructured(array)
    return array


def _compare_one_detail(
    name: str,
    actual: np.ndarray,
    desired: np.ndarray,
    rtol: float | None,
    atol: float | None,
    actual_label: str,
    desired_label: str,
) -> OutputComparison:
    actual = np.asarray(actual)
    desired = np.asarray(desired)
    result = OutputComparison(name, str(desired.dtype), tuple(desired.shape), ok=False)
    if actual.dtype != desired.dtype:
        result.problem = f"output {name!r}: dtype {desired_label}={desired.dtype}, {actual_label}={actual.dtype}"
        return result
    if actual.shape != desired.shape:
        result.problem = f"output {name!r}: shape {desired_label}={desired.shape}, {actual_label}={actual.shape}"
        return result
    rtol, atol = default_tolerance(desired.dtype, rtol, atol)
    result.rtol, result.atol = rtol, atol
    actual, desired = _numeric(actual), _numeric(desired)
    result.elements = int(actual.size)
    if actual.size == 0:
        result.ok = True
        return result
    if actual.dtype.kind not in "fc" and actual.dtype.name != "bfloat16":
        bad = actual != desired
        result.off = int(bad.sum())
        result.ok = result.off == 0
        if not result.ok:
            index = np.unravel_index(int(np.argmax(bad)), bad.shape)
            result.problem = (
                f"output {name!r}: {result.off}/{bad.size} elements differ (exact compare, "
                f"{actual.dtype}); first at {_format_index(index)}: {desired_label}={_scalar(desired[index])}, "
                f"{actual_label}={_scalar(actual[index])}"
            )
        if actual.dtype.kind in "iub":
            with np.errstate(over="ignore"):
                diff = np.abs(actual.astype(np.float64) - desired.astype(np.float64))
            result.max_abs = float(diff.max())
        return result
    a = actual.astype(np.float64) if actual.dtype.kind != "c" else actual.astype(np.complex128)
    d = desired.astype(np.float64) if desired.dtype.kind != "c" else desired.astype(np.complex128)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        abs_err = np.abs(a - d)
        tolerance = atol + rtol * np.abs(d)
        nan_a, nan_d = np.isnan(a), np.isnan(d)
        same = (a == d) | (nan_a & nan_d)  # a == d also accepts equal infinities
        bad = ~same & ~(abs_err <= tolerance)
        finite = np.isfinite(abs_err) & ~same
        result.max_abs = float(abs_err[finite].max()) if finite.any() else 0.0
        rel = np.where(np.abs(d) > 0, abs_err / np.abs(d), np.where(abs_err > 0, np.inf, 0.0))
        rel_finite = finite & np.isfinite(rel)
        result.max_rel = float(rel[rel_finite].max()) if rel_finite.any() else 0.0
        result.off = int(bad.sum())
        result.ok = result.off == 0
        if result.ok:
            return result
        # Worst element: the one exceeding its tolerance by most; NaN/inf mismatches first.
        excess = np.where(bad, abs_err - tolerance, -np.inf)
        excess = np.where(bad & ~np.isfinite(excess), np.inf, excess)
        index = np.unravel_index(int(np.argmax(excess)), excess.shape)
        worst_rel = abs_err[index] / np.abs(d[index]) if d[index] != 0 else np.inf
    result.problem = (
        f"output {name!r}: {result.off}/{bad.size} elements differ beyond rtol={rtol:g}, "
        f"atol={atol:g} (max abs err {result.max_abs:.4g}); worst at {_format_index(index)}: "
        f"{desired_label}={_scalar(desired[index])}, {actual_label}={_scalar(actual[index])}, "
        f"abs_err={float(abs_err[index]):.4g}, rel_err={float(worst_rel):.4g}"
    )
    return result


def _compare_one(
    name: str,
    actual: np.ndarray,
    desired: np.ndarray,
    rtol: float | None,
    atol: float | None,
    actual_label: str,
    desired_label: str,
) -> str | None:
    """None when `actual` matches `desired`, else a description of the worst element."""
    result = _compare_one_detail(name, actual, desired, rtol, atol, actual_label, desired_label)
    return None if result.ok else result.problem


def compare_outputs(
    actual: Mapping[str, np.ndarray],
    desired: Mapping[str, np.ndarray],
    rtol: float | None = None,
    atol: float | None = None,
    *,
    actual_label: str = "rewritten",
    desired_label: str = "original",
) -> list[OutputComparison]:
    """Every output of `desired` compared with the same-named output of `actual`, with
    per-dtype tolerances (default_tolerance; rtol/atol None: the dtype's default): one
    OutputComparison each, with the share of elements off and the max abs/rel error.
    An output missing from `actual` is one that is not ok."""
    results = []
    for name in desired:
        if name not in actual:
            d = np.asarray(desired[name])
            results.append(
                OutputComparison(
                    name, str(d.dtype), tuple(d.shape), False, f"output {name!r} missing in {actual_label}"
                )
            )
            continue
        results.append(_compare_one_detail(name, actual[name], desired[name], rtol, atol, actual_label, desired_label))
    return results


def assert_outputs_close(
    actual: Mapping[str, np.ndarray],
    desired: Mapping[str, np.ndarray],
    rtol: float = 1e-4,
    atol: float = 1e-4,
    *,
    actual_label: str = "rewritten",
    desired_label: str = "original",
    check_order: bool = True,
) -> None:
    """Compares two {output name: array} dicts element-wise (|a - d| <= atol + rtol*|d|).

    Names must match (and their order, unless check_order is False: torch reference
    outputs carry no order of their own).  Every differing output is reported, each with
    its worst element, in one AssertionError.
    """
    actual_names, desired_names = list(actual), list(desired)
    if set(actual_names) != set(desired_names) or (check_order and actual_names != desired_names):
        raise AssertionError(
            f"output names differ: {desired_label} has {desired_names}, {actual_label} has {actual_names}"
        )
    failures = []
    for name in desired_names:
        failure = _compare_one(name, actual[name], desired[name], rtol, atol, actual_label, desired_label)
        if failure:
            failures.append(failure)
    if failures:
        raise AssertionError(
            f"{actual_label} does not match {desired_label} in {len(failures)} output(s):\n  " + "\n  ".join(failures)
        )


def assert_equivalent(
    original: ModelLike,
    rewritten: ModelLike,
    inputs: InputSets | None = None,
    rtol: float = 1e-4,
    atol: float = 1e-4,
    dim_values: Mapping[str, int] | None = None,
    *,
    expected: Mapping[str, np.ndarray] | None = None,
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Asserts that `rewritten` computes the same outputs as `original`.

    Both models must have the same input names and the same output names in the same
    order (a rewrite must not change the interface).  Without `inputs`, random inputs are
    generated from the original's signature (see random_inputs; `dim_values` binds
    symbolic dims).  With `expected` (e.g. outputs of the torch module the model was
    exported from), both models are also compared against it, so a rewrite cannot pass
    by matching an already broken original.  `inputs` may be a list of input sets (every
    branch of an If): each is compared (`expected` then holds one dict per set).  Returns
    the rewritten model's outputs (of the last set).
    """
    original_session = _session(original, "original")
    rewritten_session = _session(rewritten, "rewritten")
    original_inputs = [i.name for i in original_session.get_inputs()]
    rewritten_inputs = [i.name for i in rewritten_session.get_inputs()]
    if original_inputs != rewritten_inputs:
        raise AssertionError(f"input names differ: original {original_inputs}, rewritten {rewritten_inputs}")
    if inputs is None:
        inputs = random_inputs(original, dim_values, seed=seed)
    if not isinstance(inputs, Mapping):
        sets = list(inputs)
        expected_sets = list(expected) if expected is not None else [None] * len(sets)
        if len(expected_sets) != len(sets):
            raise ValueError(f"{len(sets)} input sets but {len(expected_sets)} expected output sets")
        outputs = {}
        for number, (one, want) in enumerate(zip(sets, expected_sets)):
            try:
                outputs = _equivalent_on(original_session, rewritten_session, one, rtol, atol, want)
            except AssertionError as exc:
                raise AssertionError(f"input set {number} of {len(sets)}: {exc}") from exc
        return outputs
    return _equivalent_on(original_session, rewritten_session, inputs, rtol, atol, expected)


def _equivalent_on(
    original_session: ort.InferenceSession,
    rewritten_session: ort.InferenceSession,
    inputs: Mapping[str, np.ndarray],
    rtol: float,
    atol: float,
    expected: Mapping[str, np.ndarray] | None,
) -> dict[str, np.ndarray]:
    original_outputs = _run(original_session, inputs, "original")
    rewritten_outputs = _run(rewritten_session, inputs, "rewritten")
    assert_outputs_close(rewritten_outputs, original_outputs, rtol, atol)
    if expected is not None:
        unknown = [name for name in expected if name not in original_outputs]
        if unknown:
            raise AssertionError(f"expected outputs {unknown} are not outputs of the model {list(original_outputs)}")
        for label, outputs in (("original", original_outputs), ("rewritten", rewritten_outputs)):
            assert_outputs_close(
                {name: outputs[name] for name in expected},
                expected,
                rtol,
                atol,
                actual_label=label,
                desired_label="expected",
                check_order=False,
            )
    return rewritten_outputs


# -------------------------------------------------------------------------- validity


def assert_valid(model: ModelLike) -> None:
    """Asserts onnx.checker (full_check) and strict shape inference both accept `model`.

    Paths go through the path-based APIs, which handle external data and models above
    the 2 GiB protobuf limit; an in-memory ModelProto that large cannot be checked.
    """
    try:
        if _is_path(model):
            path = os.fspath(model)
            onnx.checker.check_model(path, full_check=True)
            with tempfile.TemporaryDirectory(prefix="onnxsurgeon-infer-") as tmp:
                # Written next to nothing the caller owns: infer_shapes_path would
                # otherwise overwrite the input model in place.
                out = os.path.join(tmp, "inferred.onnx")
                onnx.shape_inference.infer_shapes_path(path, out, check_type=True, strict_mode=True)
        else:
            proto = load_model(model)
            onnx.checker.check_model(proto, full_check=True)
            onnx.shape_inference.infer_shapes(proto, check_type=True, strict_mode=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
        raise AssertionError(f"model {_describe(model)} is not valid ONNX: {exc}") from exc


# ------------------------------------------------------------------------ histograms


def _op_key(node: onnx.NodeProto) -> str:
    return node.op_type if node.domain in _DEFAULT_DOMAINS else f"{node.domain}::{node.op_type}"


def _walk_nodes(model: onnx.ModelProto, include_subgraphs: bool, include_functions: bool) -> Iterable[onnx.NodeProto]:
    def walk(nodes: Iterable[onnx.NodeProto]) -> Iterable[onnx.NodeProto]:
        for node in nodes:
            yield node
            if not include_subgraphs:
                continue
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    yield from walk(attr.g.node)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for graph in attr.graphs:
                        yield from walk(graph.node)

    yield from walk(model.graph.node)
    if include_functions:
        for function in model.functions:
            yield from walk(function.node)


def op_histogram(
    model: ModelLike, include_subgraphs: bool = True, *, include_functions: bool = False
) -> collections.Counter:
    """Counter of ops keyed "domain::op_type" ("op_type" alone for the ai.onnx domain).

    Subgraphs (If/Loop/Scan bodies) are included by default since passes must rewrite
    them too.  Model-local function bodies are not: a call site already shows up as
    "domain::FunctionName", and counting a body once would not reflect how many times
    it is called.
    """
    proto = load_model(model)
    return collections.Counter(_op_key(n) for n in _walk_nodes(proto, include_subgraphs, include_functions))


def domains(model: ModelLike, include_subgraphs: bool = True, *, include_functions: bool = True) -> set[str]:
    """Domains of all nodes ("ai.onnx" for the default one).

    Function bodies are included by default because the question this answers is
    which operator sets the model depends on to run.
    """
    proto = load_model(model)
    return {
        "ai.onnx" if n.domain in _DEFAULT_DOMAINS else n.domain
        for n in _walk_nodes(proto, include_subgraphs, include_functions)
    }


def assert_ops(
    model: ModelLike,
    absent: Iterable[str] = (),
    exactly: Mapping[str, int] | None = None,
    at_least: Mapping[str, int] | None = None,
    *,
    include_subgraphs: bool = True,
) -> collections.Counter:
    """Asserts op counts (keys as in op_histogram); returns the histogram.

    absent: ops that must not occur; exactly: required counts (0 allowed);
    at_least: minimum counts.  All violations are reported at once.
    """
    histogram = op_histogram(model, include_subgraphs)
    problems = [f"{op} present {histogram[op]} time(s), expected absent" for op in absent if histogram[op]]
    problems += [
        f"{op} present {histogram[op]} time(s), expected exactly {n}"
        for op, n in (exactly or {}).items()
        if histogram[op] != n
    ]
    problems += [
        f"{op} present {histogram[op]} time(s), expected at least {n}"
        for op, n in (at_least or {}).items()
        if histogram[op] < n
    ]
    if problems:
        summary = ", ".join(f"{op}: {n}" for op, n in sorted(histogram.items()))
        raise AssertionError("op histogram check failed:\n  " + "\n  ".join(problems) + f"\nhistogram: {{{summary}}}")
    return histogram
