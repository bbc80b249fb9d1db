"""Structural corpus: ScatterND from index_put, shape-computation clutter, control flow,
a StyleTTS/Kokoro-like audio block, and the large benchmark model."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from corpus_lib import DYNAMO, TORCHSCRIPT, Spec
from torch import nn

# ------------------------------------------------------------------------ index_put


class IndexPut(nn.Module):
    """x[rows] = v (ScatterND) then index_put(accumulate=True) (ScatterND reduction=add
    with the dynamo exporter; ConstantOfShape + ScatterND + Add with TorchScript).

    The assignment rows are a buffer, so they are unique; the accumulate indices are a
    graph input."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.register_buffer("rows", torch.tensor([0, 2, 5]))

    def forward(self, x, v, acc_idx, acc_v):
        h = self.proj(x)
        h[self.rows] = v
        return h.index_put((acc_idx,), acc_v, accumulate=True)


def _index_put(exporter: str, opset: int, acc_idx: list[int], notes: list[str]) -> Spec:
    return Spec(
        module=IndexPut(),
        args=(torch.randn(6, 8), torch.randn(3, 8), torch.tensor(acc_idx), torch.randn(3, 8)),
        input_names=["x", "v", "acc_idx", "acc_v"],
        output_names=["y"],
        exporter=exporter,
        opset=opset,
        tags=["index-put"],
        notes=notes,
    )


def index_put_op16() -> Spec:
    return _index_put(
        TORCHSCRIPT,
        16,
        [1, 3, 4],
        [
            "TorchScript exports accumulate=True as ScatterND into zeros + Add, which does not sum "
            "repeated indices (exporter bug: with acc_idx=[1,3,3] ONNX and torch disagree); the "
            "example indices are therefore unique"
        ],
    )


def index_put_dynamo18() -> Spec:
    return _index_put(DYNAMO, 18, [1, 3, 3], ["repeated accumulate index: ScatterND(reduction='add') must sum both"])


# ---------------------------------------------------------------------- CNN clutter


class ClutterCNN(nn.Module):
    """A CNN written the careless way real code is: dtype no-ops (.float(), .to(),
    type_as) become Casts, x.view(x.size(0), -1) becomes Shape->Gather->Unsqueeze->
    Concat->Reshape under a dynamic batch, and returning one tensor twice makes the
    exporter emit an Identity for the second graph output."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
        self.dropout = nn.Dropout(0.1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv1(x))))
        h = self.conv2(h).float()
        h = h.view(h.size(0), -1)
        h = self.dropout(h.to(torch.float32))
        logits = self.fc(h).type_as(x)
        return logits, logits


def cnn_clutter_op13() -> Spec:
    return Spec(
        module=ClutterCNN(),
        args=(torch.randn(2, 3, 8, 8),),
        input_names=["image"],
        output_names=["logits", "logits_copy"],
        exporter=TORCHSCRIPT,
        opset=13,
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}, "logits_copy": {0: "batch"}},
        export_kwargs={"do_constant_folding": False},
        tags=["shape-chain", "cnn", "duplicated-output"],
        notes=["do_constant_folding=False keeps the exporter's shape arithmetic unfolded"],
    )


# --------------------------------------------------------------------- control flow


class ScriptLayerNorm(nn.Module):
    corpus_kind = "LayerNorm"

    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(-1, keepdim=True)
        return d / torch.sqrt(var + self.eps) * self.weight + self.bias


class ScriptedControlFlow(nn.Module):
    """Data-dependent If and a Loop whose trip count is a graph input; the decomposed
    LayerNorm lives inside the Loop body, so passes must descend into subgraphs."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm = ScriptLayerNorm(d)

    def forward(self, x, steps: int):
        h = self.proj(x)
        if bool(h.mean() > 0):
            h = h * 2.0
        else:
            h = h - 1.0
        for _ in range(steps):
            h = self.norm(torch.tanh(h) + x)
        return h


def control_flow_op17() -> Spec:
    eager = ScriptedControlFlow()
    return Spec(
        module=torch.jit.script(eager),
        count_from=eager,
        args=(torch.randn(2, 16), 3),
        input_names=["x", "steps"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["layernorm", "layernorm-decomposed", "control-flow", "scripted"],
    )


class CondModel(nn.Module):
    """torch.cond: a GELU in one branch, a LayerNorm in the other."""

    def __init__(self, d: int = 16):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)
        self.act = nn.GELU()
        self.out = nn.Linear(d, d)

    def forward(self, x):
        h = self.proj(x)

        def positive(t):
            return self.act(t)

        def negative(t):
            return self.norm(t)

        return self.out(torch.cond(h.sum() > 0, positive, negative, (h,)))


def control_flow_cond_dynamo18() -> Spec:
    return Spec(
        module=CondModel(),
        args=(torch.randn(2, 16),),
        input_names=["x"],
        output_names=["y"],
        exporter=DYNAMO,
        opset=18,
        tags=["layernorm", "gelu-erf", "control-flow"],
    )


# ---------------------------------------------------------------- StyleTTS / Kokoro


class AdaIN1d(nn.Module):
    """Instance norm modulated by a style vector (StyleTTS2 decoder)."""

    def __init__(self, style_dim: int, channels: int):
        super().__init__()
        self.norm = nn.InstanceNorm1d(channels, affine=False)
        self.fc = nn.Linear(style_dim, 2 * channels)

    def forward(self, x, s):
        gamma, beta = torch.chunk(self.fc(s).unsqueeze(-1), 2, dim=1)
        return (1 + gamma) * self.norm(x) + beta


class AdaLayerNorm(nn.Module):
    """StyleTTS2 AdaLayerNorm: F.layer_norm without affine, then a style-dependent scale
    and shift.  The modulation depends on an input, so a fuser may only fold the plain
    LayerNorm core, never (1 + gamma) as LayerNormalization's scale."""

    corpus_counts = {"LayerNorm": 1}

    def __init__(self, style_dim: int, channels: int, eps: float = 1e-5):
        super().__init__()
        self.channels = channels
        self.eps = eps
        self.fc = nn.Linear(style_dim, 2 * channels)

    def forward(self, x, s):
        gamma, beta = torch.chunk(self.fc(s).unsqueeze(1), 2, dim=-1)
        x = F.layer_norm(x, (self.channels,), eps=self.eps)
        return (1 + gamma) * x + beta


class StyleBlock(nn.Module):
    def __init__(self, channels: int = 16, style_dim: int = 8, hidden: int = 8):
        super().__init__()
        self.adain = AdaIN1d(style_dim, channels)
        self.upsample = nn.ConvTranspose1d(channels, channels, kernel_size=4, stride=2, padding=1)
        self.conv = nn.Conv1d(channels, channels, 3, padding=1)
        self.inorm = nn.InstanceNorm1d(channels, affine=True)
        self.act = nn.LeakyReLU(0.2)
        self.lstm = nn.LSTM(channels, hidden, batch_first=True, bidirectional=True)
        self.ada_ln = AdaLayerNorm(style_dim, 2 * hidden)
        self.proj = nn.Linear(2 * hidden, channels)

    def forward(self, x, style):  # x: (batch, channels, frames), style: (batch, style_dim)
        h = self.act(self.adain(x, style))
        h = self.upsample(h)
        h = self.act(self.inorm(self.conv(h)))
        h, _ = self.lstm(h.transpose(1, 2))
        h = self.ada_ln(h, style)
        return self.proj(h).transpose(1, 2)


def styletts_block_op14() -> Spec:
    return Spec(
        module=StyleBlock(),
        args=(torch.randn(2, 16, 10), torch.randn(2, 8)),
        input_names=["x", "style"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=14,
        dynamic_axes={"x": {2: "frames"}, "y": {2: "frames2"}},
        tags=["layernorm", "layernorm-decomposed", "no-affine", "styletts", "lstm", "instancenorm", "convtranspose"],
    )


# -------------------------------------------------------------------------- large


class LargeMLP(nn.Module):
    def __init__(self, width: int = 4096, depth: int = 8):
        super().__init__()
        layers: list[nn.Module] = []
        for i in range(depth):
            layers.append(nn.Linear(width, width))
            if i + 1 < depth:
                layers.append(nn.ReLU())
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


def large() -> Spec:
    """8 x Linear(4096, 4096): 134M fp32 parameters, ~537 MB. Benchmarks only."""
    return Spec(
        module=LargeMLP(),
        args=(torch.randn(2, 4096),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["large", "benchmark"],
        rtol=1e-3,
        atol=1e-3,
    )
