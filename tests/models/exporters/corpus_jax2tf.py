"""Flax (linen) models exported by jax2tf + tf2onnx (run in the `jax2tf` exporter venv).

jax2tf with native_serialization=False writes plain TensorFlow ops, which tf2onnx turns
into: each mean as ReduceSum(keepdims=0) * (1/N) (jnp.mean's division by the constant N,
folded to a reciprocal), Flax's fast variance max(0, E[x^2] - E[x]^2), both put back with
Reshape + Expand (BroadcastTo) to [.., 1], Reciprocal(Sqrt(var + eps)) multiplied by the
scale first, then (x - mean) times it plus the bias. jax after 0.4.x only exports through
XlaCallModule (StableHLO), which tf2onnx cannot convert: requirements-jax2tf.txt pins the
last jax with the plain-ops path.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import tensorflow as tf
import tf2onnx
from exporter_lib import Exported
from flax import linen as nn
from jax.experimental import jax2tf

D = 32
SHAPE = (2, 5, D)


class LayerNormMLP(nn.Module):
    """Dense -> LayerNorm -> Dense -> LayerNorm(eps 1e-5) -> Dense; Flax's default variance."""

    @nn.compact
    def __call__(self, x):
        x = nn.LayerNorm()(nn.Dense(D)(x))
        x = nn.LayerNorm(epsilon=1e-5)(nn.Dense(D)(x))
        return nn.Dense(D)(x)


def _randomize(params, seed: int):
    """Random O(1) parameters: LayerNorm scale 1 + 0.2 N(0,1), biases 0.2 N(0,1), kernels N(0, 1/fan_in)."""
    rng = np.random.default_rng(seed + 1)

    def one(path, value):
        name = path[-1].key
        if name == "scale":
            new = 1.0 + 0.2 * rng.standard_normal(value.shape)
        elif value.ndim <= 1:
            new = 0.2 * rng.standard_normal(value.shape)
        else:
            new = rng.standard_normal(value.shape) / np.sqrt(value.shape[0])
        return jnp.asarray(new, value.dtype)

    return jax.tree_util.tree_map_with_path(one, params)


def _layernorm_mlp(opset: int, seed: int, dynamic_batch: bool = False) -> Exported:
    module = LayerNormMLP()
    x = np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)
    params = _randomize(module.init(jax.random.PRNGKey(seed), x), seed)
    # dynamic_batch: a polymorphic batch, as a served model is exported; tf2onnx names the
    # batch of each BroadcastTo target it computes from Shape(x)[0] with a symbol of its own.
    polymorphic = {"polymorphic_shapes": [f"(b, {SHAPE[1]}, {SHAPE[2]})"]} if dynamic_batch else {}
    apply = jax2tf.convert(
        lambda v: module.apply(params, v), native_serialization=False, enable_xla=False, **polymorphic
    )
    signature = [tf.TensorSpec((None, *SHAPE[1:]) if dynamic_batch else SHAPE, tf.float32, name="x")]
    function = tf.function(apply, input_signature=signature, autograph=False)
    model, _ = tf2onnx.convert.from_function(function, input_signature=signature, opset=opset)
    notes = []
    if dynamic_batch:
        # Saved through onnx's shape inference (no data propagation), as onnxsim and many
        # pipelines do: value_info then names each batch it cannot relate afresh (unk__13
        # for what the input calls unk__106).
        import onnx

        model = onnx.shape_inference.infer_shapes(model)
        notes.append("saved through onnx.shape_inference.infer_shapes: fresh dim names in value_info")
    expected = [np.asarray(module.apply(params, jnp.asarray(x)))]
    return Exported(
        model,
        {model.graph.input[0].name: x},
        expected,
        "tf2onnx",
        "jax",
        {"LayerNorm": 2, "Linear": 3},
        opset,
        tags=["exporter-jax2tf", "flax-fast-variance", "layernorm-reduce-sum", *(["dynamic-batch"] * dynamic_batch)],
        notes=notes,
    )


def flax_jax2tf_layernorm_op13(seed: int) -> Exported:
    return _layernorm_mlp(13, seed)


def flax_jax2tf_layernorm_op17(seed: int) -> Exported:
    return _layernorm_mlp(17, seed)


def flax_jax2tf_layernorm_dynbatch_op17(seed: int) -> Exported:
    return _layernorm_mlp(17, seed, dynamic_batch=True)
