#!/usr/bin/env python3
"""Exports real architectures the way edge deployments export them: batch 1, static shapes,
small configs with random weights, for the backend harness.

    python tests/backends/batch1_corpus.py [--out DIR] [--only NAME ...]   (default build/backends/corpus)

The project's corpus (tests/models) exports most models at a fixed batch of 2, which ncnn
(its Mat has no batch dimension) cannot run at all, so there `--target ncnn` can only name
the batch. These models are what an ncnn, rknn or TFLite user feeds the tool: each one is
written as NAME.onnx and NAME.inputs.npz (the harness's corpus layout), all with a `_b1`
suffix. A model that fails to export is reported and left out; the exit status is then 1.

The architectures live in tests/backends/corpus/ (cnn.py, vision.py, audio.py, text.py; the
first twelve below), one MODELS registry each, merged here. Each export is checked with
onnx's full checker and run once in onnxruntime before it counts. Besides these torch
exports the corpus holds, by name only:
  - batch-1 tf2onnx, paddle2onnx and jax2onnx builds (tests/backends/corpus/edge_*.py, built
    by tests/models/exporters/run.py inside the exporter venvs that `make models` made;
    --stacks builds them, a missing venv is reported and skipped),
  - the wheel models of tests/models/wheels.toml whose input sets are batch 1 (the main
    corpus writes them to tests/models/.generated; the harness reads them from there),
  - text encoders and decoders through onnxruntime's transformer optimizer, in float32 and
    float16, and through its dynamic quantizer (tests/backends/corpus/ort_optimized.py,
    `_ortopt` in their names; built with the torch exports).
`--names` prints the names built so far (in --out, and the wheel models in
tests/models/.generated), comma-separated, for `harness.py --models`.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _vit(opset):
    from transformers import ViTConfig, ViTModel

    cfg = ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=32,
        patch_size=8,
        num_channels=3,
    )
    model = ViTModel(cfg, add_pooling_layer=False)
    return model, {"pixel_values": ("randn", (1, 3, 32, 32))}, ["last_hidden_state"], opset


def _convnext(opset):
    from transformers import ConvNextConfig, ConvNextModel

    cfg = ConvNextConfig(
        num_channels=3, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1], image_size=32, patch_size=4
    )
    return ConvNextModel(cfg), {"pixel_values": ("randn", (1, 3, 32, 32))}, ["last_hidden_state"], opset


def _bert(opset):
    from transformers import BertConfig, BertModel

    cfg = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=32,
    )
    model = BertModel(cfg, add_pooling_layer=False)
    # input_ids only, as single-sequence deployments feed it: the mask is all ones.
    return model, {"input_ids": ("tokens", (1, 8))}, ["last_hidden_state"], opset


def _mobilenet_block(opset):
    import torch
    from torch import nn

    class SqueezeExcite(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc1, self.fc2 = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            s = torch.nn.functional.adaptive_avg_pool2d(x, 1)
            return x * nn.functional.hardsigmoid(self.fc2(torch.relu(self.fc1(s))))

    class MobileNetV3Ish(nn.Module):
        """Inverted residuals with depthwise convs, SE, Hardswish, and a pooled classifier."""

        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.Hardswish())
            self.expand = nn.Sequential(nn.Conv2d(16, 32, 1), nn.BatchNorm2d(32), nn.Hardswish())
            self.dw = nn.Sequential(nn.Conv2d(32, 32, 3, 1, 1, groups=32), nn.BatchNorm2d(32), nn.Hardswish())
            self.se = SqueezeExcite(32)
            self.project = nn.Sequential(nn.Conv2d(32, 16, 1), nn.BatchNorm2d(16))
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            x = self.stem(x)
            x = x + self.project(self.se(self.dw(self.expand(x))))
            return self.head(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return MobileNetV3Ish(), {"image": ("randn", (1, 3, 32, 32))}, ["logits"], opset


def _yolo_neck(opset):
    import torch
    from torch import nn

    class ConvSiLU(nn.Sequential):
        def __init__(self, a, b, k=3, s=1):
            super().__init__(nn.Conv2d(a, b, k, s, k // 2), nn.BatchNorm2d(b), nn.SiLU())

    class TinyDetector(nn.Module):
        """A backbone at strides 2/4/8, an upsample-and-concat neck, and sigmoid heads."""

        def __init__(self):
            super().__init__()
            self.c1, self.c2, self.c3 = ConvSiLU(3, 8, s=2), ConvSiLU(8, 16, s=2), ConvSiLU(16, 32, s=2)
            self.lateral = ConvSiLU(32, 16, k=1)
            self.fuse = ConvSiLU(32, 16)
            self.head = nn.Conv2d(16, 6, 1)

        def forward(self, x):
            p2 = self.c2(self.c1(x))
            p3 = self.c3(p2)
            up = nn.functional.interpolate(self.lateral(p3), scale_factor=2.0, mode="nearest")
            y = self.head(self.fuse(torch.cat([up, p2], dim=1)))
            return torch.sigmoid(y).flatten(2).transpose(1, 2)

    return TinyDetector(), {"image": ("randn", (1, 3, 64, 64))}, ["boxes"], opset


def _norm_mlp(opset, approximate="none"):
    from torch import nn

    class PreNormMLP(nn.Module):
        """A transformer MLP sublayer: LayerNorm, Linear, GELU, Linear, residual."""

        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(32)
            self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 32)
            self.act = nn.GELU(approximate=approximate)

        def forward(self, x):
            return x + self.fc2(self.act(self.fc1(self.norm(x))))

    return PreNormMLP(), {"x": ("randn", (1, 16, 32))}, ["y"], opset


def _crnn(opset, cell="GRU", bidirectional=True):
    from torch import nn

    class CRNN(nn.Module):
        """Conv features over a text line, then a batch_first RNN and a per-step classifier."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d((4, 1)))
            self.rnn = getattr(nn, cell)(8 * 4, 16, batch_first=True, bidirectional=bidirectional)
            self.fc = nn.Linear(32 if bidirectional else 16, 12)

        def forward(self, x):
            f = self.conv(x)  # (1, 8, 4, W)
            f = f.flatten(1, 2).transpose(1, 2)  # (1, W, 32)
            return self.fc(self.rnn(f)[0]).log_softmax(-1)

    return CRNN(), {"line": ("randn", (1, 1, 16, 24))}, ["log_probs"], opset


MODELS = {
    "vit_op14_b1": lambda: _vit(14),
    "vit_op17_b1": lambda: _vit(17),
    "convnext_op17_b1": lambda: _convnext(17),
    "bert_op14_b1": lambda: _bert(14),
    "mobilenet_op13_b1": lambda: _mobilenet_block(13),
    "detector_op13_b1": lambda: _yolo_neck(13),
    "prenorm_mlp_op13_b1": lambda: _norm_mlp(13),
    "prenorm_mlp_op17_b1": lambda: _norm_mlp(17),
    "prenorm_mlp_tanh_op17_b1": lambda: _norm_mlp(17, "tanh"),
    "prenorm_mlp_op20_b1": lambda: _norm_mlp(20),
    "crnn_op13_b1": lambda: _crnn(13),
    "crnn_lstm_op13_b1": lambda: _crnn(13, "LSTM", bidirectional=False),
}


sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
import audio  # noqa: E402
import cnn  # noqa: E402
import ort_optimized  # noqa: E402
import stacks  # noqa: E402
import text  # noqa: E402
import vision  # noqa: E402
from common import traceable_causal_masks  # noqa: E402

for _part in (cnn, vision, audio, text):
    assert not set(_part.MODELS) & set(MODELS), f"{_part.__name__}: a name repeats"
    MODELS.update(_part.MODELS)
assert not set(ort_optimized.ALL) & set(MODELS), "ort_optimized: a name repeats"


def export(name: str, out: Path) -> None:
    """Exports one model, then checks it (onnx's full checker, one onnxruntime run) before
    it is written under its final name: a model that fails leaves nothing behind."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch

    torch.manual_seed(0)
    model, inputs, output_names, opset = MODELS[name]()
    model.eval()
    tensors = {}
    for key, (kind, shape) in inputs.items():
        tensors[key] = torch.randint(1, 100, shape) if kind == "tokens" else torch.randn(*shape)
    partial = out / f"{name}.partial.onnx"
    with torch.no_grad(), traceable_causal_masks():
        torch.onnx.export(
            model,
            tuple(tensors.values()),
            str(partial),
            opset_version=opset,
            dynamo=False,
            input_names=list(tensors),
            output_names=output_names,
        )
    try:
        onnx.checker.check_model(str(partial), full_check=True)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        feeds = {k: t.numpy() for k, t in tensors.items()}
        outputs = ort.InferenceSession(str(partial), options, providers=["CPUExecutionProvider"]).run(None, feeds)
        if not all(np.isfinite(o).all() for o in outputs if o.dtype.kind == "f"):
            raise RuntimeError("onnxruntime gives non-finite outputs")
    except Exception:
        partial.unlink()
        raise
    np.savez(out / f"{name}.inputs.npz", **feeds)
    partial.replace(out / f"{name}.onnx")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build/backends/corpus")
    parser.add_argument("--only", nargs="*", choices=sorted([*MODELS, *ort_optimized.ALL]), help="export only these")
    parser.add_argument("--stacks", action="store_true", help="also build the tf/paddle/jax models (exporter venvs)")
    parser.add_argument(
        "--names", action="store_true", help="print the corpus names built so far, comma-separated, and exit"
    )
    args = parser.parse_args(argv)
    if args.names:  # those in --out, and the wheel models the main corpus holds
        built = [n for n in [*MODELS, *ort_optimized.ALL, *stacks.STACK_MODELS] if (args.out / f"{n}.onnx").is_file()]
        wheels = [n for n in stacks.wheel_models() if (ROOT / f"tests/models/.generated/{n}.onnx").is_file()]
        print(",".join(built + wheels))
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in args.only or [*MODELS, *ort_optimized.ALL]:
        try:
            if name in ort_optimized.ALL:
                ort_optimized.build_one(name, args.out)
            else:
                export(name, args.out)
            print(f"batch1: wrote {args.out / name}.onnx")
        except Exception:
            failed.append(name)
            print(f"batch1: {name} failed to export:\n{traceback.format_exc()}", file=sys.stderr)
    if args.stacks and not args.only:
        failed += stacks.build(args.out)
    if failed:
        print(f"batch1: {len(failed)} failed, left out: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
