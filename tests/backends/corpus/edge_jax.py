"""A batch-1 Flax (nnx) CNN through jax2onnx (run by tests/models/exporters/run.py in the
`jax` exporter venv): NHWC Conv/ReLU/avg-pool stages and a Linear head, 1x32x32x3."""

from __future__ import annotations

import jax
from corpus_jax import _export, _randomize
from exporter_lib import Exported
from flax import nnx


class SmallCNN(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.c1 = nnx.Conv(3, 16, kernel_size=(3, 3), strides=(2, 2), rngs=rngs)
        self.c2 = nnx.Conv(16, 32, kernel_size=(3, 3), rngs=rngs)
        self.head = nnx.Linear(32, 10, rngs=rngs)

    def __call__(self, x):
        x = jax.nn.relu(self.c1(x))
        x = nnx.avg_pool(jax.nn.relu(self.c2(x)), window_shape=(2, 2), strides=(2, 2))
        return self.head(x.mean(axis=(1, 2)))


def flax_cnn_op17(seed: int) -> Exported:
    module = SmallCNN(nnx.Rngs(seed))
    _randomize(module, seed)
    return _export(module, 17, {"Conv": 2, "Linear": 1}, seed, shape=(1, 32, 32, 3), tags=["batch1"])
