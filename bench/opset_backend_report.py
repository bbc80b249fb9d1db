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
chains. The fourth table lists, per upward step that changes an op's signature or
meaning, how many node tests cross it verified (up, or older forms up). Prints the four
markdown tables of docs/opset-conversion.md. `--only onnxsurgeon` reruns one converter
and keeps the other's figures from the JSON file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "python"), str(ROOT / "tests" / "python")]

import onnx  # noqa: E402
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


def _int_keys(summary: dict | None) -> dict | None:
    """A summary read back from JSON has its opsets as strings."""
    if summary is None:
        return None
    return {k: ({int(t): n for t, n in v.items()} if isinstance(v, dict) else v) for k, v in summary.items()}


def _table(result: dict, direction: str, first: str, label: str) -> str:
    ours = _int_keys(result["onnxsurgeon"][direction])
    theirs = _int_keys(result.get("onnx", {}).get(direction))
    head = [label, first, "onnxsurgeon converted", "onnxsurgeon verified"]
    if theirs:
        head += ["onnx.version_converter converted", "onnx.version_converter verified"]
    lines = ["| " + " | ".join(head) + " |", "|" + " ---: |" * len(head)]
    for t in sorted(ours["attempted"]):
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


def _upward_steps() -> list[tuple[str, int, int]]:
    """The upward version steps (to opset 8 and above) of the default domain that change an
    op's attributes, inputs or outputs, or retire it, plus those whose meaning moved
    without that (adapters_up.cc)."""
    by_op: dict[str, dict[int, object]] = {}
    for schema in onnx.defs.get_all_schemas_with_history():
        if schema.domain in ("", "ai.onnx"):
            by_op.setdefault(schema.name, {})[schema.since_version] = schema

    def shape(schema) -> tuple:
        return (
            sorted((n, a.type, a.required, a.default_value.SerializeToString()) for n, a in schema.attributes.items()),
            [(p.name, int(p.option)) for p in schema.inputs],
            [(p.name, int(p.option)) for p in schema.outputs],
        )

    steps = {("Dropout", 7, 10), ("MeanVarianceNormalization", 9, 13), ("GroupNormalization", 18, 21)}
    for op, versions in by_op.items():
        ordered = sorted(versions)
        for a, b in zip(ordered, ordered[1:]):
            if b >= 8 and (versions[b].deprecated or shape(versions[a]) != shape(versions[b])):
                steps.add((op, a, b))
    return sorted(steps)


def _ops(model) -> set[str]:
    found = set()

    def walk(graph) -> None:
        for node in graph.node:
            found.add(node.op_type)
            for a in node.attribute:
                for g in [a.g] if a.HasField("g") else list(a.graphs):
                    walk(g)

    walk(model.graph)
    return found


def _step_coverage(cases, up: ob.Tally, with_variants, starts, older: ob.Tally) -> list[dict]:
    """Per upward step: the node tests whose conversions (up, or older forms up) cross it
    with the op in the model, verified, and only unverified (with onnxruntime's reasons)."""
    own = {c.name: (c.opset, _ops(c.model)) for c in cases}
    form_ops = {(key, s): _ops(m) for key, forms in starts.items() for s, m in forms.items()}
    crossings = []  # (case name, from opset, to opset, ops, verified, why)
    for pair in up.verified_pairs | set(up.unverified):
        opset, ops = own[pair[0]]
        crossings.append((pair[0], opset, pair[1], ops, pair in up.verified_pairs, up.unverified.get(pair)))
    for pair in older.verified_pairs | set(older.unverified):
        name, target, s, variant = pair
        ops = form_ops[((name, variant), s)]
        crossings.append((name, s, target, ops, pair in older.verified_pairs, older.unverified.get(pair)))
    # Renamed on the way: Upsample-9 becomes Resize-10, Scatter-9 ScatterElements-11.
    renamed = {"Resize": ("Upsample", 10), "ScatterElements": ("Scatter", 11)}
    rows = []
    for op, a, b in _upward_steps():
        verified, unverified = set(), {}
        for name, lo, hi, ops, ok, why in crossings:
            former = renamed.get(op)
            present = op in ops or (former is not None and former[0] in ops and hi >= former[1])
            if lo < b <= hi and present:
                if ok:
                    verified.add(name)
                else:
                    unverified[name] = why
        rows.append(
            {
                "step": f"{op} {a} -> {b}",
                "verified": len(verified),
                "unverified": {n: w for n, w in sorted(unverified.items()) if n not in verified},
            }
        )
    return rows


def _coverage_table(rows: list[dict]) -> str:
    lines = [
        "| step | node tests verified across it | only unverified (onnxruntime's reason) |",
        "| --- | ---: | --- |",
    ]
    for r in rows:
        reasons: dict[str, list[str]] = {}
        for name, why in r["unverified"].items():
            reasons.setdefault(why.split(":")[0] if why else "?", []).append(name.removeprefix("test_"))
        text = "; ".join(
            f"{len(v)} {k} ({', '.join(v[:3])}{', ...' if len(v) > 3 else ''})" for k, v in reasons.items()
        )
        lines.append(f"| {r['step']} | {r['verified']} | {text} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=str(ROOT / "bench" / "opset_backend_report.json"))
    parser.add_argument("--only", choices=list(CONVERTERS), default=None)
    args = parser.parse_args()
    cases = ob.load_cases()
    result: dict = {"cases": len(cases), "highest": ob.highest()}
    if args.only and Path(args.out).exists():  # the other converter's part stays as it was
        kept = json.loads(Path(args.out).read_text())
        result.update({k: v for k, v in kept.items() if k in CONVERTERS and k != args.only})
        if "onnx_only" in kept:
            result["onnx_only"] = kept["onnx_only"]
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
        if name == "onnxsurgeon":
            result["upward_steps"] = _step_coverage(cases, up, with_variants, starts, older)
        print(name, {d: result[name][d]["seconds"] for d in result[name]}, "s", flush=True)
    if "onnxsurgeon" in result and "onnx" in result and not args.only:
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
            summary.pop("verified_pairs", None)
    Path(args.out).write_text(json.dumps(result, indent=1, sort_keys=True))
    if "onnxsurgeon" in result:
        print(_table(result, "down", "cases above it", "target opset"), end="\n\n")
        print(_table(result, "up", "cases below it", "target opset"), end="\n\n")
        print(_table(result, "older_forms_up", "older forms", "form's opset"), end="\n\n")
        print(_coverage_table(result["upward_steps"]))


if __name__ == "__main__":
    main()
