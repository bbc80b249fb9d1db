"""What `--target` costs over a plain load -> save, and what `check --target` costs, as
whole CLI processes on the corpus' largest models (best of N runs each).

    .venv/bin/python bench/target_bench.py [--runs 5] [models...]

A no-op target (the model already fine) should cost what the round trip costs: the check
is one walk over the nodes. A target with a plan costs what its passes cost."""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "build" / "onnxsurgeon"
DEFAULT = ["gpt2_dynamo18", "bert_dynamo18", "llama_dynamo18", "bert_op14"]


def best(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=False, capture_output=True)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("models", nargs="*", default=DEFAULT)
    a = ap.parse_args()
    out = Path(tempfile.mkdtemp()) / "out.onnx"
    print(
        "| model | nodes | round trip | --target ort (no-op) | check --target rknn2 | --target ort-1.14 | --target rknn2 |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in a.models:
        m = ROOT / "tests" / "models" / ".generated" / f"{name}.onnx"
        import onnx

        nodes = len(onnx.load(m, load_external_data=False).graph.node)
        row = [
            best([str(CLI), str(m), "-o", str(out)], a.runs),
            best([str(CLI), "--target", "ort", str(m), "-o", str(out)], a.runs),
            best([str(CLI), "check", "--target", "rknn2", str(m)], a.runs),
            best([str(CLI), "--target", "ort-1.14", str(m), "-o", str(out)], a.runs),
            best([str(CLI), "--target", "rknn2", str(m), "-o", str(out)], a.runs),
        ]
        print(f"| {name} | {nodes} | " + " | ".join(f"{t * 1e3:.0f} ms" for t in row) + " |")


if __name__ == "__main__":
    main()
