#!/usr/bin/env python3
"""Downgrade of the large benchmark model (bench/make_large_model.py: 30 x 2048x2048
fp32 MatMul+Add+Relu, ~500 MB, opset 17) to opset 13: the onnxsurgeon CLI beside
onnx.version_converter (load, convert_version, save), each in its own process so peak
memory (max RSS) is measured per tool. Also both on the real-model corpus at 17/18/20.

    .venv/bin/python bench/make_large_model.py && .venv/bin/python bench/opset_convert.py
"""

from __future__ import annotations

import glob
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLI = os.environ.get("ONNXSURGEON_CLI", os.path.join(ROOT, "build", "onnxsurgeon"))
MODEL = os.path.join(HERE, ".data", "large_inline.onnx")

ONNX_CONVERT = """
import sys, onnx
from onnx import version_converter
m = onnx.load(sys.argv[1])
onnx.save(version_converter.convert_version(m, int(sys.argv[3])), sys.argv[2])
"""


def run(cmd: list[str]) -> tuple[float, float, int, str]:
    """(seconds, peak RSS MB of the child, exit status, stderr tail)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate()
    status = proc.returncode
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return seconds, peak, status, err.strip().splitlines()[-1] if err.strip() else ""


def one(tool: str, src: str, dst: str, target: int) -> tuple[float, float, int, str]:
    if tool == "onnxsurgeon":
        return run([CLI, "--pass", f"downgrade-opset={target}", src, "-o", dst])
    return run([sys.executable, "-c", ONNX_CONVERT, src, dst, str(target)])


def main() -> int:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.exists(MODEL):
            for target in (14, 13):
                for tool in ["onnxsurgeon", "onnx"]:
                    # A fresh interpreter per measurement so RUSAGE_CHILDREN peaks are per tool.
                    out = subprocess.run(
                        [
                            sys.executable,
                            __file__,
                            "--one",
                            tool,
                            MODEL,
                            os.path.join(tmp, tool + ".onnx"),
                            str(target),
                        ],
                        capture_output=True,
                        text=True,
                    )
                    results[f"large->{target}/{tool}"] = json.loads(out.stdout)
        corpus = sorted(glob.glob(os.path.join(ROOT, "tests", "models", ".generated", "*.json")))
        for tool in ["onnxsurgeon", "onnx"]:
            ok = total = 0
            failures = []
            for manifest_path in corpus:
                manifest = json.load(open(manifest_path))
                if manifest["opset"] < 17:
                    continue
                for target in (15, 13):
                    total += 1
                    src = os.path.join(os.path.dirname(manifest_path), manifest["model"])
                    _, _, status, err = one(tool, src, os.path.join(tmp, "c.onnx"), target)
                    ok += status == 0
                    if status:
                        failures.append(f"{os.path.basename(src)}->{target}: {err[:120]}")
            results[f"corpus/{tool}"] = {"converted": ok, "attempted": total, "failures": failures[:8]}
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        tool, src, dst, target = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        seconds, peak, status, err = one(tool, src, dst, target)
        print(json.dumps({"seconds": round(seconds, 2), "peak_rss_mb": round(peak), "status": status, "error": err}))
        sys.exit(0)
    sys.exit(main())
