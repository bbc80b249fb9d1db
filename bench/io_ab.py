#!/usr/bin/env python3
"""A/B timing of two onnxsurgeon CLIs on loading and on load -> save, interleaved run by
run so that machine load drifts hit both alike (for a change to core/io on a busy machine).

  load   CLI --dry-run IN            load (and load-time validation), no pass, no write
  save   CLI IN -o OUT [--external-data all]  the full round trip, into an empty folder

Models: the ~500 MB ones of bench/make_large_model.py (few big tensors), a synthetic
node-heavy one (60k small nodes, made here) and, if generated, corpus exports.

  .venv/bin/python bench/io_ab.py --baseline OLD_CLI [--candidate build/onnxsurgeon] [--runs N]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, ".data")


def node_heavy_model(path: str, layers: int = 20000) -> None:
    """layers x (MatMul, Add, Relu) on [1, 8] with 8x8 weights: many nodes, little data."""
    if os.path.exists(path):
        return
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    prev = "X"
    for i in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), f"w{i}"))
        inits.append(numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), f"b{i}"))
        nodes += [
            helper.make_node("MatMul", [prev, f"w{i}"], [f"m{i}"], name=f"mm{i}"),
            helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"add{i}"),
            helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"relu{i}"),
        ]
        prev = f"r{i}"
    graph = helper.make_graph(
        nodes,
        "heavy",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 8])],
        inits,
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True)
    parser.add_argument("--candidate", default=os.path.join(ROOT, "build", "onnxsurgeon"))
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    heavy = os.path.join(DATA, "node_heavy.onnx")
    node_heavy_model(heavy)
    models = [("node-heavy (60k nodes, 5 MB)", heavy, [])]
    for name, path in (
        ("large inline (504 MB)", os.path.join(DATA, "large_inline.onnx")),
        ("large external (504 MB)", os.path.join(DATA, "large_external", "large.onnx")),
    ):
        if os.path.exists(path):
            models.append((name, path, []))
    bert = os.path.join(ROOT, "tests", "models", ".generated", "bert_op14.onnx")
    if os.path.exists(bert):
        models.append(("corpus bert_op14", bert, []))

    clis = {"baseline": args.baseline, "candidate": args.candidate}
    rows = []
    with tempfile.TemporaryDirectory(dir=DATA if os.path.isdir(DATA) else None) as tmp:
        for label, path, extra in models:
            for task in ("load", "save", "save --external-data all"):
                times = {k: [] for k in clis}
                for run in range(args.runs + 1):  # the first run warms caches and is dropped
                    for key, cli in clis.items() if run % 2 == 0 else reversed(list(clis.items())):
                        if task == "load":
                            argv = [cli, "--dry-run", path]
                        else:
                            out = os.path.join(tmp, key)
                            shutil.rmtree(out, ignore_errors=True)
                            os.makedirs(out)
                            argv = [cli, path, "-o", os.path.join(out, "m.onnx"), *task.split()[1:]]
                        t = timed(argv)
                        if run:
                            times[key].append(t)
                b, c = statistics.median(times["baseline"]), statistics.median(times["candidate"])
                rows.append((label, task, b, c))
                print(f"{label:30s} {task:26s} baseline {b:7.3f} s  candidate {c:7.3f} s  ({c / b:5.2f}x)", flush=True)
    print()
    print("| model | task | baseline median (s) | candidate median (s) | candidate / baseline |")
    print("|---|---|---:|---:|---:|")
    for label, task, b, c in rows:
        print(f"| {label} | {task} | {b:.3f} | {c:.3f} | {c / b:.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
