"""Shape-arithmetic corpus: exports whose shapes are computed at run time from dynamic dims,
the models where simplify used to need a second run."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from corpus_lib import TORCHSCRIPT, Spec
from torch import nn


class CRNN(nn.Module):
    """OCR recognizer: conv backbone, H collapsed, BiLSTM over the dynamic width, CTC head."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 16, 3, 1, 1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d((2, 1), (2, 1)),
        )
        self.rnn = nn.LSTM(16, 8, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(16, 12)

    def forward(self, x):
        f = self.backbone(x)
        b, c, h, w = f.shape
        f = f.reshape(b, c * h, w)[:, :c].permute(0, 2, 1)
        y, _ = self.rnn(f)
        return self.fc(y).softmax(-1)


def crnn_dynamic_w_op13() -> Spec:
    return Spec(
        module=CRNN(),
        args=(torch.randn(2, 3, 8, 20),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=13,
        dynamic_axes={"x": {0: "batch", 3: "width"}},
        tags=["shape-chain", "lstm", "cnn"],
        rtol=1e-3,
        atol=1e-4,
    )


def _stale_output_shape(model):
    """Declares the output [1, -1], as some shipped OCR models do after their exporter
    changed (one wheel's CRNN declares [1, -1] and computes [16, 1, 8210])."""
    out = model.graph.output[0].type.tensor_type.shape
    del out.dim[:]
    out.dim.add().dim_value = 1
    out.dim.add().dim_value = -1
    return model


class CRNNReshapedHead(CRNN):
    """The CRNN whose scores are reshaped to sizes read from their own shape at run time,
    then logged: onnx's checker cannot see the output's rank until the shape arithmetic
    is folded."""

    def forward(self, x):
        y = super().forward(x)
        return y.reshape(y.shape[0], y.shape[1], -1).log()


def crnn_stale_output_op13() -> Spec:
    spec = crnn_dynamic_w_op13()
    spec.module = CRNNReshapedHead()
    spec.edit = _stale_output_shape
    spec.edit_note = "the output's declared shape replaced by a stale [1, -1] (rank 2; it computes rank 3)"
    spec.tags = [*spec.tags, "stale-declaration"]
    return spec


class FPN(nn.Module):
    """Text-detector neck: upsampling with Resize to sizes read from dynamic H/W, a
    per-channel scale and bias after convs, and a channel-last Transpose pair."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.lat1 = nn.Conv2d(8, 8, 1, bias=False)
        self.lat2 = nn.Conv2d(16, 8, 1)
        self.bias = nn.Parameter(torch.randn(8, 1, 1))
        self.out = nn.Conv2d(16, 1, 3, 1, 1)

    def forward(self, x):
        a = self.c1(x)
        b = self.c2(a)
        p = self.lat1(a) + self.bias
        up = F.interpolate(self.lat2(b) * 0.5, size=a.shape[2:], mode="nearest")
        cat = torch.cat([p + up, F.interpolate(self.lat2(b), size=p.shape[2:], mode="bilinear")], 1)
        cat = cat.permute(0, 2, 3, 1).permute(0, 3, 1, 2)
        y = torch.sigmoid(self.out(cat))
        return F.interpolate(y, size=x.shape[2:], mode="bilinear")


def fpn_dynamic_hw_op13() -> Spec:
    return Spec(
        module=FPN(),
        args=(torch.randn(2, 3, 16, 24),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=13,
        dynamic_axes={"x": {0: "batch", 2: "height", 3: "width"}},
        tags=["cnn", "resize"],
        rtol=1e-3,
        atol=1e-4,
    )


class ImageWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values, return_dict=False)[0]


def swin_op17() -> Spec:
    """Swin: window partition/merge reshapes whose shapes follow from the previous layer's
    (the chain that took one simplify round per layer before; also non-idempotent then)."""
    import transformers
    from transformers import SwinConfig, SwinModel

    transformers.logging.set_verbosity_error()
    config = SwinConfig(image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4)
    return Spec(
        module=ImageWrapper(SwinModel(config)),
        args=(torch.randn(2, 3, 32, 32),),
        input_names=["pixel_values"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        dynamic_axes={"pixel_values": {0: "batch"}, "y": {0: "batch"}},
        tags=["shape-chain", "transformer", "layernorm"],
        rtol=1e-3,
        atol=1e-4,
    )
