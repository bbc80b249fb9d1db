"""Cost of the CLI's default run summary (two Inspect passes, file sizes): a load -> save
round trip with and without -q on a model with many nodes, where the summary costs most.

    .venv/bin/python bench/cli_summary_bench.py [--nodes 100000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[1]


def chain(nodes: int) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["N", 16])
    y = helper.make_tensor_value_info(f"x{nodes}", TensorProto.FLOAT, ["N", 16])
    bias = numpy_helper.from_array(np.ones(16, np.float32), "b")
    body = [helper.make_node("Add", [f"x{i}", "b"], [f"x{i + 1}"], name=f"add{i}") for i in range(nodes)]
    return helper.make_model(
        helper.make_graph(body, "chain", [x], [y], [bias]), opset_imports=[helper.make_opsetid("", 17)]
    )


def wall(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--cli", default=str(ROOT / "build" / "onnxsurgeon"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, out = Path(tmp) / "chain.onnx", Path(tmp) / "out.onnx"
        src.write_bytes(chain(args.nodes).SerializeToString())
        print(f"{args.nodes} nodes, {src.stat().st_size / 2**20:.1f} MiB, median of {args.runs} runs")
        for label, extra in (("-q (no summary)", ["-q"]), ("default (summary)", [])):
            times = wall([args.cli, *extra, str(src), "-o", str(out)], args.runs)
            print(
                f"| `onnxsurgeon {' '.join(extra + ['IN', '-o', 'OUT'])}` | {label} | "
                f"{statistics.median(times):.3f} | {min(times):.3f}-{max(times):.3f} |"
            )


if __name__ == "__main__":
    main()
