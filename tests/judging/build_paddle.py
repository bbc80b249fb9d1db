"""Judging-corpus models from the paddle venv (paddle2onnx): paddle.vision architectures and
a PP-OCR-style recognizer at batch 1, random weights. Expected outputs: paddle itself."""

from __future__ import annotations

import paddle
from corpus_paddle import _export, _randomize


def _model(layer, shape, opset, tags, seed):
    _randomize(layer, seed)
    exported = _export(layer, shape, opset, {}, seed, tags=["batch1", *tags])
    exported.rtol, exported.atol = 1e-3, 1e-4
    return exported


def paddle_mobilenetv3_b1(seed: int):
    paddle.seed(seed % 10000)
    return _model(paddle.vision.models.mobilenet_v3_small(scale=0.5, num_classes=10), [1, 3, 64, 64], 13, ["cnn"], seed)


def paddle_shufflenetv2_b1(seed: int):
    paddle.seed(seed % 10000)
    return _model(paddle.vision.models.shufflenet_v2_x0_25(num_classes=10), [1, 3, 64, 64], 11, ["cnn"], seed)


class _SVTRLikeRec(paddle.nn.Layer):
    """PP-OCR mobile recognizer's shape: conv stack with hardswish, height pooled away,
    squeeze to a sequence, BiLSTM, Linear, softmax (CTC)."""

    def __init__(self, classes: int = 40):
        super().__init__()
        conv = paddle.nn.Conv2D
        self.body = paddle.nn.Sequential(
            conv(3, 16, 3, 2, 1),
            paddle.nn.BatchNorm2D(16),
            paddle.nn.Hardswish(),
            conv(16, 32, 3, (2, 1), 1),
            paddle.nn.BatchNorm2D(32),
            paddle.nn.Hardswish(),
            conv(32, 32, 3, (2, 1), 1),
            paddle.nn.BatchNorm2D(32),
            paddle.nn.Hardswish(),
            paddle.nn.AdaptiveAvgPool2D((1, None)),
        )
        self.rnn = paddle.nn.LSTM(32, 24, direction="bidirect")
        self.fc = paddle.nn.Linear(48, classes)

    def forward(self, x):
        f = self.body(x).squeeze(2).transpose([0, 2, 1])
        y, _ = self.rnn(f)
        return paddle.nn.functional.softmax(self.fc(y), axis=-1)


def paddle_ocr_rec_b1(seed: int):
    paddle.seed(seed % 10000)
    return _model(_SVTRLikeRec(), [1, 3, 32, 96], 11, ["ocr"], seed)
