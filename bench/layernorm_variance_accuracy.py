#!/usr/bin/env python3
"""How much more accurate a LayerNorm written as max(0, E[x^2] - E[x]^2) (Flax's fast
variance, as jax2onnx exports it) becomes once fix-layernorm fuses it into
LayerNormalization, which computes E[(x - mean)^2].

    .venv/bin/python bench/layernorm_variance_accuracy.py

Both models run in onnxruntime (fp32, one thread); the reference is the same LayerNorm in
float64 numpy. Inputs are N(offset, 1) rows of width D: the larger the offset (the mean)
against the spread, the more E[x^2] - E[x]^2 cancels. Also the two Flax corpus models
(tests/models/.generated), against JAX's own fp32 outputs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import onnxsurgeon as osg  # noqa: E402

FLAX_LN = """<ir_version: 10, opset_import: ["" : 17]>
g (float[N,{d}] x) => (float[N,{d}] y) <float zero = {{0.0}}, float eps = {{1e-6}}> {{
  mean = ReduceMean <axes = [1]> (x)
  d = Sub(x, mean)
  xx = Mul(x, x)
  ex2 = ReduceMean <axes = [1]> (xx)
  m2 = Mul(mean, mean)
  var = Sub(ex2, m2)
  varc = Max(var, zero)
  ve = Add(varc, eps)
  std = Sqrt(ve)
  y = Div(d, std)
}}"""


def run(model: onnx.ModelProto, feeds: dict) -> dict:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def main() -> None:
    rng = np.random.default_rng(0)
    print("| D | offset | max abs err, E[x^2]-E[x]^2 (as exported) | max abs err, fused LayerNormalization |")
    print("| --- | --- | --- | --- |")
    for d in (32, 768):
        original = osg.parse_text(FLAX_LN.format(d=d)).to_proto()
        fused = osg.run(original, "fix-layernorm")
        assert [n.op_type for n in fused.graph.node] == ["LayerNormalization"], fused.graph.node
        for offset in (0.0, 10.0, 100.0, 1000.0):
            x = (offset + rng.standard_normal((256, d))).astype(np.float32)
            x64 = x.astype(np.float64)
            want = (x64 - x64.mean(1, keepdims=True)) / np.sqrt(x64.var(1, keepdims=True) + 1e-6)
            errors = [float(np.abs(run(m, {"x": x})["y"] - want).max()) for m in (original, fused)]
            print(f"| {d} | {offset:g} | {errors[0]:.2e} | {errors[1]:.2e} |")
    corpus = ROOT / "tests" / "models" / ".generated"
    print("\n| corpus model | max abs err vs JAX fp32, as exported | after fix-layernorm |")
    print("| --- | --- | --- |")
    for name in ("flax_layernorm_op17", "flax_mixer_op17"):
        path = corpus / f"{name}.onnx"
        if not path.is_file():
            print(f"| {name} | (not generated) | |")
            continue
        model = onnx.load(path)
        inputs = dict(np.load(corpus / f"{name}.inputs.npz"))
        expected = dict(np.load(corpus / f"{name}.expected.npz"))
        fused = osg.run(model, "fix-layernorm")
        errors = [max(float(np.abs(run(m, inputs)[k] - v).max()) for k, v in expected.items()) for m in (model, fused)]
        print(f"| {name} | {errors[0]:.2e} | {errors[1]:.2e} |")


if __name__ == "__main__":
    main()
