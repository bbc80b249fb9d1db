"""TensorFlow/Keras models exported by tf2onnx (run in the `tf` exporter venv).

tf2onnx writes LayerNorm the way TensorFlow computes it: tf.nn.moments (mean, then
SquaredDifference -> Mul(d, d) averaged; reduce_mean over the last axis of a rank-3
tensor becomes GlobalAveragePool), Rsqrt -> Reciprocal(Sqrt), and Keras folds the scale
into the reciprocal: y = x * inv + (beta - mean * inv) or x * inv + (-mean * inv + beta).
GELU: tf.nn.gelu(approximate=True) is the tanh form with Pow(x, 3).
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf
import tf2onnx
from exporter_lib import Exported

D = 32
SHAPE = (2, 5, D)


def _export(
    fn, inputs: dict[str, np.ndarray], opset: int, modules: dict[str, int], tags=(), notes=(), dynamic_batch=False
) -> Exported:
    # dynamic_batch: the first dim left open, as a served model is exported; tf2onnx then
    # names the batch of values it computes from Shape(x)[0] with symbols of their own.
    signature = tuple(
        tf.TensorSpec((None, *v.shape[1:]) if dynamic_batch else v.shape, tf.as_dtype(v.dtype), name=k)
        for k, v in inputs.items()
    )
    function = tf.function(fn, input_signature=signature)
    model, _ = tf2onnx.convert.from_function(function, input_signature=signature, opset=opset)
    expected = function(*[tf.constant(v) for v in inputs.values()])
    expected = [np.asarray(t) for t in (expected if isinstance(expected, (list, tuple)) else [expected])]
    # tf2onnx names inputs after the signature ("x:0" becomes "x") and outputs "Identity:0".
    return Exported(
        model,
        dict(inputs),
        expected,
        "tf2onnx",
        "tensorflow",
        modules,
        opset,
        tags=["exporter-tf2onnx", *tags],
        notes=list(notes),
    )


def _x(seed: int) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal(SHAPE).astype(np.float32)}


def _randomize(layer, seed: int) -> None:
    """Random O(1) weights: LayerNorm gamma 1 + 0.2 N(0,1), vectors 0.2 N(0,1), matrices
    N(0, 1/fan_in), so a fuser that drops the affine part fails equivalence."""
    rng = np.random.default_rng(seed + 1)
    for w in layer.weights:
        shape = tuple(w.shape)
        if "gamma" in w.name:
            value = 1.0 + 0.2 * rng.standard_normal(shape)
        elif len(shape) <= 1:
            value = 0.2 * rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) / math.sqrt(max(1, shape[0]))
        w.assign(value.astype(np.float32))


def _dense_ln_dense(norm, seed: int):
    keras = tf.keras
    model = keras.Sequential([keras.Input(SHAPE[1:]), keras.layers.Dense(D), norm, keras.layers.Dense(D)])
    _randomize(model, seed)
    return model


# ---- keras.layers.LayerNormalization


def keras_layernorm(opset: int, seed: int) -> Exported:
    model = _dense_ln_dense(tf.keras.layers.LayerNormalization(epsilon=1e-3), seed)
    return _export(lambda x: model(x), _x(seed), opset, {"LayerNorm": 1, "Linear": 2}, tags=["keras"])


def keras_layernorm_op13(seed: int) -> Exported:
    return keras_layernorm(13, seed)


def keras_layernorm_op15(seed: int) -> Exported:
    return keras_layernorm(15, seed)


def keras_layernorm_op17(seed: int) -> Exported:
    return keras_layernorm(17, seed)


def keras_layernorm_dynbatch_op13(seed: int) -> Exported:
    model = _dense_ln_dense(tf.keras.layers.LayerNormalization(epsilon=1e-3), seed)
    return _export(
        lambda x: model(x),
        _x(seed),
        13,
        {"LayerNorm": 1, "Linear": 2},
        tags=["keras", "dynamic-batch"],
        dynamic_batch=True,
    )


# ---- tf.nn.moments, hand-written


class MomentsLayerNorm(tf.Module):
    """(x - mean) * rsqrt(var + eps) * gamma + beta with tf.nn.moments."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed + 2)
        self.gamma = tf.Variable((1.0 + 0.2 * rng.standard_normal(D)).astype(np.float32))
        self.beta = tf.Variable((0.2 * rng.standard_normal(D)).astype(np.float32))

    def __call__(self, x):
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return (x - mean) * tf.math.rsqrt(var + 1e-5) * self.gamma + self.beta


class BatchNormStyleLayerNorm(MomentsLayerNorm):
    """tf.nn.batch_normalization over the moments of the last axis (Keras' fused=False
    path): y = x * inv + (beta - mean * inv), inv = rsqrt(var + eps) * gamma."""

    def __call__(self, x):
        mean, var = tf.nn.moments(x, axes=[-1], keepdims=True)
        return tf.nn.batch_normalization(x, mean, var, self.beta, self.gamma, 1e-5)


def moments_layernorm(opset: int, seed: int, dynamic_batch: bool = False) -> Exported:
    dense_in = tf.keras.layers.Dense(D)
    dense_out = tf.keras.layers.Dense(D)
    dense_in.build((None, *SHAPE[1:]))
    dense_out.build((None, *SHAPE[1:]))
    _randomize(dense_in, seed)
    _randomize(dense_out, seed + 7)
    norm_a, norm_b = MomentsLayerNorm(seed), BatchNormStyleLayerNorm(seed + 3)
    fn = lambda x: dense_out(norm_b(norm_a(dense_in(x))))  # noqa: E731
    tags = ["tf-moments", "dynamic-batch"] if dynamic_batch else ["tf-moments"]
    return _export(fn, _x(seed), opset, {"LayerNorm": 2, "Linear": 2}, tags=tags, dynamic_batch=dynamic_batch)


def moments_layernorm_op13(seed: int) -> Exported:
    return moments_layernorm(13, seed)


def moments_layernorm_op15(seed: int) -> Exported:
    return moments_layernorm(15, seed)


def moments_layernorm_op17(seed: int) -> Exported:
    return moments_layernorm(17, seed)


def moments_layernorm_dynbatch_op13(seed: int) -> Exported:
    return moments_layernorm(13, seed, dynamic_batch=True)


# ---- Dense + GELU


def erf_gelu(x):
    """The exact GELU as TF BERT code wrote it (tf.nn.gelu(approximate=False) exports an
    Erfc that tf2onnx 1.17 cannot convert; see the manifest notes)."""
    return 0.5 * x * (1.0 + tf.math.erf(x / math.sqrt(2.0)))


def dense_gelu(opset: int, seed: int) -> Exported:
    layers = [tf.keras.layers.Dense(2 * D), tf.keras.layers.Dense(2 * D), tf.keras.layers.Dense(D)]
    for i, layer in enumerate(layers):
        layer.build((None, *SHAPE[1:-1], D if i == 0 else 2 * D))
        _randomize(layer, seed + i)
    fn = lambda x: layers[2](erf_gelu(layers[1](tf.nn.gelu(layers[0](x), approximate=True))))  # noqa: E731
    return _export(
        fn,
        _x(seed),
        opset,
        {"GELU": 2, "Linear": 3},
        tags=["gelu-tanh-pow"],
        notes=[
            "tf.nn.gelu(approximate=False) is not exportable with tf2onnx 1.17 "
            "('Tensorflow op [Gelu/Erfc: Erfc] is not supported'): the exact GELU is written "
            "with tf.math.erf as TF BERT code does"
        ],
    )


def dense_gelu_op13(seed: int) -> Exported:
    return dense_gelu(13, seed)


def dense_gelu_op15(seed: int) -> Exported:
    return dense_gelu(15, seed)


def dense_gelu_op17(seed: int) -> Exported:
    return dense_gelu(17, seed)


# ---- a Keras ViT encoder block


def vit_block(opset: int, seed: int, dynamic_batch: bool = False) -> Exported:
    keras = tf.keras
    x = keras.Input(SHAPE[1:])
    h = keras.layers.LayerNormalization(epsilon=1e-6)(x)
    h = keras.layers.MultiHeadAttention(num_heads=4, key_dim=D // 4)(h, h)
    x1 = keras.layers.Add()([x, h])
    h = keras.layers.LayerNormalization(epsilon=1e-6)(x1)
    h = keras.layers.Dense(2 * D, activation=lambda t: tf.nn.gelu(t, approximate=True))(h)
    h = keras.layers.Dense(D)(h)
    model = keras.Model(x, keras.layers.Add()([x1, h]))
    _randomize(model, seed)
    tags = ["keras", "attention", *(["dynamic-batch"] if dynamic_batch else [])]
    return _export(
        lambda t: model(t),
        _x(seed),
        opset,
        {"LayerNorm": 2, "GELU": 1, "Linear": 6},
        tags=tags,
        dynamic_batch=dynamic_batch,
    )


def vit_block_op13(seed: int) -> Exported:
    return vit_block(13, seed)


def vit_block_dynbatch_op13(seed: int) -> Exported:
    return vit_block(13, seed, dynamic_batch=True)


def vit_block_op15(seed: int) -> Exported:
    return vit_block(15, seed)


def vit_block_op17(seed: int) -> Exported:
    return vit_block(17, seed)


class _CustomCell:
    """A cell tf1's dynamic_rnn takes (it checks the RNNCell interface, not the class) and
    tf2onnx knows no fused op for, so it writes the while loop as a Scan (its custom-RNN
    rewriter): h' = tanh(x W + h U + b) * 0.9 + h * 0.1."""

    def __init__(self, n_in: int, n: int, seed: int):
        rng = np.random.default_rng(seed)
        self.n = n
        self.w = tf.constant((rng.standard_normal((n_in, n)) * 0.5).astype(np.float32))
        self.u = tf.constant((rng.standard_normal((n, n)) * 0.5).astype(np.float32))
        self.b = tf.constant((rng.standard_normal((n,)) * 0.1).astype(np.float32))

    @property
    def state_size(self):
        return self.n

    @property
    def output_size(self):
        return self.n

    def zero_state(self, batch, dtype):
        return tf.zeros([batch, self.n], dtype)

    def get_initial_state(self, inputs=None, batch_size=None, dtype=None):
        return tf.zeros([batch_size, self.n], dtype)

    def __call__(self, x, h, scope=None):
        h2 = tf.tanh(tf.matmul(x, self.w) + tf.matmul(h, self.u) + self.b) * 0.9 + h * 0.1
        return h2, h2


def _custom_rnn(opset: int, seed: int, shape=(1, 5, 3), time_major=False, bidirectional=False) -> Exported:
    """tf1's dynamic_rnn over a custom cell, built as a tf1 graph with tf1 control flow (the
    form tf2onnx turns into Scan; tf2's functional While becomes a Loop)."""
    feed = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    tf.compat.v1.disable_control_flow_v2()
    try:
        g = tf.Graph()
        with g.as_default():
            x = tf.compat.v1.placeholder(tf.float32, shape, name="x")
            if bidirectional:
                (fw, bw), (sf, sb) = tf.compat.v1.nn.bidirectional_dynamic_rnn(
                    _CustomCell(shape[-1], 4, seed), _CustomCell(shape[-1], 4, seed + 1), x, dtype=tf.float32
                )
                outs = [fw, bw, sf, sb]
            else:
                y, state = tf.compat.v1.nn.dynamic_rnn(
                    _CustomCell(shape[-1], 4, seed), x, dtype=tf.float32, time_major=time_major
                )
                outs = [y, state]
            outs = [tf.identity(o, name=f"out{i}") for i, o in enumerate(outs)]
            with tf.compat.v1.Session(graph=g) as sess:
                expected = sess.run(outs, {x: feed})
            model, _ = tf2onnx.convert.from_graph_def(
                g.as_graph_def(), input_names=["x:0"], output_names=[o.name for o in outs], opset=opset
            )
    finally:
        tf.compat.v1.enable_control_flow_v2()
    return Exported(
        model,
        {"x:0": feed},
        [np.asarray(e) for e in expected],
        "tf2onnx",
        "tensorflow",
        {"LayerNorm": 0},
        opset,
        tags=["exporter-tf2onnx", "scan"],
    )


def custom_rnn_op8(seed: int) -> Exported:
    return _custom_rnn(8, seed)


def custom_rnn_b2_op8(seed: int) -> Exported:
    return _custom_rnn(8, seed, shape=(2, 5, 3))


def custom_rnn_op9(seed: int) -> Exported:
    return _custom_rnn(9, seed)


def custom_rnn_op13(seed: int) -> Exported:
    return _custom_rnn(13, seed)


def custom_rnn_timemajor_op13(seed: int) -> Exported:
    return _custom_rnn(13, seed, shape=(5, 2, 3), time_major=True)


def custom_birnn_op13(seed: int) -> Exported:
    return _custom_rnn(13, seed, bidirectional=True)
