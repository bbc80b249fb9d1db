"""Opset conversion measured on the ONNX backend node tests.

Every node test model is converted to every lower opset down to 7; a conversion counts
as *verified* when the result passes onnx's full checker, claims the target opset, and
onnxruntime, fed the test's own inputs, reproduces the test's expected outputs.

Conversions are chained (opset t is converted from the verified or attempted result at
t+1; each step is an exact rewrite, so the chain computes what a direct conversion
computes), and onnxruntime only runs when the converted graph differs from the one
already verified at t+1 (same nodes, same attributes: the kernels are the same ones).

Used by tests/python/test_opset_backend.py (onnxsurgeon, with a floor) and by
bench/opset_backend_report.py (both converters, for docs/opset-conversion.md).
"""

from __future__ import annotations

import collections
import dataclasses
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


def _graph_key(model: onnx.ModelProto) -> bytes:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    del m.opset_import[:]
    m.ir_version = 0
    return m.SerializeToString(deterministic=True)


def _runs(model: onnx.ModelProto, case: Case) -> bool:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 4
    try:
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        for feeds, expected in zip(case.inputs, case.outputs):
            got = session.run(None, feeds)
            for g, e in zip(got, expected):
                if e is None:
                    continue
                g = np.asarray(g)
                if g.shape != e.shape:
                    return False
                if e.dtype.kind in "fc":
                    if not np.allclose(
                        g.astype(np.float64), e.astype(np.float64), rtol=RTOL, atol=ATOL, equal_nan=True
                    ):
                        return False
                elif not np.array_equal(g, e):
                    return False
        return True
    except Exception:  # noqa: BLE001 - a model ORT refuses or fails on is simply not verified
        return False


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
    # (case, target) pairs verified, and converted but not reproducing the outputs
    verified_pairs: set = dataclasses.field(default_factory=set)
    unverified_pairs: set = dataclasses.field(default_factory=set)


def evaluate(cases: list[Case], convert, chained: bool = True) -> Tally:
    tally = Tally()
    for case in cases:
        current = case.model
        last_key, last_ok = None, False
        for target in range(case.opset - 1, LOWEST - 1, -1):
            tally.attempted[target] += 1
            try:
                converted = convert(current if chained else case.model, target)
                onnx.checker.check_model(converted, full_check=True)
                if default_opset(converted) != target:
                    raise ValueError("wrong opset")
            except Exception:  # noqa: BLE001 - a refusal or a broken result: not converted
                if chained:
                    # Later targets start from the original again (a refusal may be one
                    # step's; lower targets can still decompose around it).
                    current = case.model
                    last_key = None
                continue
            tally.converted[target] += 1
            key = _graph_key(converted)
            # A graph verified at t+1 is verified at t (same kernels); a failure is retried,
            # as it may be the runtime refusing the newer opset itself.
            ok = (key == last_key and last_ok) or _runs(converted, case)
            last_key, last_ok = key, ok
            if ok:
                tally.verified[target] += 1
                tally.verified_pairs.add((case.name, target))
            else:
                tally.unverified_pairs.add((case.name, target))
            if chained:
                current = converted
    return tally


def fractions(tally: Tally) -> dict[int, float]:
    return {t: tally.verified[t] / tally.attempted[t] for t in sorted(tally.attempted) if tally.attempted[t]}
