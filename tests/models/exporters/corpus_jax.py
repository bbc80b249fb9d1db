"""JAX/Flax (nnx) models exported by jax2onnx (run in the `jax` exporter venv).

Flax's LayerNorm computes its variance as E[x^2] - E[x]^2 clamped at 0 by default
(use_fast_variance=True): ReduceMean(Mul(x, x)) - Mul(mean, mean), Max(., 0), then
Add(eps), Sqrt, Div. jax2onnx writes this decomposition at every opset (it has no
LayerNormalization lowering for nnx.LayerNorm). jax.nn.gelu's default is the tanh form
(x*x*x); approximate=False is the Erf form with x * (1/sqrt(2)).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from exporter_lib import Exported
from flax import nnx
from jax2onnx import to_onnx

D = 32
SHAPE = (2, 5, D)


def _randomize(module: nnx.Module, seed: int) -> None:
    """Random O(1) parameters: LayerNorm scale 1 + 0.2 N(0,1), vectors 0.2 N(0,1),
    matrices N(0, 1/fan_in)."""
    rng = np.random.default_rng(seed + 1)
    for path, param in nnx.iter_graph(module):
        if not isinstance(param, nnx.Param):
            continue
        shape = param.value.shape
        if path[-1] == "scale":
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        elif len(shape) <= 1:
            value = 0.2 * rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) / np.sqrt(max(1, int(np.prod(shape[:-1]))))
        param.value = jnp.asarray(value, dtype=param.value.dtype)


def _export(module, opset: int, modules: dict[str, int], seed: int, tags=(), notes=(), shape=SHAPE) -> Exported:
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    model = to_onnx(module, [shape], opset=opset, input_names=["x"], output_names=["y"])
    expected = [np.asarray(module(jnp.asarray(x)))]
    return Exported(
        model,
        {"x": x},
        expected,
        "jax2onnx",
        "jax",
        modules,
        opset,
        tags=["exporter-jax2onnx", *tags],
        notes=list(notes),
    )


class LayerNormMLP(nnx.Module):
    """Linear -> LayerNorm -> Linear -> LayerNorm -> Linear, with Flax's default variance
    E[x^2] - E[x]^2 (eps 1e-6 and 1e-5).

    Not here: use_fast_variance=False, which jax2onnx 0.17 writes with a constant-row guard
    (Where(min == max, 0, x - mean)) and the variance averaged in double; that form is
    not fused (see docs/passes.md)."""

    def __init__(self, rngs: nnx.Rngs):
        self.a = nnx.Linear(D, D, rngs=rngs)
        self.fast = nnx.LayerNorm(D, rngs=rngs)  # use_fast_variance=True, Flax's default
        self.b = nnx.Linear(D, D, rngs=rngs)
        self.second = nnx.LayerNorm(D, epsilon=1e-5, rngs=rngs)
        self.c = nnx.Linear(D, D, rngs=rngs)

    def __call__(self, x):
        return self.c(self.second(self.b(self.fast(self.a(x)))))


def _layernorm_mlp(opset: int, seed: int) -> Exported:
    module = LayerNormMLP(nnx.Rngs(seed))
    _randomize(module, seed)
    return _export(module, opset, {"LayerNorm": 2, "Linear": 3}, seed, tags=["flax-fast-variance"])


def flax_layernorm_op13(seed: int) -> Exported:
    return _layernorm_mlp(13, seed)


def flax_layernorm_op17(seed: int) -> Exported:
    return _layernorm_mlp(17, seed)


class GeluMLP(nnx.Module):
    """Linear -> gelu (tanh, jax's default) -> Linear -> gelu (exact, Erf) -> Linear."""

    def __init__(self, rngs: nnx.Rngs):
        self.a = nnx.Linear(D, 2 * D, rngs=rngs)
        self.b = nnx.Linear(2 * D, 2 * D, rngs=rngs)
        self.c = nnx.Linear(2 * D, D, rngs=rngs)

    def __call__(self, x):
        return self.c(jax.nn.gelu(self.b(jax.nn.gelu(self.a(x))), approximate=False))


def flax_gelu_op17(seed: int) -> Exported:
    module = GeluMLP(nnx.Rngs(seed))
    _randomize(module, seed)
    return _export(module, 17, {"GELU": 2, "Linear": 3}, seed, tags=["gelu-tanh-cube", "gelu-erf"])


class MixerBlock(nnx.Module):
    """MLP-Mixer block: token mixing then channel mixing, each LayerNorm -> MLP(gelu) + skip."""

    def __init__(self, tokens: int, channels: int, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(channels, rngs=rngs)
        self.token1 = nnx.Linear(tokens, 2 * tokens, rngs=rngs)
        self.token2 = nnx.Linear(2 * tokens, tokens, rngs=rngs)
        self.norm2 = nnx.LayerNorm(channels, rngs=rngs)
        self.channel1 = nnx.Linear(channels, 2 * channels, rngs=rngs)
        self.channel2 = nnx.Linear(2 * channels, channels, rngs=rngs)

    def __call__(self, x):
        h = jnp.swapaxes(self.norm1(x), 1, 2)
        x = x + jnp.swapaxes(self.token2(jax.nn.gelu(self.token1(h))), 1, 2)
        return x + self.channel2(jax.nn.gelu(self.channel1(self.norm2(x))))


class Mixer(nnx.Module):
    """Patch embedding (Conv, stride = patch), two Mixer blocks, LayerNorm, mean-pool head."""

    def __init__(self, rngs: nnx.Rngs):
        self.patch = nnx.Conv(3, D, kernel_size=(4, 4), strides=(4, 4), rngs=rngs)
        self.blocks = nnx.List([MixerBlock(16, D, rngs) for _ in range(2)])
        self.norm = nnx.LayerNorm(D, rngs=rngs)
        self.head = nnx.Linear(D, 10, rngs=rngs)

    def __call__(self, images):  # NHWC, as Flax convolves
        x = self.patch(images)
        x = x.reshape(x.shape[0], -1, x.shape[-1])
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(axis=1))


def flax_mixer_op17(seed: int) -> Exported:
    module = Mixer(nnx.Rngs(seed))
    _randomize(module, seed)
    return _export(
        module, 17, {"LayerNorm": 5, "GELU": 4, "Linear": 9, "Conv": 1}, seed, shape=(2, 16, 16, 3), tags=["mlp-mixer"]
    )
