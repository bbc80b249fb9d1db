#!/usr/bin/env python3
"""simplify's node counts beside onnxsim and onnxslim on the judging corpus.

    PY=~/.cache/onnxsurgeon/venv-anchors/bin/python   # or bench/.venv-anchors (bench/requirements-anchors.txt)
    $PY bench/simplify_judging_bench.py [--cli build/onnxsurgeon] [--corpus DIR] [--models REGEX] [--times]

The judging corpus (tests/judging, ~/.cache/onnxsurgeon/judging/models) is held out: no rule is
designed on it, so this is a score, never a guide. Per model, onnxsim and onnxslim run once each in
a fresh process (their node counts and equivalence are cached in bench/.data/simplify-judging/
anchors.json, keyed by the model's size and mtime, since only simplify moves between runs), then the
CLI's `--pass simplify`. Every output is run in onnxruntime on the model's stored inputs and compared
with its stored expected outputs at the model's rtol/atol. Counted: the models where all three ran
and matched; on those, the share where simplify leaves the fewest nodes (ties included) and the
total nodes per tool. Each tool's whole-process wall time is recorded (fresh process, imports
and start-up included, all under `nice`), with its CPU time (user + sys) beside it; anchors'
times are cached with their counts (--times re-runs anchors cached without one, --retime the
selected ones anyway). The worst per-model ratio anchor / simplify is printed; a model whose
anchor has no time is bounded by the anchor's import alone. Nodes are counted as
bench/simplify_bench.py does (subgraphs and functions included).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import simplify_bench as sb  # noqa: E402  (count_nodes)

CORPUS = os.path.expanduser("~/.cache/onnxsurgeon/judging/models")
OUTDIR = os.path.join(HERE, ".data", "simplify-judging")
ANCHORS = {
    "onnxsim": "import onnx\nfrom onnxsim import simplify\nm, ok = simplify(onnx.load(IN))\nassert ok\nonnx.save(m, OUT)",
    "onnxslim": "import onnxslim\nonnxslim.slim(IN, OUT)",
}
CHECK = r"""
import json, sys
import numpy as np
import onnxruntime as ort
a = json.loads(sys.argv[1])
so = ort.SessionOptions(); so.log_severity_level = 3
so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
sess = ort.InferenceSession(a["model"], so, providers=["CPUExecutionProvider"])
inputs = dict(np.load(a["inputs"]))
names = [i.name for i in sess.get_inputs()]
feeds = {k: v for k, v in inputs.items() if k in names}
expected = dict(np.load(a["expected"]))
outs = sess.run(None, feeds)
got = dict(zip([o.name for o in sess.get_outputs()], outs))
bad = []
for k, v in expected.items():
    if k not in got:
        bad.append(f"{k} missing")
        continue
    g = np.asarray(got[k])
    if g.shape != v.shape:
        bad.append(f"{k} shape {g.shape} != {v.shape}")
    elif v.dtype.kind in "fc":
        if not np.allclose(g.astype(np.float64), v.astype(np.float64), rtol=a["rtol"], atol=a["atol"], equal_nan=True):
            bad.append(f"{k} differs")
    elif not np.array_equal(g, v):
        bad.append(f"{k} differs")
print(json.dumps(bad))
"""


def check(model: str, meta: dict, corpus: str, timeout: float) -> str | None:
    """None when the model's outputs match the stored expected ones, else why not."""
    if not meta.get("runnable", True) or not meta.get("expected_outputs"):
        return None
    args = {
        "model": model,
        "inputs": os.path.join(corpus, meta["inputs"]),
        "expected": os.path.join(corpus, meta["expected_outputs"]),
        "rtol": meta.get("rtol", 1e-3),
        "atol": meta.get("atol", 1e-4),
    }
    if "fp16" in meta.get("tags", []):
        args["rtol"], args["atol"] = max(args["rtol"], 1e-2), max(args["atol"], 1e-2)
    try:
        p = subprocess.run(
            [sys.executable, "-c", CHECK, json.dumps(args)], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "check timed out"
    if p.returncode:
        return "onnxruntime: " + (p.stderr.strip().splitlines() or ["?"])[-1][:200]
    bad = json.loads(p.stdout.strip().splitlines()[-1])
    return "; ".join(bad) if bad else None


LAST_CPU = [0.0]  # the CPU seconds (user + sys) of the last timed() process


def timed(cmd: list[str], timeout: float) -> tuple[subprocess.CompletedProcess | None, float]:
    """The process and its whole-process wall time (start-up and imports included); its CPU
    time goes to LAST_CPU (on a loaded machine it moves far less than wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        p = subprocess.run(["nice", *cmd], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        p = None
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return p, wall


def run_anchor(tool: str, inp: str, out: str, timeout: float) -> tuple[str | None, float]:
    code = f"IN, OUT = {inp!r}, {out!r}\n" + ANCHORS[tool]
    p, seconds = timed([sys.executable, "-c", code], timeout)
    if p is None:
        return "timeout", seconds
    if p.returncode or not os.path.exists(out):
        return f"exit {p.returncode}: " + (p.stderr.strip().splitlines() or ["?"])[-1][:200], seconds
    return None, seconds


IMPORTS = {"onnxsim": "import onnx\nfrom onnxsim import simplify", "onnxslim": "import onnxslim"}


def import_floor(tool: str, runs: int = 3) -> float:
    """The fastest of `runs` fresh processes that only import the anchor: what every one of its
    runs takes at least, whatever the model."""
    return min(timed([sys.executable, "-c", IMPORTS[tool]], 600)[1] for _ in range(runs))


def speed_report(rows: list[dict], tools: tuple[str, ...]) -> None:
    """Per anchor, how many times slower than simplify it is per model (whole process, wall):
    the worst (smallest) ratio and the models under 10x. Rows an anchor failed on count too (a
    failure after N seconds still took them). A model whose anchor run has no time (cached
    before times were kept) is bounded below by the anchor's import alone (import_floor)."""
    print("\nwhole-process wall time, anchor / simplify:")
    for anchor in tools[1:]:
        timed_rows = [r for r in rows if r[tools[0]].get("seconds")]
        untimed = [r for r in timed_rows if not r[anchor].get("seconds")]
        floor = import_floor(anchor) if untimed else 0.0
        ratios = sorted(
            (
                (r[anchor].get("seconds") or floor) / r[tools[0]]["seconds"],
                r["model"] + ("" if r[anchor].get("seconds") else " (import bound)"),
            )
            for r in timed_rows
        )
        if not ratios:
            print(f"  {anchor}: no times")
            continue
        worst = ratios[0]
        slow = [f"{m} {x:.1f}x" for x, m in ratios if x < 10]
        print(
            f"  {anchor}: worst {worst[0]:.1f}x ({worst[1]}), median {ratios[len(ratios) // 2][0]:.1f}x over"
            f" {len(ratios)} models ({len(untimed)} bounded by the import alone, {floor:.2f} s);"
            f" under 10x: {', '.join(slow) or 'none'}"
        )
    for anchor in tools[1:]:
        cpu = sorted(
            (r[anchor]["cpu"] / max(r[tools[0]]["cpu"], 1e-3), r["model"])
            for r in rows
            if r[anchor].get("cpu") and r[tools[0]].get("cpu")
        )
        if cpu:
            print(f"  {anchor} CPU (user + sys): worst {cpu[0][0]:.1f}x ({cpu[0][1]}) over {len(cpu)} timed models")
    osg = sorted((r[tools[0]]["seconds"], r["model"]) for r in rows if r[tools[0]].get("seconds"))
    if osg:
        print(f"  simplify's slowest: {', '.join(f'{m} {t:.2f} s' for t, m in osg[-3:][::-1])}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "onnxsurgeon"))
    ap.add_argument("--corpus", default=CORPUS)
    ap.add_argument("--models", default="")
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--anchors-only", action="store_true", help="fill the anchors' cache and stop")
    ap.add_argument("--json", help="write the per-model rows here")
    ap.add_argument(
        "--times", action="store_true", help="re-run anchors whose cached entry has no time (whole-process wall time)"
    )
    ap.add_argument("--retime", action="store_true", help="re-run the selected models' anchors, timed, cache or not")
    args = ap.parse_args()
    os.makedirs(OUTDIR, exist_ok=True)
    cache_path = os.path.join(OUTDIR, "anchors.json")
    cache = json.load(open(cache_path)) if os.path.exists(cache_path) else {}
    names = sorted(f[:-5] for f in os.listdir(args.corpus) if f.endswith(".onnx") and re.search(args.models, f))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model = os.path.join(args.corpus, name + ".onnx")
            meta_path = os.path.join(args.corpus, name + ".json")
            meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
            st = os.stat(model)
            key = f"{name}:{st.st_size}:{int(st.st_mtime)}"
            row = {"model": name, "before": sb.count_nodes(model)[0]}
            for tool in ANCHORS:
                entry = cache.get(key + ":" + tool)
                if entry is None or args.retime or (args.times and "seconds" not in entry):
                    out = os.path.join(tmp, f"{name}.{tool}.onnx")
                    err, seconds = run_anchor(tool, model, out, args.timeout)
                    cpu = LAST_CPU[0]
                    if err is None:
                        err = check(out, meta, args.corpus, args.timeout)
                    cache[key + ":" + tool] = {
                        "nodes": None if err else sb.count_nodes(out)[0],
                        "error": err,
                        "seconds": seconds,
                        "cpu": cpu,
                    }
                    with open(cache_path + ".tmp", "w") as f:
                        json.dump(cache, f, indent=1)
                    os.replace(cache_path + ".tmp", cache_path)
                    if os.path.exists(out):
                        os.remove(out)
                row[tool] = cache[key + ":" + tool]
            if not args.anchors_only:
                out = os.path.join(tmp, name + ".osg.onnx")
                p, seconds = timed([args.cli, model, "--pass", "simplify", "-o", out, "--quiet"], args.timeout)
                cpu = LAST_CPU[0]
                if p is None:
                    err = "timeout"
                else:
                    err = f"exit {p.returncode}: {p.stderr.strip()[-200:]}" if p.returncode else None
                if err is None:
                    err = check(out, meta, args.corpus, args.timeout)
                row["onnxsurgeon"] = {
                    "nodes": None if err else sb.count_nodes(out)[0],
                    "error": err,
                    "seconds": seconds,
                    "cpu": cpu,
                }
            rows.append(row)
            print(
                name,
                {k: (v["nodes"] if isinstance(v, dict) else v) for k, v in row.items() if k != "model"},
                flush=True,
            )
    if args.anchors_only:
        return 0
    tools = ("onnxsurgeon", "onnxsim", "onnxslim")
    both = [r for r in rows if all(r[t]["nodes"] is not None for t in tools)]
    totals = {t: sum(r[t]["nodes"] for r in both) for t in tools}
    fewest = {t: sum(r[t]["nodes"] == min(r[u]["nodes"] for u in tools) for r in both) for t in tools}
    print(f"\nmodels where all three ran and matched the expected outputs: {len(both)} of {len(rows)}")
    for t in tools:
        print(
            f"  {t:12s} total {totals[t]:6d}   fewest (ties included) {fewest[t]:3d} of {len(both)}"
            f" ({100 * fewest[t] / max(1, len(both)):.0f}%)"
        )
    for r in rows:
        for t in tools:
            if r[t]["error"]:
                print(f"  {r['model']}: {t}: {r[t]['error']}")
    losses = [r for r in both if r["onnxsurgeon"]["nodes"] > min(r["onnxsim"]["nodes"], r["onnxslim"]["nodes"])]
    print("\nwhere simplify leaves more than the fewer-node anchor:")
    for r in losses:
        print(
            f"  {r['model']}: {r['onnxsurgeon']['nodes']} vs onnxsim {r['onnxsim']['nodes']},"
            f" onnxslim {r['onnxslim']['nodes']}"
        )
    speed_report(rows, tools)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
