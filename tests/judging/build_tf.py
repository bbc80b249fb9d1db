"""Judging-corpus models from the tf venv (tf2onnx): Keras edge models at batch 1, static
shapes, random weights (weights=None), as users convert them with tf2onnx. Expected
outputs: the Keras model itself."""

from __future__ import annotations

import numpy as np
import tensorflow as tf
from corpus_tf import _export


def _keras(model, shape, opset, tags, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)
    exported = _export(lambda x: model(x, training=False), {"x": x}, opset, {}, tags=["batch1", *tags])
    exported.rtol, exported.atol = 1e-3, 1e-4
    return exported


def tf_mobilenetv2_b1(seed: int):
    tf.keras.utils.set_random_seed(seed % 10000)
    model = tf.keras.applications.MobileNetV2(input_shape=(96, 96, 3), alpha=0.35, weights=None, classes=10)
    return _keras(model, (1, 96, 96, 3), 13, ["cnn"], seed)


def tf_mobilenetv3_b1(seed: int):
    """MobileNetV3Small (hard-swish, SE). EfficientNetB0 is not here: tf2onnx turns its
    Normalization layer's variables into extra graph inputs."""
    tf.keras.utils.set_random_seed(seed % 10000)
    model = tf.keras.applications.MobileNetV3Small(
        input_shape=(64, 64, 3), alpha=0.75, weights=None, classes=10, include_preprocessing=False
    )
    return _keras(model, (1, 64, 64, 3), 15, ["cnn"], seed)


def tf_crnn_b1(seed: int):
    """Keras OCR recognizer: conv stack, height collapsed by Reshape, bidirectional LSTM,
    softmax over characters (NHWC, as Keras OCR tutorials build it)."""
    tf.keras.utils.set_random_seed(seed % 10000)
    layers = tf.keras.layers
    inputs = tf.keras.Input((32, 100, 1), batch_size=1)
    x = layers.Conv2D(16, 3, padding="same", activation="relu")(inputs)
    x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(32, 3, padding="same", activation="relu")(x)
    x = layers.MaxPooling2D((2, 1))(x)
    x = layers.Permute((2, 1, 3))(x)
    x = layers.Reshape((50, 8 * 32))(x)
    x = layers.Bidirectional(layers.LSTM(24, return_sequences=True))(x)
    outputs = layers.Dense(37, activation="softmax")(x)
    return _keras(tf.keras.Model(inputs, outputs), (1, 32, 100, 1), 13, ["ocr"], seed)
