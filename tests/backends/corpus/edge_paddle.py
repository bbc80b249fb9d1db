"""A batch-1 PP-OCR-style text recognizer through paddle2onnx (run by
tests/models/exporters/run.py in the `paddle` exporter venv): conv backbone that pools the
height away, a BiLSTM over the width, a CTC softmax head, static shape 1x3x32x96."""

from __future__ import annotations

import paddle
from corpus_paddle import _export, _randomize
from exporter_lib import Exported


class Recognizer(paddle.nn.Layer):
    def __init__(self, lstm: bool):
        super().__init__()

        def cbh(a, b, stride):
            return [paddle.nn.Conv2D(a, b, 3, stride, 1), paddle.nn.BatchNorm2D(b), paddle.nn.Hardswish()]

        self.backbone = paddle.nn.Sequential(*cbh(3, 16, 2), *cbh(16, 32, (2, 1)), *cbh(32, 32, (2, 1)))
        self.pool = paddle.nn.AdaptiveAvgPool2D((1, None))
        self.lstm = paddle.nn.LSTM(32, 16, direction="bidirect") if lstm else None
        self.head = paddle.nn.Linear(32, 20)

    def forward(self, x):
        f = self.pool(self.backbone(x)).squeeze(2).transpose([0, 2, 1])  # (1, W/2, 32)
        if self.lstm is not None:
            f = self.lstm(f)[0]
        return paddle.nn.functional.softmax(self.head(f), axis=-1)


def _recognizer(lstm: bool, opset: int, seed: int) -> Exported:
    paddle.seed(seed)
    layer = Recognizer(lstm)
    _randomize(layer, seed)
    return _export(layer, [1, 3, 32, 96], opset, {}, seed, tags=["ocr", "batch1"])


def paddle_ocr_rec_op11(seed: int) -> Exported:
    return _recognizer(False, 11, seed)


def paddle_ocr_rec_lstm_op14(seed: int) -> Exported:
    return _recognizer(True, 14, seed)
