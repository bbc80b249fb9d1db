#!/usr/bin/env python3
"""Times the mission pipeline on a graph with many outputs (once 100k outputs took
14 s because simplify never reached a fixed point: cse merged the output Identities,
strip-identity-cast undid it, ten rounds). Prints CPU seconds (user+sys of the CLI, the
median of --repeat runs; wall time depends on the machine's load) and simplify's rounds.

Usage: python bench/many_outputs.py [--cli build/onnxsurgeon] [--outputs 100000]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import tempfile

import onnx
from onnx import TensorProto, helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = ["nop", "simplify", "fix-layernorm,decompose-layernorm,simplify"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "onnxsurgeon"))
    ap.add_argument("--outputs", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "many_outputs.onnx")
        n = args.outputs
        graph = helper.make_graph(
            [helper.make_node("Identity", ["x"], [f"o{i}"]) for i in range(n)],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
            [helper.make_tensor_value_info(f"o{i}", TensorProto.FLOAT, [1]) for i in range(n)],
        )
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
        for pipeline in PIPELINES:
            times, rounds = [], "-"
            for _ in range(args.repeat):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                proc = subprocess.run(
                    [args.cli, "--pass", pipeline, "--report", "text", path, "-o", os.path.join(tmp, "out.onnx")],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                m = re.search(r"rounds=(\d+)", proc.stderr)
                rounds = m.group(1) if m else rounds
            print(f"{n} outputs  {pipeline:45s} {statistics.median(times):6.2f} s CPU  rounds={rounds}")


if __name__ == "__main__":
    main()
