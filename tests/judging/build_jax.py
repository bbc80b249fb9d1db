"""Judging-corpus models from the jax venv (jax2onnx): a Flax nnx CNN at batch 1 (NHWC,
BatchNorm in inference mode, average pooling). Expected outputs: jax itself."""

from __future__ import annotations

import jax
from corpus_jax import _export, _randomize
from flax import nnx


class SmallConvNet(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.c1 = nnx.Conv(3, 16, (3, 3), strides=(2, 2), rngs=rngs)
        self.b1 = nnx.BatchNorm(16, use_running_average=True, rngs=rngs)
        self.c2 = nnx.Conv(16, 32, (3, 3), strides=(2, 2), rngs=rngs)
        self.b2 = nnx.BatchNorm(32, use_running_average=True, rngs=rngs)
        self.head = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        x = jax.nn.relu(self.b1(self.c1(x)))
        x = jax.nn.silu(self.b2(self.c2(x)))
        return self.head(x.mean(axis=(1, 2)))


def flax_cnn_b1(seed: int):
    module = SmallConvNet(nnx.Rngs(seed % 10000))
    _randomize(module, seed)
    exported = _export(module, 13, {}, seed, tags=["batch1", "cnn"], shape=(1, 32, 32, 3))
    exported.rtol, exported.atol = 1e-3, 1e-4
    return exported
