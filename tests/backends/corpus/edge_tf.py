"""Batch-1 Keras models through tf2onnx (run by tests/models/exporters/run.py in the `tf`
exporter venv): a MobileNet-style CNN and an LSTM sequence classifier, static shapes."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from corpus_tf import _export, _randomize
from exporter_lib import Exported


def _input(seed: int, shape) -> dict[str, np.ndarray]:
    return {"x": np.random.default_rng(seed).standard_normal(shape).astype(np.float32)}


def _positive_variances(model, seed: int) -> None:
    """BatchNormalization statistics a trained model has: _randomize gives every vector
    0.2 N(0,1), and a negative moving variance makes the outputs NaN."""
    rng = np.random.default_rng(seed + 2)
    for w in model.weights:
        if "moving_variance" in w.name:
            w.assign((0.5 + rng.random(tuple(w.shape))).astype(np.float32))


def keras_cnn_op13(seed: int) -> Exported:
    """NHWC MobileNet-style: Conv/BN/ReLU6 stem, depthwise-separable blocks, GAP, softmax."""
    k = tf.keras
    layers = [k.Input((32, 32, 3)), k.layers.Conv2D(16, 3, 2, padding="same"), k.layers.BatchNormalization()]
    layers.append(k.layers.ReLU(6.0))
    for filters, stride in ((24, 1), (32, 2)):
        layers += [k.layers.DepthwiseConv2D(3, stride, padding="same"), k.layers.BatchNormalization()]
        layers += [k.layers.ReLU(6.0), k.layers.Conv2D(filters, 1), k.layers.BatchNormalization(), k.layers.ReLU(6.0)]
    layers += [k.layers.GlobalAveragePooling2D(), k.layers.Dense(10), k.layers.Softmax()]
    model = k.Sequential(layers)
    _randomize(model, seed)
    _positive_variances(model, seed)
    return _export(lambda x: model(x, training=False), _input(seed, (1, 32, 32, 3)), 13, {}, tags=["keras", "batch1"])


def keras_lstm_op13(seed: int) -> Exported:
    """Conv1D features, an LSTM over 20 steps, a Dense classifier on the last state."""
    k = tf.keras
    model = k.Sequential(
        [
            k.Input((20, 8)),
            k.layers.Conv1D(16, 3, padding="same", activation="relu"),
            k.layers.LSTM(16),
            k.layers.Dense(4),
        ]
    )
    _randomize(model, seed)
    return _export(lambda x: model(x, training=False), _input(seed, (1, 20, 8)), 13, {}, tags=["keras", "batch1"])
