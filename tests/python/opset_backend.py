"""Opset conversion measured on the ONNX backend node tests.

Every node test model is converted to every lower opset down to 7 (`direction="down"`)
and to every higher opset up to the newest one both this build's onnx defines and
onnxruntime loads (`direction="up"`); a conversion counts as *verified* when the result
passes onnx's full checker, claims the target opset, and onnxruntime, fed the test's own
inputs, reproduces the test's expected outputs.

Conversions are chained (opset t is converted from the verified or attempted result at
t+1, or t-1 upwards; each step is an exact rewrite, so the chain computes what a direct
conversion computes), and onnxruntime only runs when the converted graph differs from the
one already verified at the previous target: same nodes, same attributes, and every op
meaning what it meant there (its schema versions in between differ in their type lists at
most; a step where the op's documentation, attributes or inputs changed may change what
the same node computes, so it is run again).

Upwards, the test models are mostly at their op's newest version, so the older forms
their downward conversions wrote (Split with a `split` attribute, Reduce* with `axes`
attributes, Upsample, Clip-6, Slice-1, ...) are converted back up too
(`evaluate_roundtrip`).

Used by tests/python/test_opset_backend.py (onnxsurgeon, with a floor) and by
bench/opset_backend_report.py (both converters, for docs/opset-conversion.md).
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from pathlib import Path

import numpy as np
import onnx
from backend_node_cases import node_models
from onnx import numpy_helper

LOWEST = 7
# Tests whose expected outputs cannot be compared (random outputs, or ORT builds lacking
# the op) are still counted: they simply never verify, for either converter.
RTOL, ATOL = 1e-3, 1e-5


def default_opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), -1)


def _load_proto(path: Path, model_input):
    data = path.read_bytes()
    if model_input.type.HasField("tensor_type"):
        t = onnx.TensorProto()
        t.ParseFromString(data)
        return numpy_helper.to_array(t)
    return None  # sequences, optionals, maps: not compared here


@dataclasses.dataclass
class Case:
    name: str
    model: onnx.ModelProto
    inputs: list[dict]
    outputs: list[list]
    variant: str = ""  # "" the test as written; "constant parameters" (with_constant_parameters)

    @property
    def opset(self) -> int:
        return default_opset(self.model)


def load_cases() -> list[Case]:
    cases = []
    for path in node_models():
        model = onnx.load(path)
        if any(o.domain not in ("", "ai.onnx") for o in model.opset_import):
            continue  # ai.onnx.ml / preview tests: other domains
        if any(not vi.type.HasField("tensor_type") for vi in list(model.graph.input) + list(model.graph.output)):
            continue  # sequence/optional I/O: not comparable with the plain runner below
        sets = sorted(path.parent.glob("test_data_set_*"))
        inputs, outputs = [], []
        for d in sets:
            inputs.append(
                {
                    vi.name: _load_proto(d / f"input_{i}.pb", vi)
                    for i, vi in enumerate(model.graph.input)
                    if (d / f"input_{i}.pb").exists()
                }
            )
            outputs.append([_load_proto(d / f"output_{i}.pb", vi) for i, vi in enumerate(model.graph.output)])
        if not sets:
            continue
        cases.append(Case(path.parent.name, model, inputs, outputs))
    return cases


@functools.cache
def _former_attributes(op: str) -> frozenset:
    """The inputs of `op` that some older version took as an attribute (Resize's scales:
    Upsample-7's). Exact names, or Pad's value -> constant_value."""
    attributes, inputs = set(), set()
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx") and schema.name == op:
            attributes |= {a.lower() for a in schema.attributes}
            inputs |= {p.name for p in schema.inputs}
    former = {i for i in inputs if i.lower() in attributes}
    if op == "Pad":
        former.add("constant_value")
    if op == "Resize":
        former.add("scales")
    return frozenset(former)


def with_constant_parameters(case: Case) -> Case | None:
    """The case with its parameter inputs made initializers, or None when it has none.

    A parameter input is a graph input every reader takes at a position an older version
    of its op had an attribute for (axes, pads, K, starts/ends, split, scales, min/max,
    ratio...), the same in every data set. The node tests feed most of them as graph
    inputs, which no conversion turns into an attribute; made constants, the downward
    conversion writes the older forms, whose upward conversion evaluate_roundtrip checks."""
    graph = case.model.graph
    opset = case.opset
    readers = collections.defaultdict(list)
    for node in graph.node:
        for k, name in enumerate(node.input):
            readers[name].append((node, k))
    frozen = {}
    for vi in graph.input:
        values = [feeds.get(vi.name) for feeds in case.inputs]
        if not readers[vi.name] or any(v is None for v in values):
            continue
        if any(not np.array_equal(v, values[0]) or v.dtype != values[0].dtype for v in values[1:]):
            continue
        parameter = True
        for node, k in readers[vi.name]:
            try:
                formals = onnx.defs.get_schema(node.op_type, opset, node.domain).inputs
            except Exception:  # noqa: BLE001 - not an onnx op
                formals = []
            name = formals[min(k, len(formals) - 1)].name if formals else ""
            parameter &= node.domain in ("", "ai.onnx") and name in _former_attributes(node.op_type)
        if parameter:
            frozen[vi.name] = values[0]
    if not frozen:
        return None
    model = onnx.ModelProto()
    model.CopyFrom(case.model)
    kept = [vi for vi in model.graph.input if vi.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    for name, value in frozen.items():
        model.graph.initializer.append(numpy_helper.from_array(value, name))
    inputs = [{k: v for k, v in feeds.items() if k not in frozen} for feeds in case.inputs]
    return Case(case.name, model, inputs, case.outputs, "constant parameters")


def _meaning(schema) -> tuple:
    """What a schema version says besides its type lists."""
    return (
        schema.doc,
        sorted(
            (n, a.type, a.required, a.default_value.SerializeToString(), a.description)
            for n, a in schema.attributes.items()
        ),
        [(p.name, int(p.option), p.description) for p in schema.inputs],
        [(p.name, int(p.option), p.description) for p in schema.outputs],
    )


@functools.cache
def _epoch(domain: str, op: str, opset: int) -> int:
    """The opset since which `op` (at `opset`) means what it means there: the version in
    force, or an earlier one that only differs in its type lists. -1 when unknown."""
    try:
        schema = onnx.defs.get_schema(op, opset, domain)
    except Exception:  # noqa: BLE001 - a function or unknown op: its name stands for itself
        return -1
    while schema.since_version > 1:
        try:
            older = onnx.defs.get_schema(op, schema.since_version - 1, domain)
        except Exception:  # noqa: BLE001 - no older version
            break
        if older.deprecated or _meaning(older) != _meaning(schema):
            break
        schema = older
    return schema.since_version


def _op_versions(model: onnx.ModelProto) -> tuple:
    """Per node (subgraphs and functions included), the opset since which its op means what
    it means at the model's import (_epoch)."""
    epochs = []

    def walk(graph: onnx.GraphProto, imports: dict) -> None:
        for node in graph.node:
            domain = node.domain if node.domain != "ai.onnx" else ""
            epochs.append(_epoch(domain, node.op_type, imports.get(domain, 0)))
            for a in node.attribute:
                for g in [a.g] if a.HasField("g") else list(a.graphs):
                    walk(g, imports)

    walk(model.graph, {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in model.opset_import})
    for f in model.functions:
        walk(f, {(o.domain if o.domain != "ai.onnx" else ""): o.version for o in f.opset_import})
    return tuple(epochs)


def _graph_key(model: onnx.ModelProto) -> tuple:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.opset_import[:]
    m.ir_version = 0
    return m.SerializeToString(deterministic=True), _op_versions(model)


NO_KERNEL = "NOT_IMPLEMENTED : Could not find an implementation for"


def _close(got, expected) -> bool:
    for g, e in zip(got, expected):
        if e is None:
            continue
        g, e = np.asarray(g), np.asarray(e)
        if g.shape != e.shape:
            return False
        if e.dtype.kind in "fc":
            if not np.allclose(g.astype(np.float64), e.astype(np.float64), rtol=RTOL, atol=ATOL, equal_nan=True):
                return False
        elif not np.array_equal(g, e):
            return False
    return True


def ort_outputs(model: onnx.ModelProto, case: Case) -> list | str:
    """onnxruntime's outputs for each of the case's data sets, or why it gave none:
    "no kernel: <what onnxruntime lacks>" or "error: <message>"."""
    import onnxruntime as ort

    ort.set_default_logger_severity(3)  # RoiAlign's kernel warns on every construction
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    # One thread: no pool to start and stop per session (a third of the time per case).
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        return [session.run(None, feeds) for feeds in case.inputs]
    except Exception as e:  # noqa: BLE001 - a model ORT refuses or fails on is simply not verified
        message = str(e)
        if NO_KERNEL in message:
            return "no kernel: " + message.split(NO_KERNEL, 1)[1].split(" node", 1)[0].strip()
        if "Failed to find kernel for" in message:  # the same, said when the session runs
            return "no kernel: " + message.split("Failed to find kernel for", 1)[1].split(" (", 1)[0].strip()
        return "error: " + message.splitlines()[0][:200] if message else "error"


def check_in_ort(model: onnx.ModelProto, case: Case) -> str | None:
    """None when onnxruntime reproduces the case's expected outputs from its inputs, else
    why not: "mismatch", or why it gave no outputs (ort_outputs)."""
    got = ort_outputs(model, case)
    if isinstance(got, str):
        return got
    return None if all(_close(g, e) for g, e in zip(got, case.outputs)) else "mismatch"


def same_as_own_model_in_ort(model: onnx.ModelProto, case: Case) -> bool:
    """Whether onnxruntime computes from `model` what it computes from the case's own model
    at the case's own opset (for cases whose expected outputs it does not reproduce)."""
    key = (case.name, case.variant)
    if key not in _OWN_OUTPUTS:
        _OWN_OUTPUTS[key] = ort_outputs(case.model, case) if case.opset >= LOWEST else "below opset 7"
    own, got = _OWN_OUTPUTS[key], ort_outputs(model, case)
    return not isinstance(own, str) and not isinstance(got, str) and all(_close(g, o) for g, o in zip(got, own))


_OWN_OUTPUTS: dict[tuple, list | str] = {}


def _runs(model: onnx.ModelProto, case: Case) -> bool:
    return check_in_ort(model, case) is None


@functools.cache
def ort_runs_opset(opset: int) -> bool:
    """True when onnxruntime loads a model of this opset at all (a trivial Identity)."""
    import onnxruntime as ort
    from onnx import TensorProto, helper

    g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    try:
        ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        return True
    except Exception:  # noqa: BLE001
        return False


def convert_onnxsurgeon(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
    import onnxsurgeon as osg

    return osg.run(model, f"convert-opset={target}")


def convert_onnx(model: onnx.ModelProto, target: int) -> onnx.ModelProto:
    from onnx import version_converter

    return version_converter.convert_version(model, target)


@dataclasses.dataclass
class Tally:
    attempted: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    converted: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    verified: collections.Counter = dataclasses.field(default_factory=collections.Counter)
    # Per conversion, keyed (case, target) (round trips: (case, target, start opset)): the
    # ones verified, and the ones converted whose outputs onnxruntime did not reproduce,
    # with why (check_in_ort).
    verified_pairs: set = dataclasses.field(default_factory=set)
    unverified: dict = dataclasses.field(default_factory=dict)
    # Downwards with keep_models: per case, the verified models by target opset.
    models: dict = dataclasses.field(default_factory=dict)
    # The converted models whose outputs differ from the expected ones, by conversion.
    mismatched: dict = dataclasses.field(default_factory=dict)

    @property
    def unverified_pairs(self) -> set:
        return set(self.unverified)


@functools.cache
def highest() -> int:
    """The newest opset this build's onnx defines and onnxruntime loads."""
    top = onnx.defs.onnx_opset_version()
    while top > LOWEST and not ort_runs_opset(top):
        top -= 1
    return top


def targets(opset: int, direction: str) -> range:
    if direction == "down":
        return range(opset - 1, LOWEST - 1, -1)
    if direction == "up":
        return range(max(opset + 1, LOWEST), highest() + 1)
    raise ValueError(direction)


def _chain(tally: Tally, case: Case, start: onnx.ModelProto, goals, convert, chained: bool, pair) -> None:
    """Converts `start` to every opset of `goals` in turn (chained: each from the previous
    result) and verifies each result; `pair(target)` names the conversion in the tally."""
    current = start
    last_key, last_ok = None, False
    for target in goals:
        tally.attempted[target] += 1
        try:
            converted = convert(current if chained else start, target)
            onnx.checker.check_model(converted, full_check=True)
            if default_opset(converted) != target:
                raise ValueError("wrong opset")
        except Exception:  # noqa: BLE001 - a refusal or a broken result: not converted
            if chained:
                # Later targets start from the original again (a refusal may be one
                # step's; further targets can still decompose around it).
                current = start
                last_key = None
            continue
        tally.converted[target] += 1
        key = _graph_key(converted)
        # A graph verified at the previous target is verified at t (same nodes, ops that
        # mean the same: _op_versions); a failure is retried, as it may be the runtime
        # refusing the other opset itself.
        why = None if key == last_key and last_ok else check_in_ort(converted, case)
        last_key, last_ok = key, why is None
        if why is None:
            tally.verified[target] += 1
            tally.verified_pairs.add(pair(target))
        else:
            tally.unverified[pair(target)] = why
            if why == "mismatch":
                tally.mismatched[pair(target)] = converted
        if chained:
            current = converted
        yield target, converted, why


def evaluate(
    cases: list[Case], convert, chained: bool = True, direction: str = "down", keep_models: bool = False
) -> Tally:
    """Converts every case to every opset below it (down) or above it (up)."""
    tally = Tally()
    for case in cases:
        for target, converted, why in _chain(
            tally, case, case.model, targets(case.opset, direction), convert, chained, lambda t: (case.name, t)
        ):
            if keep_models and why is None:
                tally.models.setdefault((case.name, case.variant), {})[target] = converted
    return tally


def older_forms(cases: list[Case], down: Tally, convert) -> tuple[list[Case], dict]:
    """What evaluate_roundtrip upgrades: the cases and their constant-parameter variants,
    and the starts of each (from `down`, evaluate(..., keep_models=True) on `cases`; the
    variants are downgraded here, not counted anywhere)."""
    variants = [v for v in map(with_constant_parameters, cases) if v is not None]
    models = dict(down.models)
    models.update(evaluate(variants, convert, keep_models=True).models)
    return cases + variants, {key: roundtrip_starts(verified) for key, verified in models.items()}


def roundtrip_starts(verified: dict[int, onnx.ModelProto]) -> dict[int, onnx.ModelProto]:
    """The downgraded forms of a case worth upgrading again: where the downward chain
    changed the graph, the lowest opset of each distinct graph (its older signatures)."""
    starts, seen = {}, set()
    for t in sorted(verified):
        graph = _graph_key(verified[t])[0]
        if graph not in seen:
            seen.add(graph)
            starts[t] = verified[t]
    return starts


def evaluate_roundtrip(cases: list[Case], starts: dict[tuple, dict[int, onnx.ModelProto]], convert) -> Tally:
    """Upward conversion of the older forms of each case: every start (the case downgraded
    and verified at opset s, roundtrip_starts; keyed by (case name, variant)) converted to
    the opset of the next start, where the downward chain had changed the graph again
    (from there up the form is that start's to check), the last one to the case's own
    opset. Where onnxruntime has no kernel for an op at that opset, the next lower opset
    is tried. Counted by the start's opset s; named (case, target, s, variant)."""
    tally = Tally()
    for case in cases:
        forms = starts.get((case.name, case.variant), {})
        opsets = sorted(forms)
        for s, end in zip(opsets, [*opsets[1:], case.opset]):
            tally.attempted[s] += 1
            converted_once = False
            for target in range(end, s, -1):
                try:
                    converted = convert(forms[s], target)
                    onnx.checker.check_model(converted, full_check=True)
                    if default_opset(converted) != target:
                        raise ValueError("wrong opset")
                except Exception:  # noqa: BLE001 - a refusal or a broken result: not converted
                    break
                converted_once = True
                why = check_in_ort(converted, case)
                if why is None or not why.startswith("no kernel") or target == s + 1:
                    break
            if not converted_once:
                continue
            tally.converted[s] += 1
            if why is None:
                tally.verified[s] += 1
                tally.verified_pairs.add((case.name, target, s, case.variant))
            else:
                tally.unverified[(case.name, target, s, case.variant)] = why
                if why == "mismatch":
                    tally.mismatched[(case.name, target, s, case.variant)] = converted
    return tally


def baseline(case: Case) -> str | None:
    """Whether onnxruntime reproduces the case's own model at its own opset (None) or why not."""
    key = (case.name, case.variant)
    if key not in _BASELINE:
        _BASELINE[key] = check_in_ort(case.model, case) if case.opset >= LOWEST else "below opset 7"
    return _BASELINE[key]


_BASELINE: dict[tuple, str | None] = {}


def fractions(tally: Tally) -> dict[int, float]:
    return {t: tally.verified[t] / tally.attempted[t] for t in sorted(tally.attempted) if tally.attempted[t]}
