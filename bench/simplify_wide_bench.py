#!/usr/bin/env python3
"""simplify beside onnxsim and onnxslim on the wide corpus: models no rule was tuned on.

    python3 bench/simplify_wide_bench.py [--warm 3] [--models REGEX] [--write-docs] [--json OUT]

Models: every bench/.data/wide/*.onnx (made by `.venv/bin/python bench/wide_corpus.py`: transformers
architectures from small configs with random weights and hand-written CNN/OCR/TTS modules, TorchScript at
opsets 13 and 17, dynamo where TorchScript fails), plus, when generated, the other exporters'
models of the test corpus (tests/models/.generated/{tf,flax,paddle}_*.onnx: tf2onnx, jax2onnx,
paddle2onnx; `make models` makes them).

Each tool runs as in bench/simplify_bench.py (same run_tool: a fresh process per tool and model, the
onnxsurgeon CLI binary for the whole-process time, its Python API for the in-process times), and every
output is run in onnxruntime beside the original on the model's inputs (np.allclose at the manifest's
rtol/atol). Reported: total nodes per tool, per-model wins and ties, whole-process and warm in-process speed
ratios, and the equivalence of every output. Runs in bench/.venv-anchors (created if missing).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import simplify_bench as sb  # noqa: E402  (ensure_venv, run_tool, count_nodes, check_outputs)

WIDE = os.path.join(HERE, ".data", "wide")
GENERATED = os.path.join(ROOT, "tests", "models", ".generated")
EXPORTER_PREFIXES = ("tf_", "flax_", "paddle_")  # tf2onnx, jax2onnx, paddle2onnx
OUTDIR = os.path.join(HERE, ".data", "simplify-wide")
TOOLS = ("onnxsurgeon simplify", "onnxsim", "onnxslim")
BEGIN, END = "<!-- simplify-wide:begin -->", "<!-- simplify-wide:end -->"
SECTION = "## simplify on the wide corpus"


def models(regex: str) -> list[tuple[str, str, str, float, float]]:
    """(label, path, inputs, rtol, atol) of every wide-corpus model (and exporters model, if any)."""
    found = []
    for folder, prefixes in ((WIDE, ("",)), (GENERATED, EXPORTER_PREFIXES)):
        for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
            name = os.path.basename(path)[:-5]
            if not name.startswith(prefixes):
                continue
            inputs = os.path.join(folder, name + ".inputs.npz")
            if not os.path.exists(inputs) or (regex and not re.search(regex, name)):
                continue
            manifest = os.path.join(folder, name + ".json")
            m = json.load(open(manifest)) if os.path.exists(manifest) else {}
            found.append((name, path, inputs, m.get("rtol", 1e-3), m.get("atol", 1e-4)))
    return found


def bench(label, path, inputs, rtol, atol, warm, timeout) -> dict:
    row = {"model": label, "nodes_before": sb.count_nodes(path)[0], "tools": {}}
    outs = {}
    for name in TOOLS:
        out = os.path.join(OUTDIR, f"{sb.slug(label)}.{sb.slug(name)}.onnx")
        res = sb.run_tool(name, path, out, timeout, warm)
        if res["status"] == "ok":
            n, hist, _ = sb.count_nodes(out)
            res.update(nodes=n, hist=dict(hist))
            outs[out] = name
        row["tools"][name] = res
        print(
            f"  {label:22s} {name:22s} {res['status']:6s} nodes={res.get('nodes', '-'):>5} "
            f"process={res['process_s'] or 0:.3f}s warm={res.get('warm_s') or 0:.4f}s"
            + (f" [{res['error']}]" if res.get("error") else ""),
            file=sys.stderr,
            flush=True,
        )
    checks = sb.check_outputs(path, list(outs), inputs, rtol, atol, timeout) if outs else {}
    for out, name in outs.items():
        row["tools"][name]["check"] = checks.get(out, {"status": "check-missing"})
    return row


def ok(t: dict) -> bool:
    return t["status"] == "ok" and t.get("check", {}).get("status") in ("ok", "n/a")


def report(rows: list[dict], args, started: float) -> str:
    S = TOOLS[0]
    anchors = TOOLS[1:]
    out = [
        f"Produced on {datetime.date.today()} by `python3 bench/simplify_wide_bench.py --write-docs` "
        f"({time.time() - started:.0f} s; {os.cpu_count()} cores shared with other jobs; CLI at git {args.git}).",
        "",
        f"Corpus: {len(rows)} models: {sum(not r['model'].startswith(EXPORTER_PREFIXES) for r in rows)} from "
        "`bench/wide_corpus.py` (bench/.data/wide, not used by any test) and "
        f"{sum(r['model'].startswith(EXPORTER_PREFIXES) for r in rows)} tf2onnx / jax2onnx / paddle2onnx exports "
        "of the test corpus (tests/models/.generated). "
        "Every tool runs in its own process per model; *whole process* is the CLI binary for onnxsurgeon and "
        "`python -c` with the imports for the others; *warm* is the best of "
        f"{args.warm} further in-process calls (onnxsurgeon through its Python API).",
        "",
    ]
    usable = [r for r in rows if all(ok(r["tools"][t]) for t in TOOLS)]
    bad = [
        (
            r["model"],
            t,
            r["tools"][t].get("check", {}).get("status", r["tools"][t]["status"]),
            r["tools"][t].get("error") or r["tools"][t].get("check", {}).get("detail", ""),
        )
        for r in rows
        for t in TOOLS
        if not ok(r["tools"][t])
    ]
    out.append(
        f"Models where all three tools ran and every output matched the original in onnxruntime: "
        f"{len(usable)} of {len(rows)}."
    )
    if bad:
        out.append("")
        out.append("Not usable (error, or output not equivalent):")
        out.append("")
        for m, t, st, d in bad:
            out.append(f"- {m}, {t}: {st} {str(d)[:160]}")
    out.append("")
    out.append("| tool | total nodes left | fewest nodes (ties included) | strictly fewest |")
    out.append("|---|---:|---:|---:|")
    for t in TOOLS:
        total = sum(r["tools"][t]["nodes"] for r in usable)
        best = sum(1 for r in usable if r["tools"][t]["nodes"] <= min(r["tools"][u]["nodes"] for u in TOOLS))
        strict = sum(1 for r in usable if all(r["tools"][t]["nodes"] < r["tools"][u]["nodes"] for u in TOOLS if u != t))
        out.append(f"| {t} | {total} | {best} of {len(usable)} ({100 * best / max(1, len(usable)):.0f}%) | {strict} |")
    out.append("")
    out.append("| model | nodes before | " + " | ".join(TOOLS) + " | whole process s (osg / sim / slim) |")
    out.append("|---|---:|" + "---:|" * len(TOOLS) + "---|")
    for r in rows:
        cells = []
        best = min((r["tools"][t].get("nodes", 10**9) for t in TOOLS if ok(r["tools"][t])), default=None)
        for t in TOOLS:
            x = r["tools"][t]
            if not ok(x):
                cells.append(x.get("check", {}).get("status", x["status"]).upper())
            else:
                cells.append(f"**{x['nodes']}**" if x["nodes"] == best else str(x["nodes"]))
        times = " / ".join(f"{r['tools'][t]['process_s']:.2f}" if r["tools"][t]["process_s"] else "-" for t in TOOLS)
        out.append(f"| {r['model']} | {r['nodes_before']} | " + " | ".join(cells) + f" | {times} |")
    out.append("")
    for key, what in (("process_s", "whole process"), ("warm_s", "warm in-process")):
        for a in anchors:
            ratio = [r["tools"][a][key] / max(1e-9, r["tools"][S][key]) for r in usable]
            if ratio:
                out.append(
                    f"- speed vs {a}, {what}: min {min(ratio):.1f}x, median {statistics.median(ratio):.1f}x, "
                    f"max {max(ratio):.1f}x."
                )
    # Where simplify leaves more than the best anchor.
    excess = collections.Counter()
    where = collections.defaultdict(list)
    for r in usable:
        s = r["tools"][S]
        b = min((r["tools"][a] for a in anchors), key=lambda t: t["nodes"])
        if s["nodes"] <= b["nodes"]:
            continue
        for op, n in s["hist"].items():
            d = n - b["hist"].get(op, 0)
            if d > 0:
                excess[op] += d
                where[op].append(f"{r['model']} +{d}")
    if excess:
        out.append("")
        out.append("Ops simplify leaves beyond the fewer-node anchor, on the models where it leaves more:")
        out.append("")
        out.append("| op | extra | models |")
        out.append("|---|---:|---|")
        for op, n in excess.most_common():
            out.append(f"| {op} | {n} | {', '.join(where[op][:6])}{' …' if len(where[op]) > 6 else ''} |")
    return "\n".join(out)


def write_docs(text: str) -> None:
    sb.write_docs(text, BEGIN, END, SECTION)


def main() -> int:
    if os.path.realpath(sys.prefix) != os.path.realpath(sb.VENV):  # run inside bench/.venv-anchors
        if not os.path.exists(sb.VENV_PY):
            subprocess.run(["python3", "-m", "venv", sb.VENV], check=True)
            subprocess.run([sb.VENV_PY, "-m", "pip", "install", "-q", "-r", sb.REQUIREMENTS], check=True)
        os.execv(sb.VENV_PY, [sb.VENV_PY, os.path.abspath(__file__), *sys.argv[1:]])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--warm", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--models", default="")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--json")
    args = ap.parse_args()
    started = time.time()
    if not os.path.exists(sb.BUILT_CLI):
        sys.exit(f"{sb.BUILT_CLI} is missing: build first (make build)")
    todo = models(args.models)
    if not todo:
        sys.exit(f"no models in {WIDE}: make them with .venv/bin/python bench/wide_corpus.py")
    os.makedirs(OUTDIR, exist_ok=True)
    os.makedirs(os.path.dirname(sb.CLI), exist_ok=True)
    shutil.copy2(sb.BUILT_CLI, sb.CLI)
    args.git = subprocess.run(
        ["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    rows = [bench(*m, args.warm, args.timeout) for m in todo]
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    text = report(rows, args, started)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
