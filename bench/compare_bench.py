#!/usr/bin/env python3
"""What `onnxsurgeon compare` costs on two ~500 MB models, against running both once.

The models: bench/.data/large_inline.onnx (bench/make_large_model.py: 30 x MatMul + Add +
Relu, 2048 x 2048 fp32 weights, 504 MB) and a copy with 16 biases of layer 20 changed, so
compare has a divergence to find (Add_20). Each command runs in a fresh child process;
wall time around the child, peak RSS from os.wait4 (the child and the processes it
waited for: compare's Python helper included).

  baseline   one Python process: onnxruntime loads A and runs it once, then B (CPU, graph
             optimisations off, one thread, as compare runs them), on the same input
  compare    build/onnxsurgeon compare A B (every MatMul/Add/Relu output compared), at the
             default batch (64 tensors a segment) and at --batch 8 (more, smaller segments)

One warm-up run each (the page cache holds the models), then the median of --runs.

  .venv/bin/python bench/make_large_model.py
  .venv/bin/python bench/compare_bench.py [--runs N] [--rows N] [--write-docs]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, ".data")
CLI = os.path.join(ROOT, "build", "onnxsurgeon")
A = os.path.join(DATA, "large_inline.onnx")
B = os.path.join(DATA, "large_inline_perturbed.onnx")
DOCS = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- compare-bench:begin -->", "<!-- compare-bench:end -->"

BASELINE = r"""
import sys
import numpy as np
import onnxruntime as ort

rows = int(sys.argv[3])
x = np.random.default_rng(0).standard_normal((rows, 2048)).astype(np.float32)
for path in sys.argv[1:3]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    session.run(None, {"X": x})
    del session
"""


def make_perturbed() -> None:
    if os.path.exists(B) and os.path.getmtime(B) > os.path.getmtime(A):
        return
    model = onnx.load(A)
    for init in model.graph.initializer:
        if init.name == "b20":  # a bias: every row sees it (one weight element may meet a dead unit)
            b = numpy_helper.to_array(init).copy()
            b[:16] += 0.5
            init.CopyFrom(numpy_helper.from_array(b, "b20"))
    onnx.save(model, B)


def timed(command: list[str]) -> tuple[float, int, subprocess.CompletedProcess | None]:
    """Wall seconds and peak RSS (bytes) of a child and the children it waited for."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_maxrss * 1024, subprocess.CompletedProcess(command, proc.returncode, out, err)


def measure(name: str, command: list[str], runs: int, expect_rc: int) -> dict:
    walls, rss = [], []
    for i in range(runs + 1):
        wall, peak, proc = timed(command)
        if proc.returncode != expect_rc:
            sys.exit(f"{name}: exit {proc.returncode}\n{proc.stdout.decode()}\n{proc.stderr.decode()}")
        if i:  # the first run warms the page cache
            walls.append(wall)
            rss.append(peak)
    result = {"name": name, "seconds": statistics.median(walls), "peak_rss": max(rss), "runs": runs}
    if name.startswith("compare"):
        report = json.loads(proc.stdout)
        first = report["first_divergence"]
        result["first_divergence"] = first["a_node"] if first else None
        result["tensors"] = sum(r["computed"] for r in report["tensors"])
        result["segments"] = report["segments"]["a"]
    return result


def markdown(results: list[dict], command: str, rows: int) -> str:
    base = results[0]
    lines = [
        BEGIN,
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()}, "
        f"{os.cpu_count()} cores, with `{command}`: two 504 MB models (bench/make_large_model.py, and the same "
        f"with 16 biases of layer 20 changed), input X[{rows}, 2048], median of {base['runs']} warm runs.",
        "",
        "| run | wall | vs running both once | peak RSS | tensors compared | segments per model | first divergence |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r['name']} | {r['seconds']:.2f} s | {r['seconds'] / base['seconds']:.2f}x | "
            f"{r['peak_rss'] / 2**20:.0f} MiB | {r.get('tensors', '')} | {r.get('segments', '')} | "
            f"{r.get('first_divergence') or ''} |"
        )
    lines.append(END)
    return "\n".join(lines)


def write_docs(section: str) -> None:
    with open(DOCS) as f:
        text = f.read()
    if BEGIN in text:
        start, end = text.index(BEGIN), text.index(END) + len(END)
        text = text[:start] + section + text[end:]
    else:
        text = text.rstrip() + "\n\n## compare on two 500 MB models (bench/compare_bench.py)\n\n" + section + "\n"
    with open(DOCS, "w") as f:
        f.write(text)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rows", type=int, default=32, help="rows of the input X[rows, 2048]")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--make-perturbed", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.make_perturbed:
        make_perturbed()
        return 0
    if not os.path.exists(A):
        sys.exit("run bench/make_large_model.py first")
    # In a child: a 500 MB model loaded here would count in every child's peak RSS (a fork
    # starts with the parent's pages resident).
    subprocess.run([sys.executable, __file__, "--make-perturbed"], check=True)
    shapes = ["--input-shapes", f"X:{args.rows},2048"]
    results = [
        measure(
            "baseline: onnxruntime runs A, then B, once",
            [sys.executable, "-c", BASELINE, A, B, str(args.rows)],
            args.runs,
            0,
        ),
        measure("compare A B", [CLI, "compare", "--json", *shapes, A, B], args.runs, 1),
        measure("compare A B --batch 8", [CLI, "compare", "--json", "--batch", "8", *shapes, A, B], args.runs, 1),
    ]
    command = f"{os.path.relpath(sys.executable, ROOT)} bench/compare_bench.py --runs {args.runs} --rows {args.rows}"
    section = markdown(results, command, args.rows)
    print(section)
    if args.write_docs:
        write_docs(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
