"""GELU corpus: the exact (Erf) form, both tanh-approximation spellings and the Gelu op.

The tanh approximation reaches ONNX as x*x*x (TorchScript's nn.GELU('tanh'), hand code)
or Pow(x, 3) (GPT-2's NewGELUActivation, the dynamo exporter); a GELU fuser must
recognise both and must keep approximate="tanh" distinct from the exact form.
"""

from __future__ import annotations

import math

import torch
from corpus_lib import TORCHSCRIPT, Spec
from torch import nn

D = 32


class TanhGeluCube(nn.Module):
    corpus_kind = "GELU"

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)))


class TanhGeluPow(nn.Module):
    """transformers' NewGELUActivation, verbatim."""

    corpus_kind = "GELU"

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def _mlp(*acts: nn.Module) -> nn.Module:
    """Linear (act Linear)*: every activation sits between computed values."""
    layers: list[nn.Module] = [nn.Linear(D, 2 * D)]
    for i, act in enumerate(acts):
        layers += [act, nn.Linear(2 * D, 2 * D if i + 1 < len(acts) else D)]
    return nn.Sequential(*layers)


def _spec(module: nn.Module, opset: int, tags: list[str]) -> Spec:
    return Spec(
        module=module,
        args=(torch.randn(2, 5, D),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=opset,
        tags=["gelu", *tags],
    )


def gelu_erf_op17() -> Spec:
    return _spec(_mlp(nn.GELU()), 17, ["gelu-erf"])


def gelu_tanh_op17() -> Spec:
    return _spec(_mlp(nn.GELU(approximate="tanh")), 17, ["gelu-tanh", "gelu-tanh-cube"])


def gelu_tanh_cube_op17() -> Spec:
    return _spec(_mlp(TanhGeluCube()), 17, ["gelu-tanh", "gelu-tanh-cube", "hand-written"])


def gelu_tanh_pow_op17() -> Spec:
    return _spec(_mlp(TanhGeluPow()), 17, ["gelu-tanh", "gelu-tanh-pow", "hand-written"])


def gelu_op20() -> Spec:
    return _spec(_mlp(nn.GELU(), nn.GELU(approximate="tanh")), 20, ["gelu-op"])
