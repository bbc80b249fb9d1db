#!/usr/bin/env python3
"""The `simplify` pipeline beside onnx-simplifier (onnxsim), OnnxSlim (onnxslim), onnxoptimizer
and the onnxscript optimizer, all file -> file on the same models.

What runs:
  onnxsurgeon          build/onnxsurgeon --pass simplify IN -o OUT (the CLI binary, whole process),
                       and osg.run(IN, 'simplify', output=OUT) in-process (the Python API)
  onnxsim              onnxsim.simplify(onnx.load(IN)) with its defaults, onnx.save
  onnxslim             onnxslim.slim(IN, OUT) with its defaults
  onnxoptimizer        onnxoptimizer.optimize(onnx.load(IN)) (default fuse-and-elimination passes)
  onnxscript optimizer onnx_ir.load(IN), onnxscript.optimizer.optimize(m) with its defaults, onnx_ir.save
  diagnostic           the same with --pass nop (load -> save only: the floor under simplify)

Models: (a) every real corpus model in tests/models/.generated/*.onnx (torch / transformers
exports, manifests *.json beside them; build them with `make test` or tests/models/generate.py),
one process per tool; (b) bench/.data/large_inline.onnx (~500 MB, 30 x MatMul+Add+Relu, made by
bench/make_large_model.py), best of --repeat processes.

How: the CLI is copied to bench/.data/simplify/onnxsurgeon-snapshot at start (so a rebuild during
the run cannot change it); each tool run is its own subprocess under `/usr/bin/time -f %M`
(peak RSS) with a timeout (--timeout, 600 s). Three times per tool, measured alike for all:
the whole process (onnxsurgeon: the CLI binary; Python tools: `python -c` with imports), the
first call inside a fresh process after the imports (onnxsurgeon: its Python API from
python/, on PYTHONPATH), and the best warm call after it in the same process (--warm). Every
output is then run in onnxruntime (CPU) next to the original, in a separate subprocess, on
the corpus's *.inputs.npz (large model: a seeded random X of shape 4 x 2048) and compared
with np.allclose at the manifest's rtol/atol (large model: 1e-4/1e-4); when onnxruntime's own
graph optimizations break the original, every file of that model is run with them off.
"nodes after" counts the nodes of the main graph, of all its subgraphs (If/Loop bodies) and of
the local functions left, recursively. Under 2 cores shared with other jobs the small-model
times are noisy (tens of ms).

The anchor tools live in their own venv, bench/.venv-anchors (git-ignored; the repo's .venv
pins onnx for the tests and is never touched), installed from bench/requirements-anchors.txt.
The script creates that venv if it is missing and re-executes itself inside it.

    python3 bench/simplify_bench.py [--repeat 2] [--warm 3] [--timeout 600] [--models REGEX] [--no-large] [--write-docs]

--write-docs rewrites the section between <!-- simplify-bench:begin --> and
<!-- simplify-bench:end --> in docs/benchmarks.md (appending the section if missing).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import glob
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(HERE, ".venv-anchors")
VENV_PY = os.path.join(VENV, "bin", "python")
REQUIREMENTS = os.path.join(HERE, "requirements-anchors.txt")
CORPUS = os.path.join(ROOT, "tests", "models", ".generated")
LARGE = os.path.join(HERE, ".data", "large_inline.onnx")
OUTDIR = os.path.join(HERE, ".data", "simplify")
BUILT_CLI = os.path.join(ROOT, "build", "onnxsurgeon")
# The run uses a copy of the CLI taken at start, so a rebuild during the run cannot change it.
CLI = os.path.join(OUTDIR, "onnxsurgeon-snapshot")
DOCS = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- simplify-bench:begin -->", "<!-- simplify-bench:end -->"
SECTION = "## simplify beside onnxsim, onnxslim, onnxoptimizer and the onnxscript optimizer"
LARGE_BATCH = 4

# Each tool: a snippet run in a fresh interpreter with IN and OUT defined; the first part
# (imports) runs before the clock starts. onnxsurgeon runs through its Python API here,
# like the others; its CLI is timed as a whole process on its own (CLI_PIPELINES).
TOOLS = {
    "onnxsurgeon simplify": ("import onnxsurgeon as osg", "osg.run(IN, 'simplify', output=OUT)"),
    "onnxsim": (
        "import onnx\nfrom onnxsim import simplify",
        "m, ok = simplify(onnx.load(IN))\nassert ok, 'onnxsim reported a failed check'\nonnx.save(m, OUT)",
    ),
    "onnxslim": ("import onnxslim", "onnxslim.slim(IN, OUT)"),
    "onnxoptimizer": ("import onnx, onnxoptimizer", "onnx.save(onnxoptimizer.optimize(onnx.load(IN)), OUT)"),
    "onnxscript optimizer": (
        "import onnx_ir as ir, onnxscript.optimizer",
        "m = ir.load(IN)\nonnxscript.optimizer.optimize(m)\nir.save(m, OUT)",
    ),
    # Diagnostic only (not in the per-model table or the goal): the load -> save round trip,
    # the floor under the onnxsurgeon time.
    "diagnostic: onnxsurgeon nop": ("import onnxsurgeon as osg", "osg.run(IN, 'nop', output=OUT)"),
}
# The tools whose whole process is the CLI binary (`process wall` column): what a user at a
# shell waits for. The Python tools' process wall is `python -c` with their imports.
CLI_PIPELINES = {"onnxsurgeon simplify": "simplify", "diagnostic: onnxsurgeon nop": "nop"}
SURGEON = "onnxsurgeon simplify"
DIAG = {"diagnostic: onnxsurgeon nop"}
ANCHORS_10X = ("onnxsim", "onnxslim")


def ensure_venv() -> None:
    """Create bench/.venv-anchors if needed and re-execute this script inside it."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if not os.path.exists(VENV_PY):
        print(f"creating {VENV} from {REQUIREMENTS}", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", VENV], check=True)
        subprocess.run([VENV_PY, "-m", "pip", "install", "-q", "-r", REQUIREMENTS], check=True)
    os.execv(VENV_PY, [VENV_PY, os.path.abspath(__file__), *sys.argv[1:]])


def slug(name: str) -> str:
    return re.sub(r"\W+", "_", name).strip("_")


def _timed(cmd: list[str], timeout: float, env: dict | None = None):
    """Runs cmd under /usr/bin/time: (proc or None on timeout, wall seconds, peak RSS MiB, stderr lines)."""
    for _attempt in range(3):
        start = time.perf_counter()
        try:
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            return None, timeout, None, []
        wall = time.perf_counter() - start
        if proc.returncode not in (126, 127):  # 126/127: the command could not be started at all
            break
        time.sleep(1)
    lines = [l for l in proc.stderr.strip().splitlines() if not l.startswith("Command exited with non-zero status")]
    rss = int(lines[-1]) / 1024 if lines and lines[-1].isdigit() else None
    return proc, wall, rss, (lines[:-1] if rss is not None else lines)


def _failure(proc, wall, rss, lines, timeout) -> dict:
    if proc is None:
        return {
            "status": "timeout",
            "first_s": None,
            "warm_s": None,
            "process_s": timeout,
            "rss_mb": None,
            "error": f"timed out after {timeout:.0f} s",
        }
    err = [l for l in lines if l.strip()]
    msg = next((l for l in reversed(err) if re.search(r"Error|error|Exception|failed", l)), err[-1] if err else "")
    return {
        "status": "error",
        "first_s": None,
        "warm_s": None,
        "process_s": wall,
        "rss_mb": rss,
        "error": f"exit {proc.returncode}: {msg.strip()[:300]}",
    }


def run_tool(name: str, inp: str, out: str, timeout: float, warm: int) -> dict:
    """One tool on one model: {status, first_s, warm_s, process_s, rss_mb, error}.

    first_s: the first call in a fresh process, after the imports (load, optimize, save;
    one-time costs such as building onnx's operator-schema registry included).
    warm_s: the best of `warm` further calls in that same process (a notebook's steady state);
    OUT is removed (untimed) before each, so every call writes a new file, as the first does.
    process_s: the whole process, start-up and imports included: the onnxsurgeon CLI binary for
    onnxsurgeon, `python -c` with the imports for the Python tools. Its output is the one kept
    and checked (for onnxsurgeon, the CLI's).
    """
    if os.path.exists(out):
        os.remove(out)
    imports, body = TOOLS[name]
    code = (
        f"IN, OUT = {inp!r}, {out!r}\nimport os, time\n{imports}\n_t = time.perf_counter()\n{body}\n"
        "print('FIRST', time.perf_counter() - _t)\n_w = []\n"
        f"for _ in range({warm}):\n    os.remove(OUT)\n    _t = time.perf_counter()\n{textwrap.indent(body, '    ')}\n"
        "    _w.append(time.perf_counter() - _t)\n"
        "print('WARM', min(_w) if _w else 'nan')\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    proc, wall, rss, lines = _timed([sys.executable, "-c", code], timeout, env)
    if proc is None or proc.returncode != 0 or not os.path.exists(out):
        return _failure(proc, wall, rss, lines, timeout)
    first = float(re.search(r"FIRST (\S+)", proc.stdout).group(1))
    warm_s = float(re.search(r"WARM (\S+)", proc.stdout).group(1))
    res = {"status": "ok", "first_s": first, "warm_s": warm_s, "process_s": wall, "rss_mb": rss, "error": None}
    if name in CLI_PIPELINES:
        os.remove(out)
        proc, wall, rss, lines = _timed([CLI, "--pass", CLI_PIPELINES[name], inp, "-o", out], timeout)
        if proc is None or proc.returncode != 0 or not os.path.exists(out):
            return _failure(proc, wall, rss, lines, timeout)
        res.update(process_s=wall, rss_mb=rss)
    return res


def count_nodes(path: str) -> tuple[int, collections.Counter, int]:
    """(nodes in the graph, its subgraphs and the bodies of local functions, op histogram, local functions)."""
    import onnx

    model = onnx.load(path, load_external_data=False)
    hist: collections.Counter = collections.Counter()

    def walk(graph) -> None:
        for node in graph.node:
            key = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}::{node.op_type}"
            hist[key] += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                elif attr.type == onnx.AttributeProto.GRAPHS:
                    for g in attr.graphs:
                        walk(g)

    walk(model.graph)
    for f in model.functions:
        walk(f)
    return sum(hist.values()), hist, len(model.functions)


CHECK_WORKER = r"""
import json, sys
import numpy as np
import onnxruntime as ort
args = json.loads(sys.argv[1])
inputs = dict(np.load(args["inputs"]))
def run(path):
    so = ort.SessionOptions(); so.log_severity_level = 3
    if OPT_OFF:
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, {n: inputs[n] for n in names})
result = {}
note = ""
OPT_OFF = False
try:
    ref = run(args["original"])
except Exception as e:
    ref = None
    ref_error = str(e).splitlines()[0][:200]
    # onnxruntime's own graph optimizations can break a valid original: check everything without them.
    OPT_OFF = True
    try:
        ref = run(args["original"])
        note = ("checked with onnxruntime graph optimizations off (the original fails with them on: "
                + ref_error + ")")
    except Exception:
        OPT_OFF = False
for path in args["outputs"]:
    if ref is None:
        result[path] = {"status": "n/a", "detail": "original does not run in onnxruntime: " + ref_error}
        continue
    try:
        got = run(path)
    except Exception as e:
        result[path] = {"status": "ort-error", "detail": str(e).splitlines()[0][:300]}
        continue
    if len(got) != len(ref):
        result[path] = {"status": "mismatch", "detail": f"{len(got)} outputs, original has {len(ref)}"}
        continue
    err, ok, detail = 0.0, True, ""
    for a, b in zip(ref, got):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            ok, detail = False, f"shape {b.shape} vs {a.shape}"
            break
        if a.size and a.dtype.kind in "fc":
            err = max(err, float(np.nanmax(np.abs(a.astype(np.float64) - b.astype(np.float64)))))
            ok = ok and bool(np.allclose(b, a, rtol=args["rtol"], atol=args["atol"], equal_nan=True))
        elif a.size:
            same = bool(np.array_equal(a, b))
            ok = ok and same
            err = max(err, 0.0 if same else float("inf"))
    result[path] = {"status": "ok" if ok else "mismatch", "max_abs_err": err, "detail": detail, "note": note}
print("RESULT " + json.dumps(result))
"""


def check_outputs(original: str, outputs: list[str], inputs: str, rtol: float, atol: float, timeout: float) -> dict:
    args = json.dumps({"original": original, "outputs": outputs, "inputs": inputs, "rtol": rtol, "atol": atol})
    try:
        proc = subprocess.run(
            [sys.executable, "-c", CHECK_WORKER, args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {p: {"status": "check-timeout", "detail": ""} for p in outputs}
    m = re.search(r"^RESULT (.*)$", proc.stdout, re.M)
    if not m:
        # The worker crashed (e.g. onnxruntime aborted): check one by one to attribute it.
        if len(outputs) > 1:
            res = {}
            for p in outputs:
                res.update(check_outputs(original, [p], inputs, rtol, atol, timeout))
            return res
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return {outputs[0]: {"status": "ort-error", "detail": f"onnxruntime crashed (exit {proc.returncode}): {tail}"}}
    return json.loads(m.group(1))


MEASURES = (("process_s", "whole process"), ("first_s", "first call in-process"), ("warm_s", "warm call in-process"))


def bench_model(
    label: str, path: str, inputs: str, rtol: float, atol: float, repeat: int, warm: int, timeout: float
) -> dict:
    os.makedirs(OUTDIR, exist_ok=True)
    nodes_before, hist_before, funcs_before = count_nodes(path)
    row = {
        "model": label,
        "path": path,
        "nodes_before": nodes_before,
        "functions_before": funcs_before,
        "hist_before": dict(hist_before),
        "size_mb": os.path.getsize(path) / 1e6,
        "tools": {},
    }
    outs = {}
    for name in TOOLS:
        out = os.path.join(OUTDIR, f"{slug(label)}.{slug(name)}.onnx")
        runs = [run_tool(name, path, out, timeout, warm) for _ in range(repeat)]
        good = [r for r in runs if r["status"] == "ok"]
        if len(good) == len(runs):
            res = {
                "status": "ok",
                **{m: min(r[m] for r in good) for m, _ in MEASURES},
                "rss_mb": max(r["rss_mb"] or 0 for r in good),
                "error": None,
            }
            n, hist, funcs = count_nodes(out)
            res.update(nodes=n, hist=dict(hist), functions=funcs)
            outs[out] = name
        else:
            res = next(r for r in runs if r["status"] != "ok")
        row["tools"][name] = res
        t = (
            f"{res['process_s']:.3f}/{res['first_s']:.3f}/{res['warm_s']:.3f}s"
            if res["status"] == "ok"
            else res["status"]
        )
        print(
            f"  {label:32s} {name:22s} {t:>10s} nodes={res.get('nodes', '-')}"
            + (f"  [{res['error']}]" if res.get("error") else ""),
            file=sys.stderr,
            flush=True,
        )
    if outs:
        checks = check_outputs(path, list(outs), inputs, rtol, atol, timeout)
        for out, name in outs.items():
            c = checks.get(out, {"status": "check-missing", "detail": ""})
            row["tools"][name]["check"] = c
            if c["status"] != "ok":
                print(f"  {label:32s} {name:22s} check: {c['status']} {c.get('detail', '')}", file=sys.stderr)
    return row


def large_inputs() -> str:
    import numpy as np

    path = os.path.join(OUTDIR, "large.inputs.npz")
    if not os.path.exists(path):
        os.makedirs(OUTDIR, exist_ok=True)
        x = np.random.default_rng(0).standard_normal((LARGE_BATCH, 2048), dtype=np.float32)
        np.savez(path, X=x)
    return path


def versions() -> str:
    from importlib.metadata import version

    cli = subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.strip() or "?"
    pk = ", ".join(
        f"{p} {version(p)}"
        for p in ("onnxsim", "onnxslim", "onnxoptimizer", "onnxscript", "onnx-ir", "onnx", "onnxruntime")
    )
    return f"{cli}; {pk}; Python {platform.python_version()}"


def cell(res: dict) -> str:
    if res["status"] != "ok":
        return f"**{res['status'].upper()}**"
    c = res.get("check", {})
    mark = {"ok": "", "n/a": " (not run)"}.get(c.get("status"), f" **{c.get('status', '?').upper()}**")
    fn = f"+{res['functions']}f" if res.get("functions") else ""
    return f"{res['nodes']}{fn} · {res['first_s'] * 1e3:.1f}{mark}"


def usable(res: dict) -> bool:
    return res["status"] == "ok" and res.get("check", {}).get("status") in ("ok", "n/a")


def report(corpus: list[dict], large: dict | None, args, started: float) -> str:
    names = [n for n in TOOLS if n not in DIAG]
    out = []
    load = os.getloadavg()[0]
    out.append(
        f"Produced on {datetime.date.today()} by `python3 bench/simplify_bench.py --write-docs` "
        f"({time.time() - started:.0f} s for the whole run; machine: {os.cpu_count()} cores, shared with "
        f"other jobs, load average {args.load_before:.2f} before / {load:.2f} after)."
    )
    out.append("")
    out.append(f"Versions: {versions()} (CLI built {args.cli_built:%Y-%m-%d %H:%M} UTC, tree at git {args.git}).")
    out.append("")
    out.append(
        "Time, three ways, the same for every tool: **whole process** is the wall time of a fresh process "
        "doing the job, start-up and imports included (onnxsurgeon: its CLI binary; the Python tools: "
        "`python -c` with their imports), what a user at a shell waits for; **first call in-process** is the "
        "first load -> optimize -> save in a fresh process after the imports (onnxsurgeon through its Python "
        "API, `osg.run(IN, 'simplify', output=OUT)`), one-time costs such as building onnx's operator-schema "
        "registry included; **warm call in-process** is the best of the next calls in that process "
        f"({args.warm} on corpus models, 1 on the large model), a notebook's steady state (the output file "
        "is removed, untimed, before each call, so every call writes a new file as the first one does). Peak RSS is "
        "`/usr/bin/time -f %M` of the whole process (onnxsurgeon: the CLI). *nodes after* counts the main graph, "
        "all subgraphs and the bodies of local functions that are left (`+Nf`: N local functions left; a "
        "tool that inlines a function called twice counts its body twice, one that keeps it counts it once "
        "plus the calls). The `nop` row is a diagnostic: onnxsurgeon's load -> save round trip, the floor "
        "under its simplify time. Every output (onnxsurgeon: the CLI's) was run in onnxruntime "
        "(CPU) beside the original and compared with `np.allclose` at the manifest's rtol/atol; "
        "MISMATCH / ORT-ERROR mark outputs that do not match or do not run, ERROR / TIMEOUT a tool that "
        f"failed or ran past {args.timeout:.0f} s."
    )
    out.append("")
    if large:
        out.append(
            f"**Large model**: `bench/.data/large_inline.onnx`, {large['size_mb']:.0f} MB, "
            f"{large['nodes_before']} nodes (30 x MatMul+Add+Relu, 2048 x 2048 fp32, weights inline); "
            f"best of {args.repeat} processes; input X random {LARGE_BATCH} x 2048, rtol = atol = 1e-4."
        )
        out.append("")
        out.append(
            "| tool | whole process (s) | first call in-process (s) | warm call in-process (s) | "
            "first call vs onnxsurgeon | peak RSS (MiB) | nodes after | ops after | onnxruntime check |"
        )
        out.append("|---|---:|---:|---:|---:|---:|---:|---|---|")
        base = large["tools"][SURGEON].get("first_s")
        for name in TOOLS:
            r = large["tools"][name]
            if r["status"] != "ok":
                out.append(f"| {name} | {r['status']} | – | – | – | {r['rss_mb'] or 0:.0f} | – | – | {r['error']} |")
                continue
            c = r.get("check", {})
            chk = (
                c.get("status", "?")
                + (f", max abs err {c['max_abs_err']:.1e}" if "max_abs_err" in c else "")
                + (f": {c['detail']}" if c.get("detail") else "")
            )
            ops = ", ".join(f"{k} {v}" for k, v in sorted(r["hist"].items()))
            ratio = f"{r['first_s'] / base:.1f}x" if base else "–"
            out.append(
                f"| {name} | {r['process_s']:.2f} | {r['first_s']:.2f} | {r['warm_s']:.2f} | {ratio} | "
                f"{r['rss_mb']:.0f} | {r['nodes']} | {ops} | {chk} |"
            )
        out.append("")

    total_before = sum(r["nodes_before"] for r in corpus)
    out.append(
        f"**Corpus**: {len(corpus)} models from `tests/models/.generated` "
        f"({total_before} nodes in all, {sum(r['size_mb'] for r in corpus):.0f} MB), one process per tool and model."
    )
    out.append("")
    out.append(
        "| tool | whole process, total (s) | first call in-process, total (s) | first call, median (ms) | "
        "warm call in-process, total (s) | warm call, median (ms) | max peak RSS (MiB) | total nodes after | "
        "nodes after excl. Constant | models with fewest nodes | tool errors | outputs not running / not matching |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
    best_nodes = {}
    for r in corpus:
        ok = [t["nodes"] for n, t in r["tools"].items() if usable(t) and n not in DIAG]
        best_nodes[r["model"]] = min(ok) if ok else None
    for name in TOOLS:
        runs = [r["tools"][name] for r in corpus]
        ok_runs = [t for t in runs if t["status"] == "ok"]
        first = [t["first_s"] for t in ok_runs]
        warm_ = [t["warm_s"] for t in ok_runs]
        errors = [r["model"] for r in corpus if r["tools"][name]["status"] != "ok"]
        bad = [
            f"{r['model']} ({r['tools'][name]['check']['status']})"
            for r in corpus
            if r["tools"][name]["status"] == "ok" and not usable(r["tools"][name])
        ]
        # A failed tool run leaves the model as it was: count its original nodes.
        total_after = sum(
            r["tools"][name]["nodes"] if r["tools"][name]["status"] == "ok" else r["nodes_before"] for r in corpus
        )
        no_const = sum(
            (r["tools"][name]["nodes"] - r["tools"][name]["hist"].get("Constant", 0))
            if r["tools"][name]["status"] == "ok"
            else r["nodes_before"] - r["hist_before"].get("Constant", 0)
            for r in corpus
        )
        fewest = (
            "–"
            if name in DIAG
            else str(
                sum(
                    1
                    for r in corpus
                    if usable(r["tools"][name]) and r["tools"][name]["nodes"] == best_nodes[r["model"]]
                )
            )
            + f" / {len(corpus)}"
        )
        rss = max((t["rss_mb"] or 0) for t in runs)
        out.append(
            f"| {name} | {sum(t['process_s'] for t in runs):.2f} | {sum(first):.2f} | "
            f"{statistics.median(first) * 1e3 if first else 0:.1f} | {sum(warm_):.3f} | "
            f"{statistics.median(warm_) * 1e3 if warm_ else 0:.2f} | {rss:.0f} | {total_after} | {no_const} | {fewest} | "
            f"{', '.join(errors) or 'none'} | {', '.join(bad) or 'none'} |"
        )
    out.append("")
    out.append("Total nodes after counts a model a tool failed on with its original node count.")
    out.append("")

    # Per-model table.
    out.append("<details><summary>Per model: nodes after · first call in-process (ms)</summary>")
    out.append("")
    out.append("| model | nodes before | " + " | ".join(names) + " |")
    out.append("|---|---:|" + "---:|" * len(names))
    for r in corpus:
        fn = f"+{r['functions_before']}f" if r["functions_before"] else ""
        out.append(
            f"| {r['model']} | {r['nodes_before']}{fn} | " + " | ".join(cell(r["tools"][n]) for n in names) + " |"
        )
    out.append("")
    out.append("</details>")
    out.append("")

    # Failures in detail.
    fails = []
    for r in corpus + ([large] if large else []):
        for name in TOOLS:
            t = r["tools"][name]
            if t["status"] != "ok":
                fails.append(f"- {r['model']}, {name}: {t['status']}: {t['error']}")
            elif not usable(t):
                c = t["check"]
                det = c.get("detail") or (f"max abs err {c['max_abs_err']:.2e}" if "max_abs_err" in c else "")
                fails.append(f"- {r['model']}, {name}: {c['status']}: {det}")
        na = {
            t["check"]["detail"]
            for t in r["tools"].values()
            if t["status"] == "ok" and t.get("check", {}).get("status") == "n/a"
        }
        for detail in sorted(na):
            fails.append(f"- {r['model']}: outputs not checked: {detail}")
        notes = {t["check"].get("note") for t in r["tools"].values() if t["status"] == "ok" and t.get("check")}
        for note in sorted(n for n in notes if n):
            fails.append(f"- {r['model']}, all tools: {note}")
    out.append("**Failures and unchecked outputs**:" if fails else "**Failures**: none.")
    out.extend(fails)
    out.append("")

    # The goal.
    out.extend(goal(corpus, large))
    return "\n".join(out)


def goal(corpus: list[dict], large: dict | None) -> list[str]:
    lines = [
        "**Goal** (simplify >= 10x faster than onnxsim and onnxslim, and no more nodes left than they leave):",
        "",
    ]
    rows = corpus + ([large] if large else [])
    for key, what in MEASURES:
        for anchor in ANCHORS_10X:
            both = [r for r in rows if r["tools"][anchor]["status"] == "ok" and r["tools"][SURGEON]["status"] == "ok"]
            if not both:
                continue
            ratio = {r["model"]: r["tools"][anchor][key] / max(1e-9, r["tools"][SURGEON][key]) for r in both}
            below = [f"{m} ({x:.1f}x)" for m, x in ratio.items() if x < 10]
            small = [r for r in both if r is not large]
            tot = sum(r["tools"][anchor][key] for r in small) / max(1e-9, sum(r["tools"][SURGEON][key] for r in small))
            lg = f"; large model {ratio[large['model']]:.1f}x" if large and large in both else ""
            shown = ", ".join(below[:12]) + (f" and {len(below) - 12} more" if len(below) > 12 else "")
            lines.append(
                f"- speed vs {anchor}, {what}: corpus total {tot:.1f}x, per model min "
                f"{min(ratio.values()):.1f}x / median {statistics.median(ratio.values()):.1f}x{lg}. "
                f"Below 10x: {shown or 'none'}. **{'Holds' if not below else 'Does not hold everywhere'}.**"
            )
    for anchor in ANCHORS_10X:
        more = []
        for r in rows:
            s, a = r["tools"][SURGEON], r["tools"][anchor]
            if usable(s) and usable(a) and s["nodes"] > a["nodes"]:
                more.append(r)
        fewer = sum(
            1
            for r in rows
            if usable(r["tools"][SURGEON])
            and usable(r["tools"][anchor])
            and r["tools"][SURGEON]["nodes"] < r["tools"][anchor]["nodes"]
        )

        def nc(t):
            return t["nodes"] - t["hist"].get("Constant", 0)

        more_nc = [
            r["model"]
            for r in rows
            if usable(r["tools"][SURGEON])
            and usable(r["tools"][anchor])
            and nc(r["tools"][SURGEON]) > nc(r["tools"][anchor])
        ]
        lines.append(
            f"- nodes vs {anchor}: simplify leaves more nodes on {len(more)} of {len(rows)} models "
            f"({'corpus + large' if large else 'corpus'}), "
            f"fewer on {fewer}. **{'Holds' if not more else 'Does not hold'}.** Not counting Constant "
            f"nodes, more on {len(more_nc)}: {', '.join(more_nc) or 'none'}."
        )
    # Which ops simplify leaves beyond the best of onnxsim / onnxslim.
    excess: collections.Counter = collections.Counter()
    instead: collections.Counter = collections.Counter()
    where = collections.defaultdict(list)
    for r in rows:
        s = r["tools"][SURGEON]
        cands = [r["tools"][a] for a in ANCHORS_10X if usable(r["tools"][a])]
        if not usable(s) or not cands:
            continue
        best = min(cands, key=lambda t: t["nodes"])
        if s["nodes"] <= best["nodes"]:
            continue
        for op, n in s["hist"].items():
            d = n - best["hist"].get(op, 0)
            if d > 0:
                excess[op] += d
                where[op].append(f"{r['model']} +{d}")
        for op, n in best["hist"].items():
            d = n - s["hist"].get(op, 0)
            if d > 0:
                instead[op] += d
    if excess:
        lines.append("")
        lines.append(
            "Ops simplify leaves beyond the fewer-node one of onnxsim / onnxslim (summed over the models "
            "where simplify leaves more nodes; an op the other tool has more of is not netted out):"
        )
        lines.append("")
        lines.append("| op | extra nodes | models |")
        lines.append("|---|---:|---|")
        for op, n in excess.most_common():
            w = where[op]
            lines.append(f"| {op} | {n} | {', '.join(w[:8])}{' …' if len(w) > 8 else ''} |")
        lines.append("")
        lines.append(
            "On those models the fewer-node tool has these ops instead (more of them than simplify leaves): "
            + (", ".join(f"{op} {n}" for op, n in instead.most_common()) or "none")
            + "."
        )
    return lines


def write_docs(text: str, begin: str = BEGIN, end: str = END, section: str = SECTION) -> None:
    """Replaces the block between `begin` and `end` in docs/benchmarks.md by `text`, or appends
    `section` and the block when the markers are not there yet."""
    content = open(DOCS).read()
    block = f"{begin}\n{text}\n{end}"
    if begin in content:
        content = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, content, flags=re.S)
    else:
        content = content.rstrip("\n") + f"\n\n{section}\n\n{block}\n"
    open(DOCS, "w").write(content)


def main() -> int:
    ensure_venv()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=2, help="processes per tool on the large model (best is reported)")
    ap.add_argument("--warm", type=int, default=10, help="warm calls after the first, per process, on corpus models")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per tool run")
    ap.add_argument("--models", default="", help="only corpus models whose name matches this regex")
    ap.add_argument("--no-large", action="store_true", help="skip the large model")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--json", help="also write the raw results here")
    args = ap.parse_args()
    args.load_before = os.getloadavg()[0]
    started = time.time()
    if not os.path.exists(BUILT_CLI):
        sys.exit(f"{BUILT_CLI} is missing: build first (make test)")
    os.makedirs(OUTDIR, exist_ok=True)
    shutil.copy2(BUILT_CLI, CLI)
    args.cli_built = datetime.datetime.fromtimestamp(os.path.getmtime(BUILT_CLI), datetime.timezone.utc)
    args.git = subprocess.run(
        ["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()

    corpus = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*.onnx"))):
        name = os.path.basename(path)[:-5]
        if args.models and not re.search(args.models, name):
            continue
        manifest = json.load(open(os.path.join(CORPUS, name + ".json")))
        corpus.append(
            bench_model(
                name,
                path,
                os.path.join(CORPUS, manifest["inputs"]),
                manifest.get("rtol", 1e-4),
                manifest.get("atol", 1e-4),
                1,
                args.warm,
                args.timeout,
            )
        )
    if not corpus:
        sys.exit(f"no corpus models in {CORPUS} (build them: make test)")
    large = None
    if not args.no_large:
        if not os.path.exists(LARGE):
            subprocess.run([sys.executable, os.path.join(HERE, "make_large_model.py")], check=True)
        large = bench_model("large_inline", LARGE, large_inputs(), 1e-4, 1e-4, args.repeat, 1, args.timeout)
        for name in TOOLS:  # 5 x 500 MB of outputs: do not keep them
            p = os.path.join(OUTDIR, f"large_inline.{slug(name)}.onnx")
            if os.path.exists(p):
                os.remove(p)
    if args.json:
        json.dump({"corpus": corpus, "large": large}, open(args.json, "w"), indent=1)
    text = report(corpus, large, args, started)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
