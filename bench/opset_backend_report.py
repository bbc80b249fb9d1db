"""Opset conversion coverage on the ONNX backend node tests: onnxsurgeon's convert-opset
beside onnx.version_converter, per target opset, down and up (docs/opset-conversion.md).

    .venv/bin/python bench/opset_backend_report.py [--out bench/opset_backend_report.json]

A case counts at target t when its model's opset is above t (down) or below it (up, to
the newest opset both onnx and onnxruntime know); it is *verified* when the converted
model passes onnx's full checker, claims opset t, and onnxruntime reproduces the test's
expected outputs from its inputs (tests/python/opset_backend.py). The third table
converts the older forms onnxsurgeon's downgrades wrote (of the tests, and of the tests
with their parameter inputs made constants) back up, both converters from the same
forms. Both converters run the same harness; onnx.version_converter converts directly
from the original model (or form) each time (chaining would only lose more), onnxsurgeon
chains. Prints the three markdown tables of docs/opset-conversion.md.
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

CONVERTERS = {"onnxsurgeon": (ob.convert_onnxsurgeon, True), "onnx": (ob.convert_onnx, False)}


def _summary(tally: ob.Tally, seconds: float) -> dict:
    return {
        "seconds": round(seconds, 1),
        "attempted": dict(tally.attempted),
        "converted": dict(tally.converted),
        "verified": dict(tally.verified),
        "verified_pairs": sorted(list(p) for p in tally.verified_pairs),
    }


def _table(result: dict, direction: str, first: str, label: str) -> str:
    ours, theirs = result["onnxsurgeon"][direction], result.get("onnx", {}).get(direction)
    head = [label, first, "onnxsurgeon converted", "onnxsurgeon verified"]
    if theirs:
        head += ["onnx.version_converter converted", "onnx.version_converter verified"]
    lines = ["| " + " | ".join(head) + " |", "|" + " ---: |" * len(head)]
    for t in sorted(ours["attempted"], key=int):
        n = ours["attempted"][t]
        row = [str(t), str(n), str(ours["converted"].get(t, 0))]
        a = ours["verified"].get(t, 0)
        row.append(f"**{a} ({100 * a / n:.1f}%)**")
        if theirs:
            b = theirs["verified"].get(t, 0)
            row += [str(theirs["converted"].get(t, 0)), f"{b} ({100 * b / n:.1f}%)"]
        lines.append("| " + " | ".join(row) + " |")
    total = sum(ours["attempted"].values())
    row = ["all", str(total), str(sum(ours["converted"].values()))]
    a = sum(ours["verified"].values())
    row.append(f"**{a} ({100 * a / total:.1f}%)**")
    if theirs:
        b = sum(theirs["verified"].values())
        row += [str(sum(theirs["converted"].values())), f"{b} ({100 * b / total:.1f}%)"]
    lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "bench" / "opset_backend_report.json"))
    parser.add_argument("--only", choices=list(CONVERTERS), default=None)
    args = parser.parse_args()
    cases = ob.load_cases()
    result: dict = {"cases": len(cases), "highest": ob.highest()}
    # The older forms come from onnxsurgeon's downgrades, for both converters.
    start = time.perf_counter()
    down = ob.evaluate(cases, ob.convert_onnxsurgeon, keep_models=True)
    down_seconds = time.perf_counter() - start
    with_variants, starts = ob.older_forms(cases, down, ob.convert_onnxsurgeon)
    result["older_forms"] = sum(len(s) for s in starts.values())
    for name, (convert, chained) in CONVERTERS.items():
        if args.only and args.only != name:
            continue
        result[name] = {}
        if name == "onnxsurgeon":
            result[name]["down"] = _summary(down, down_seconds)
        else:
            start = time.perf_counter()
            result[name]["down"] = _summary(ob.evaluate(cases, convert, chained=chained), time.perf_counter() - start)
        start = time.perf_counter()
        up = ob.evaluate(cases, convert, chained=chained, direction="up")
        result[name]["up"] = _summary(up, time.perf_counter() - start)
        start = time.perf_counter()
        older = ob.evaluate_roundtrip(with_variants, starts, convert)
        result[name]["older_forms_up"] = _summary(older, time.perf_counter() - start)
        print(name, {d: result[name][d]["seconds"] for d in result[name]}, "s", flush=True)
    if "onnxsurgeon" in result and "onnx" in result:
        # Conversions onnx.version_converter verifies and onnxsurgeon does not (same key).
        result["onnx_only"] = {
            d: sorted(
                {tuple(p) for p in result["onnx"][d]["verified_pairs"]}
                - {tuple(p) for p in result["onnxsurgeon"][d]["verified_pairs"]}
            )
            for d in ("down", "up", "older_forms_up")
        }
        print("verified by onnx.version_converter only:", {d: len(v) for d, v in result["onnx_only"].items()})
    for name in CONVERTERS:  # the pairs only served the comparison above
        for summary in result.get(name, {}).values():
            summary.pop("verified_pairs")
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    if "onnxsurgeon" in result:
        print(_table(result, "down", "cases above it", "target opset"), end="\n\n")
        print(_table(result, "up", "cases below it", "target opset"), end="\n\n")
        print(_table(result, "older_forms_up", "older forms", "form's opset"))


if __name__ == "__main__":
    main()
