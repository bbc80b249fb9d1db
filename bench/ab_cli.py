#!/usr/bin/env python3
"""A/B speed check of two onnxsurgeon CLI binaries on the same models and pipelines (a
refactor must not slow anything down).

    .venv/bin/python bench/ab_cli.py --a OLD/build/onnxsurgeon --b build/onnxsurgeon [--rounds 5]
        [--a-label TEXT] [--b-label TEXT] [--models REGEX] [--pipeline simplify --pipeline convert-opset=13]
        [--large PATH | --no-large] [--timeout 600] [--json PATH] [--write-docs]

Models: every corpus model in tests/models/.generated/*.onnx (what bench/simplify_bench.py and
bench/opset_convert.py run; tests/models/generate.py makes them) and bench/.data/large_inline.onnx
(~500 MB, bench/make_large_model.py, made if missing unless --no-large). Pipelines (--pipeline,
repeatable): by default `simplify` on every model and `convert-opset=13` on the models above
opset 13 (bench/opset_convert.py converts down from opset >= 17; a model already at or below the
target would time a no-op).

How: both binaries are copied to a temporary folder first (a rebuild during the run cannot change
them). Per model and pipeline, the two run interleaved for --rounds rounds, A then B in even
rounds and B then A in odd ones, so load on a shared machine hits both alike. Each run is a
fresh process `CLI -q --pass PIPELINE IN -o OUT`; wall is measured around it, CPU is the user +
system time of that process (os.wait4), peak RSS its ru_maxrss. Reported: median and min of each,
and B/A of the medians.

A time counts only for a correct result: the first round's two outputs must be byte-identical,
or else both must compute what the input computes (onnxruntime on the corpus's inputs, at the
manifest's rtol/atol: simplify_bench.check_outputs), and every later round must write the same
bytes as that binary's first. A row where this fails, or where either binary fails, is shown
but left out of the totals. When the two builds legitimately differ (a newer simplify with more
steps), the node counts of both outputs are shown.

--write-docs rewrites the block between <!-- ab-cli:begin --> and <!-- ab-cli:end --> in
docs/benchmarks.md (simplify_bench.write_docs).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import simplify_bench as sb  # noqa: E402

DEFAULT_PIPELINES = ("simplify", "convert-opset=13")
BEGIN, END = "<!-- ab-cli:begin -->", "<!-- ab-cli:end -->"
SECTION = "## A/B: two CLI builds on the same models, interleaved"
LARGE_TOLERANCE = 1e-4  # bench/simplify_bench.py's for its large model


def run_once(cli: str, pipeline: str, src: str, dst: str, timeout: float) -> dict:
    """One fresh process of `cli`: wall, CPU (user + sys), peak RSS, exit code, stderr tail."""
    if os.path.exists(dst):
        os.remove(dst)
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen([cli, "-q", "--pass", pipeline, src, "-o", dst], stdout=subprocess.DEVNULL, stderr=err)
        timer = threading.Timer(timeout, proc.kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        timed_out = timer.finished.is_set()  # set by the timer firing (cancel comes after)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        err.seek(0)
        tail = f"timed out after {timeout:.0f} s" if timed_out else (err.read().strip().splitlines() or [""])[-1][:200]
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss_mib": usage.ru_maxrss / 1024,
        "rc": proc.returncode,
        "error": tail if proc.returncode else "",
    }


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def model_opset(path: str) -> int:
    import onnx

    model = onnx.load(path, load_external_data=False)
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def applies(pipeline: str, opset: int) -> bool:
    """A downward conversion runs only on models above its target (elsewhere it is a no-op)."""
    m = re.fullmatch(r"(?:convert|downgrade)-opset=(\d+)", pipeline)
    return not m or opset > int(m.group(1))


def models(args) -> list[tuple[str, str, str, float, float]]:
    """(name, path, inputs .npz, rtol, atol) of every model the run covers."""
    out = []
    for path in sorted(glob.glob(os.path.join(sb.CORPUS, "*.onnx"))):
        name = os.path.basename(path)[:-5]
        if args.models and not re.search(args.models, name):
            continue
        manifest = json.load(open(os.path.join(sb.CORPUS, name + ".json")))
        inputs = os.path.join(sb.CORPUS, manifest["inputs"])
        out.append((name, path, inputs, manifest.get("rtol", 1e-4), manifest.get("atol", 1e-4)))
    if not args.no_large and (not args.models or re.search(args.models, "large_inline")):
        if not os.path.exists(args.large):
            if args.large != sb.LARGE:
                sys.exit(f"{args.large} does not exist")
            subprocess.run([sys.executable, os.path.join(HERE, "make_large_model.py")], check=True)
        out.append(("large_inline", args.large, sb.large_inputs(), LARGE_TOLERANCE, LARGE_TOLERANCE))
    return out


def verify(src: str, outs: dict[str, str], inputs: str, rtol: float, atol: float, timeout: float) -> dict:
    """Whether the A and B outputs of one model and pipeline may be compared on time."""
    nodes = {k: sb.count_nodes(p)[0] for k, p in outs.items()}
    if sha256(outs["A"]) == sha256(outs["B"]):
        return {"ok": True, "output": "identical", "nodes": nodes}
    checks = sb.check_outputs(src, [outs["A"], outs["B"]], inputs, rtol, atol, timeout)
    status = {k: checks[p].get("status") for k, p in outs.items()}
    if all(s == "ok" for s in status.values()):
        return {"ok": True, "output": "differ, both equal to the input in onnxruntime", "nodes": nodes}
    detail = "; ".join(
        f"{k}: {checks[p].get('status')}, max abs err {checks[p].get('max_abs_err', '?')} {checks[p].get('detail') or ''}".strip()
        for k, p in outs.items()
    )
    return {"ok": False, "output": f"differ, NOT both equal to the input ({detail})", "nodes": nodes}


def ab_row(bins: dict[str, str], name: str, src: str, inputs: str, rtol: float, atol: float, pipeline: str, args, tmp):
    outs = {k: os.path.join(tmp, f"{sb.slug(name)}.{sb.slug(pipeline)}.{k}.onnx") for k in bins}
    runs: dict[str, list[dict]] = {k: [] for k in bins}
    first_sha: dict[str, str] = {}
    problems = []
    for r in range(args.rounds):
        for k in ("A", "B") if r % 2 == 0 else ("B", "A"):
            res = run_once(bins[k], pipeline, src, outs[k], args.timeout)
            runs[k].append(res)
            if res["rc"]:
                problems.append(f"{k} exit {res['rc']}: {res['error']}")
                continue
            digest = sha256(outs[k])
            if first_sha.setdefault(k, digest) != digest:
                problems.append(f"{k} wrote different bytes in round {r + 1}")
        if problems:
            break
    row = {"model": name, "pipeline": pipeline, "rounds": len(runs["A"])}
    for k, rs in runs.items():
        for measure in ("wall", "cpu", "rss_mib"):
            values = [x[measure] for x in rs]
            row[f"{k}_{measure}_median"] = statistics.median(values)
            row[f"{k}_{measure}_min"] = min(values)
    if problems:
        row.update(ok=False, output="; ".join(dict.fromkeys(problems)), nodes={})
    else:
        row.update(verify(src, outs, inputs, rtol, atol, args.timeout))
    for p in outs.values():
        if os.path.exists(p):
            os.remove(p)
    for measure in ("wall", "cpu"):
        a = row[f"A_{measure}_median"]
        row[f"{measure}_ratio"] = row[f"B_{measure}_median"] / a if a > 0 else float("nan")
    return row


_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def shown(text: str) -> str:
    """Paths as docs show them: relative to the repository, other absolute folders as <abs>/
    (a doc never holds the machine's paths; tests/python/test_docs.py checks)."""
    text = text.replace(_REPO + "/", "")
    return re.sub(r"(?<![\w.~])/(?:work|home|tmp|root|Users|mnt|var/folders)/[^\s'\"`:;,)]*/", "<abs>/", text)


def describe(path: str, label: str) -> str:
    version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip() or "?"
    return (f"{label}: " if label else "") + f"`{shown(path)}` ({version}, sha256 {sha256(path)[:12]})"


def report(rows: list[dict], args, started: float, load_before: float) -> str:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"Produced by `{shown(' '.join(['bench/ab_cli.py', *sys.argv[1:]]))}` on {when} "
        f"({time.time() - started:.0f} s for the whole run).",
        "",
        f"- A: {args.a_desc}",
        f"- B: {args.b_desc}",
        f"- {args.rounds} rounds per model and pipeline, interleaved (A B, then B A, ...), each run a fresh process",
        f"- load average (1 min) before / after the run: {load_before:.2f} / {os.getloadavg()[0]:.2f}; nproc={os.cpu_count()}",
        "",
        "Totals over the rows whose outputs were verified: sum of the per-row medians, and the geometric mean "
        "of the per-row B/A ratios (each model weighs the same).",
        "",
        "| pipeline | rows | wall A (s) | wall B (s) | B/A wall | geo-mean B/A wall | CPU A (s) | CPU B (s) | B/A CPU "
        "| geo-mean B/A CPU |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for pipeline in dict.fromkeys(r["pipeline"] for r in rows):
        ok = [r for r in rows if r["pipeline"] == pipeline and r["ok"]]
        if not ok:
            lines.append(f"| `{pipeline}` | 0 | – | – | – | – | – | – | – | – |")
            continue
        cells = []
        for measure in ("wall", "cpu"):
            a = sum(r[f"A_{measure}_median"] for r in ok)
            b = sum(r[f"B_{measure}_median"] for r in ok)
            geo = math.exp(statistics.fmean(math.log(r[f"{measure}_ratio"]) for r in ok))
            cells += [f"{a:.2f}", f"{b:.2f}", f"{b / a:.3f}", f"{geo:.3f}"]
        lines.append(f"| `{pipeline}` | {len(ok)} | " + " | ".join(cells) + " |")
    left_out = [r for r in rows if not r["ok"]]
    lines += [
        "",
        f"Rows left out of the totals (a failed run or an output that could not be verified): {len(left_out)}",
    ]
    lines += [f"- {r['model']} `{r['pipeline']}`: {r['output']}" for r in left_out]
    lines += [
        "",
        "| model | pipeline | output | nodes A / B | wall A med (min) | wall B med (min) | B/A wall | CPU A med | CPU B med "
        "| B/A CPU | peak RSS A / B (MiB) |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        nodes = r["nodes"]
        node_cell = f"{nodes['A']} / {nodes['B']}" if nodes else "–"
        output = r["output"] if r["ok"] else "**left out**"
        lines.append(
            f"| {r['model']} | `{r['pipeline']}` | {output} | {node_cell} "
            f"| {r['A_wall_median']:.3f} ({r['A_wall_min']:.3f}) | {r['B_wall_median']:.3f} ({r['B_wall_min']:.3f}) "
            f"| {r['wall_ratio']:.3f} | {r['A_cpu_median']:.3f} | {r['B_cpu_median']:.3f} | {r['cpu_ratio']:.3f} "
            f"| {r['A_rss_mib_median']:.0f} / {r['B_rss_mib_median']:.0f} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="the baseline CLI binary")
    ap.add_argument("--b", required=True, help="the CLI binary under test")
    ap.add_argument("--a-label", default="", help="what A is, for the report (e.g. 'git db05c42')")
    ap.add_argument("--b-label", default="", help="what B is, for the report")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved A/B rounds per model and pipeline")
    ap.add_argument("--models", default="", help="only models whose name matches this regex (large_inline included)")
    ap.add_argument("--pipeline", action="append", help=f"repeatable; default: {', '.join(DEFAULT_PIPELINES)}")
    ap.add_argument("--large", default=sb.LARGE, help="the large model (default: bench/.data/large_inline.onnx)")
    ap.add_argument("--no-large", action="store_true", help="skip the large model")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    for k in ("a", "b"):
        path = getattr(args, k)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            sys.exit(f"--{k} {path}: not an executable file")
    pipelines = args.pipeline or list(DEFAULT_PIPELINES)
    load_before = os.getloadavg()[0]
    started = time.time()
    todo = models(args)
    if not todo:
        sys.exit(f"no models (corpus: {sb.CORPUS}; build it with tests/models/generate.py)")
    args.a_desc, args.b_desc = describe(args.a, args.a_label), describe(args.b, args.b_label)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ab_cli.") as tmp:
        bins = {}
        for k in ("A", "B"):  # snapshots: a rebuild during the run cannot change what is timed
            bins[k] = os.path.join(tmp, f"onnxsurgeon-{k}")
            shutil.copy2(getattr(args, k.lower()), bins[k])
        for name, src, inputs, rtol, atol in todo:
            opset = model_opset(src)
            for pipeline in pipelines:
                if not applies(pipeline, opset):
                    continue
                row = ab_row(bins, name, src, inputs, rtol, atol, pipeline, args, tmp)
                rows.append(row)
                print(
                    f"  {name:28s} {pipeline:18s} wall B/A {row['wall_ratio']:.3f} cpu B/A {row['cpu_ratio']:.3f} "
                    f"{row['output'] if row['ok'] else 'LEFT OUT: ' + row['output']}",
                    file=sys.stderr,
                    flush=True,
                )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    text = report(rows, args, started, load_before)
    print(text)
    if args.write_docs:
        sb.write_docs(text, BEGIN, END, SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
