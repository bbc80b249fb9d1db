"""Compares a backend's saved outputs (<model>.onnx.<tag>.npy) with onnxruntime.
Usage: compare.py TAG   (nn, rk, ov, or an onnxruntime version such as 1.14.1)"""

import glob
import sys

import numpy as np
import onnxruntime as ort

x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
for f in sorted(glob.glob(f"*.onnx.{sys.argv[1]}.npy")):
    model = f.split(".onnx.")[0] + ".onnx"
    want = ort.InferenceSession(model).run(None, {"x": x})[0]
    got = np.load(f).reshape(want.shape)
    print(f"{model}: max abs error {float(np.abs(got.astype(np.float64) - want).max()):.3g}")
