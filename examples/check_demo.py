"""Runs a model in onnxruntime on the example's fixed input and compares with the torch
module's output (custom_layernorm.npz). Prints what a user would see; exits 1 only if
the model runs but computes something else, or (with --must-run) is refused."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import onnxruntime as ort

HERE = pathlib.Path(__file__).resolve().parent


def main(path: str, must_run: bool) -> int:
    ref = np.load(HERE / "custom_layernorm.npz")
    try:
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - report exactly what the runtime says
        first_line = str(e).strip().splitlines()[0]
        print(f"  onnxruntime {ort.__version__} refuses {pathlib.Path(path).name}: {first_line[:160]}")
        return 1 if must_run else 0
    (y,) = session.run(None, {"x": ref["x"]})
    err = float(np.abs(y - ref["y"]).max())
    ok = err <= 1e-4
    print(
        f"  onnxruntime runs {pathlib.Path(path).name}: max |onnx - torch| = {err:.2e} ({'OK' if ok else 'MISMATCH'})"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], "--must-run" in sys.argv[2:]))
