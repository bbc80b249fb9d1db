"""Opset conversion coverage on the ONNX backend node tests: onnxsurgeon's convert-opset
beside onnx.version_converter, per target opset (docs/opset-conversion.md).

    .venv/bin/python bench/opset_backend_report.py [--out bench/opset_backend_report.json]

A case counts at target t when its model's opset is above t; it is *verified* when the
converted model passes onnx's full checker, claims opset t, and onnxruntime reproduces
the test's expected outputs from its inputs (tests/python/opset_backend.py). Both
converters run the same harness; onnx.version_converter converts directly from the
original model each time (chaining would only lose more), onnxsurgeon chains.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests" / "python")]

import opset_backend as ob  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "bench" / "opset_backend_report.json"))
    parser.add_argument("--only", choices=["onnxsurgeon", "onnx"], default=None)
    args = parser.parse_args()
    cases = ob.load_cases()
    result = {"cases": len(cases)}
    for name, convert, chained in [("onnxsurgeon", ob.convert_onnxsurgeon, True), ("onnx", ob.convert_onnx, False)]:
        if args.only and args.only != name:
            continue
        start = time.perf_counter()
        tally = ob.evaluate(cases, convert, chained=chained)
        result[name] = {
            "seconds": round(time.perf_counter() - start, 1),
            "attempted": dict(tally.attempted),
            "converted": dict(tally.converted),
            "verified": dict(tally.verified),
        }
        print(name, result[name]["seconds"], "s", flush=True)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    if "onnxsurgeon" in result and "onnx" in result:
        print("| target | cases | onnxsurgeon verified | onnx.version_converter verified |")
        print("| ---: | ---: | ---: | ---: |")
        for t in sorted(result["onnxsurgeon"]["attempted"], key=int):
            n = result["onnxsurgeon"]["attempted"][t]
            a = result["onnxsurgeon"]["verified"].get(t, 0)
            b = result["onnx"]["verified"].get(t, 0)
            print(f"| {t} | {n} | {a} ({100 * a / n:.1f}%) | {b} ({100 * b / n:.1f}%) |")


if __name__ == "__main__":
    main()
