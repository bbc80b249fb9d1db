"""simplify and model-local functions, on torch exports with export_modules_as_functions:
a call is inlined only where that does not add nodes (or when asked, inline=always), so a
LayerNorm function below opset 17, which nothing can fuse, stays one call; at opset 17
fix-layernorm takes its body and fuses it. Every output passes onnx's full checker and
computes what torch computed."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
import torch
from torch import nn


class LocalLayerNorm(nn.Module):
    """A hand-written LayerNorm, exported as the function local::LocalLayerNorm."""

    __module__ = "local"

    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.2 * torch.randn(d))
        self.bias = nn.Parameter(0.2 * torch.randn(d))

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(-1, keepdim=True)
        return d / torch.sqrt(var + 1e-5) * self.weight + self.bias


class TwoNorms(nn.Module):
    def __init__(self, d: int = 16):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm1 = LocalLayerNorm(d)
        self.norm2 = LocalLayerNorm(d)

    def forward(self, x):
        return self.norm2(torch.relu(self.norm1(self.proj(x))))


def _export(opset: int):
    torch.manual_seed(0)
    module = TwoNorms().eval()
    x = torch.randn(2, 5, 16)
    buffer = io.BytesIO()
    torch.onnx.export(
        module,
        (x,),
        buffer,
        dynamo=False,
        opset_version=opset,
        input_names=["x"],
        output_names=["y"],
        export_modules_as_functions={LocalLayerNorm},
    )
    model = onnx.load_from_string(buffer.getvalue())
    assert [f.name for f in model.functions] == ["LocalLayerNorm"]
    with torch.no_grad():
        expected = module(x).numpy()
    return model, x.numpy(), expected


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _calls(model: onnx.ModelProto) -> int:
    return sum(n.op_type == "LocalLayerNorm" for n in model.graph.node)


@pytest.mark.parametrize("opset", [15, 16])
def test_simplify_keeps_a_function_nothing_fuses(opset):
    model, x, expected = _export(opset)
    simplified = osg.run(model, "simplify")
    onnx.checker.check_model(simplified, full_check=True)
    assert _calls(simplified) == 2 and [f.name for f in simplified.functions] == ["LocalLayerNorm"]
    assert len(simplified.graph.node) <= len(model.graph.node)
    np.testing.assert_allclose(_run(simplified, x), expected, rtol=1e-4, atol=1e-5)

    inlined = osg.run(model, "simplify(inline=always)")  # when asked
    onnx.checker.check_model(inlined, full_check=True)
    assert _calls(inlined) == 0 and not inlined.functions
    assert len(inlined.graph.node) > len(simplified.graph.node)
    np.testing.assert_allclose(_run(inlined, x), expected, rtol=1e-4, atol=1e-5)


def test_simplify_fuses_a_layernorm_function_at_17():
    model, x, expected = _export(17)
    simplified = osg.run(model, "simplify")
    onnx.checker.check_model(simplified, full_check=True)
    ops = [n.op_type for n in simplified.graph.node]
    assert ops.count("LayerNormalization") == 2 and _calls(simplified) == 0 and not simplified.functions, ops
    np.testing.assert_allclose(_run(simplified, x), expected, rtol=1e-4, atol=1e-5)
