"""PaddlePaddle models exported by paddle2onnx (run in the `paddle` exporter venv).

paddle2onnx writes layer_norm as LayerNormalization from opset 17 and decomposes it
below (ReduceMean, Sub, Pow(d, 2), ReduceMean, Add, Sqrt, Div, then Mul/Add by the
scale and bias), with Identity nodes around it; hardswish is HardSwish from opset 14
and HardSigmoid * x below it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import onnx
import paddle
from exporter_lib import Exported

D = 32


def _randomize(layer: paddle.nn.Layer, seed: int) -> None:
    """Random O(1) parameters (norm weights 1 + 0.2 N(0,1), vectors 0.2 N(0,1), matrices
    N(0, 1/fan_in)) and BatchNorm statistics, so a wrong rewrite shows in the outputs."""
    rng = np.random.default_rng(seed + 1)
    for sub in layer.sublayers(include_self=True):
        is_norm = "Norm" in type(sub).__name__
        for name, param in sub.named_parameters(include_sublayers=False):
            shape = tuple(param.shape)
            if is_norm and name == "weight":
                value = 1.0 + 0.2 * rng.standard_normal(shape)
            elif len(shape) <= 1:
                value = 0.2 * rng.standard_normal(shape)
            else:
                fan_in = int(np.prod(shape[1:])) if len(shape) > 2 else shape[0]
                value = rng.standard_normal(shape) / np.sqrt(max(1, fan_in))
            param.set_value(value.astype(np.float32))
        if isinstance(sub, paddle.nn.BatchNorm2D):
            sub._mean.set_value((0.2 * rng.standard_normal(sub._mean.shape)).astype(np.float32))
            sub._variance.set_value((0.5 + rng.random(sub._variance.shape)).astype(np.float32))


def _export(
    layer: paddle.nn.Layer, shape: list[int], opset: int, modules: dict[str, int], seed: int, tags=()
) -> Exported:
    layer.eval()
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    expected = [layer(paddle.to_tensor(x)).numpy()]
    with tempfile.TemporaryDirectory() as tmp:
        prefix = os.path.join(tmp, "model")
        spec = [paddle.static.InputSpec(shape, "float32", "x")]
        paddle.onnx.export(layer, prefix, input_spec=spec, opset_version=opset)
        model = onnx.load(Path(prefix + ".onnx"))
    return Exported(
        model, {"x": x}, expected, "paddle2onnx", "paddlepaddle", modules, opset, tags=["exporter-paddle2onnx", *tags]
    )


class LayerNormBlock(paddle.nn.Layer):
    """Linear -> LayerNorm -> Linear -> GELU -> Linear, a transformer MLP's shape."""

    def __init__(self):
        super().__init__()
        self.proj_in = paddle.nn.Linear(D, D)
        self.norm = paddle.nn.LayerNorm(D)
        self.fc1 = paddle.nn.Linear(D, 2 * D)
        self.act = paddle.nn.GELU()
        self.fc2 = paddle.nn.Linear(2 * D, D)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(self.norm(self.proj_in(x)))))


def _layernorm_block(opset: int, seed: int) -> Exported:
    paddle.seed(seed)
    layer = LayerNormBlock()
    _randomize(layer, seed)
    return _export(layer, [2, 5, D], opset, {"LayerNorm": 1, "GELU": 1, "Linear": 3}, seed)


def paddle_layernorm_op11(seed: int) -> Exported:
    return _layernorm_block(11, seed)


def paddle_layernorm_op17(seed: int) -> Exported:
    return _layernorm_block(17, seed)


class ConvBNLayer(paddle.nn.Layer):
    def __init__(self, cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1, act: bool = True):
        super().__init__()
        self.conv = paddle.nn.Conv2D(
            cin, cout, kernel, stride=stride, padding=(kernel - 1) // 2, groups=groups, bias_attr=False
        )
        self.bn = paddle.nn.BatchNorm2D(cout)
        self.act = paddle.nn.Hardswish() if act else None

    def forward(self, x):
        x = self.bn(self.conv(x))
        return self.act(x) if self.act else x


class SEModule(paddle.nn.Layer):
    def __init__(self, channels: int):
        super().__init__()
        self.pool = paddle.nn.AdaptiveAvgPool2D(1)
        self.reduce = paddle.nn.Conv2D(channels, channels // 4, 1)
        self.expand = paddle.nn.Conv2D(channels // 4, channels, 1)

    def forward(self, x):
        s = paddle.nn.functional.relu(self.reduce(self.pool(x)))
        return x * paddle.nn.functional.hardsigmoid(self.expand(s))


class DepthwiseSeparable(paddle.nn.Layer):
    def __init__(self, cin: int, cout: int, stride: int, se: bool):
        super().__init__()
        self.dw = ConvBNLayer(cin, cin, 3, stride=stride, groups=cin)
        self.se = SEModule(cin) if se else None
        self.pw = ConvBNLayer(cin, cout, 1)

    def forward(self, x):
        x = self.dw(x)
        if self.se:
            x = self.se(x)
        return self.pw(x)


class PPLCNetLike(paddle.nn.Layer):
    """PP-LCNet's layout at toy width: stem ConvBN-hardswish, depthwise-separable blocks
    (the last with squeeze-excitation), global pool, 1x1 conv head + hardswish, FC."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = ConvBNLayer(3, 8, 3, stride=2)
        self.blocks = paddle.nn.Sequential(
            DepthwiseSeparable(8, 16, 1, False),
            DepthwiseSeparable(16, 32, 2, False),
            DepthwiseSeparable(32, 32, 1, True),
        )
        self.pool = paddle.nn.AdaptiveAvgPool2D(1)
        self.last_conv = paddle.nn.Conv2D(32, 64, 1)
        self.act = paddle.nn.Hardswish()
        self.fc = paddle.nn.Linear(64, classes)

    def forward(self, x):
        x = self.pool(self.blocks(self.stem(x)))
        x = self.act(self.last_conv(x))
        return self.fc(paddle.flatten(x, 1))


def _lcnet(opset: int, seed: int) -> Exported:
    paddle.seed(seed)
    layer = PPLCNetLike()
    _randomize(layer, seed)
    return _export(
        layer,
        [2, 3, 32, 32],
        opset,
        {"Hardswish": 8, "Conv": 10, "BatchNorm": 7, "Linear": 1},
        seed,
        tags=["cnn", "hardswish"],
    )


def paddle_lcnet_op11(seed: int) -> Exported:
    return _lcnet(11, seed)


def paddle_lcnet_op17(seed: int) -> Exported:
    return _lcnet(17, seed)
