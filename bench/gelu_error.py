#!/usr/bin/env python3
"""Measures the error of the GELU / Erf lowerings that are approximations.

    python bench/gelu_error.py [--points N] [--range R]

Builds Gelu(x) (approximate none and tanh) and Erf(x) models, runs them through the
onnxsurgeon pipelines below, evaluates the results with onnxruntime on N evenly spaced
points of [-R, R] (default 2,000,001 points of [-10, 10]) and prints the max abs error
against the exact function computed in float64 (math.erf). The numbers quoted in
passes/gelu/rewrite_gelu.cc, passes/gelu/rewrite_erf.cc and docs/passes/gelu.md come from here;
tests/python/test_gelu.py re-measures and checks them against stated bounds.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
import onnxsurgeon as osg  # noqa: E402

_erf = np.frompyfunc(math.erf, 1, 1)


def exact_erf(x: np.ndarray) -> np.ndarray:
    return _erf(x.astype(np.float64)).astype(np.float64)


def exact_gelu(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + exact_erf(x / math.sqrt(2.0)))


def tanh_gelu(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def single_op_model(op: str, elem_type: int = TensorProto.FLOAT, **attrs) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        op.lower(),
        [helper.make_tensor_value_info("x", elem_type, ["N"])],
        [helper.make_tensor_value_info("y", elem_type, ["N"])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)


def evaluate(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # no refusion
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0].astype(np.float64)


def ops(model: onnx.ModelProto) -> set[str]:
    return {n.op_type for n in model.graph.node}


# name -> (source op, attrs, pipeline, reference, element type, ops that must be gone)
CASES = {
    "gelu tanh form vs exact GELU": (
        "Gelu",
        {},
        "rewrite-gelu(to=tanh)",
        exact_gelu,
        TensorProto.FLOAT,
        {"Gelu", "Erf"},
    ),
    "gelu sigmoid form vs exact GELU": (
        "Gelu",
        {},
        "rewrite-gelu(to=sigmoid)",
        exact_gelu,
        TensorProto.FLOAT,
        {"Gelu", "Erf"},
    ),
    "gelu sigmoid form vs tanh GELU": (
        "Gelu",
        {"approximate": "tanh"},
        "rewrite-gelu(to=sigmoid)",
        tanh_gelu,
        TensorProto.FLOAT,
        {"Gelu", "Tanh"},
    ),
    "gelu erf form + rewrite-erf vs exact GELU": (
        "Gelu",
        {},
        "rewrite-gelu,rewrite-erf",
        exact_gelu,
        TensorProto.FLOAT,
        {"Gelu", "Erf"},
    ),
    "erf rational float32": ("Erf", {}, "rewrite-erf", exact_erf, TensorProto.FLOAT, {"Erf"}),
    "erf rational float64": ("Erf", {}, "rewrite-erf", exact_erf, TensorProto.DOUBLE, {"Erf"}),
    # Exact lowerings, for contrast: their error is fp32 rounding only.
    "gelu erf form vs exact GELU (exact lowering)": (
        "Gelu",
        {},
        "rewrite-gelu",
        exact_gelu,
        TensorProto.FLOAT,
        {"Gelu"},
    ),
    "gelu tanh Gelu -> tanh form vs tanh GELU (exact lowering)": (
        "Gelu",
        {"approximate": "tanh"},
        "rewrite-gelu",
        tanh_gelu,
        TensorProto.FLOAT,
        {"Gelu"},
    ),
}


def measure(points: int = 2_000_001, limit: float = 10.0) -> dict[str, float]:
    """Max abs error of every case over `points` evenly spaced points of [-limit, limit]."""
    grid = np.linspace(-limit, limit, points)
    results = {}
    for name, (op, attrs, pipeline, reference, elem_type, gone) in CASES.items():
        rewritten = osg.run(single_op_model(op, elem_type, **attrs), pipeline)
        left = ops(rewritten) & gone
        if left:
            raise AssertionError(f"{name}: {pipeline} left {sorted(left)}")
        x = grid.astype(np.float32 if elem_type == TensorProto.FLOAT else np.float64)
        got = evaluate(rewritten, x)
        results[name] = float(np.max(np.abs(got - reference(x))))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--points", type=int, default=2_000_001)
    parser.add_argument("--range", type=float, default=10.0, dest="limit")
    args = parser.parse_args()
    print(f"max abs error on {args.points} points of [-{args.limit:g}, {args.limit:g}] (onnxruntime {ort.__version__})")
    for name, err in measure(args.points, args.limit).items():
        print(f"  {name:60s} {err:.3e}")


if __name__ == "__main__":
    main()
