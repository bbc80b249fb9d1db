#!/usr/bin/env python3
"""The wide benchmark corpus: architectures simplify's rules were NOT tuned on.

    .venv/bin/python bench/wide_corpus.py [--out bench/.data/wide] [--only REGEX] [--list] [--force]

Each model is a real architecture with random weights, built from a small config (no hub
downloads), exported like a user would: TorchScript at opsets 13 and 17 with dynamic
batch/sequence (or H/W) axes; the dynamo exporter where TorchScript fails. Files are
written like tests/models (NAME.onnx, .inputs.npz, .expected.npz, .json, .stamp) by the
same machinery (tests/models/corpus_lib.produce), into the git-ignored bench/.data/wide.
The transformers models go through the test corpus's wrappers and inputs
(tests/models/corpus_hf.py).

Nothing in tests/ reads these models: they are for bench/simplify_bench.py --corpus wide
only, so no rule can be fitted to them by a test that must pass.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import traceback
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "models"))

DEFAULT_OUT = HERE / ".data" / "wide"


# ----------------------------------------------------------------------- transformers


def _model(model_cls, config_cls, **cfg):
    """A builder of model_cls(config_cls(**cfg)); transformers' warnings are silenced when it runs."""

    def make():
        import corpus_hf

        corpus_hf._quiet_transformers()
        return model_cls(config_cls(**cfg))

    return make


def _text(model_cls, config_cls, **cfg):
    return _model(model_cls, config_cls, attn_implementation="eager", **cfg)


def _hf_text_models():
    import transformers as t
    from corpus_hf import VOCAB  # the vocabulary its token ids are drawn from

    small = dict(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return {
        "distilbert": (
            _text(
                t.DistilBertModel,
                t.DistilBertConfig,
                vocab_size=VOCAB,
                dim=32,
                n_layers=2,
                n_heads=2,
                hidden_dim=64,
                max_position_embeddings=64,
            ),
            "encoder",
        ),
        "roberta": (_text(t.RobertaModel, t.RobertaConfig, **small), "encoder"),
        "albert": (_text(t.AlbertModel, t.AlbertConfig, embedding_size=16, **small), "encoder"),
        "electra": (_text(t.ElectraModel, t.ElectraConfig, embedding_size=16, **small), "encoder"),
        "bart": (
            _text(
                t.BartModel,
                t.BartConfig,
                vocab_size=VOCAB,
                d_model=32,
                encoder_layers=1,
                decoder_layers=1,
                encoder_attention_heads=2,
                decoder_attention_heads=2,
                encoder_ffn_dim=64,
                decoder_ffn_dim=64,
                max_position_embeddings=64,
            ),
            "seq2seq",
        ),
        "bloom": (_text(t.BloomModel, t.BloomConfig, vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=2), "decoder"),
        "llama": (_text(t.LlamaModel, t.LlamaConfig, num_key_value_heads=1, **small), "decoder"),
        "phi": (_text(t.PhiModel, t.PhiConfig, **small), "decoder"),
        "clip_text": (_text(t.CLIPTextModel, t.CLIPTextConfig, **small), "encoder"),
    }


def _hf_vision_models():
    import transformers as t

    vit = dict(
        image_size=32,
        patch_size=8,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        attn_implementation="eager",
    )
    return {
        "vit": (_model(t.ViTModel, t.ViTConfig, **vit), 32),
        "deit": (_model(t.DeiTModel, t.DeiTConfig, **vit), 32),
        "swin": (
            _model(
                t.SwinModel,
                t.SwinConfig,
                image_size=32,
                patch_size=4,
                embed_dim=16,
                depths=[1, 1],
                num_heads=[2, 2],
                window_size=4,
            ),
            32,
        ),
        "convnext": (
            _model(
                t.ConvNextModel,
                t.ConvNextConfig,
                num_channels=3,
                num_stages=2,
                hidden_sizes=[8, 16],
                depths=[1, 1],
                patch_size=4,
                image_size=32,
            ),
            32,
        ),
        "segformer": (
            _model(
                t.SegformerModel,
                t.SegformerConfig,
                num_encoder_blocks=2,
                depths=[1, 1],
                sr_ratios=[2, 1],
                hidden_sizes=[8, 16],
                num_attention_heads=[1, 2],
                patch_sizes=[7, 3],
                strides=[4, 2],
                mlp_ratios=[2, 2],
            ),
            32,
        ),
        "mobilevit": (
            _model(
                t.MobileViTModel,
                t.MobileViTConfig,
                image_size=32,
                patch_size=2,
                hidden_sizes=[16, 24, 32],
                neck_hidden_sizes=[8, 8, 16, 16, 24, 24, 48],
                num_attention_heads=2,
                expand_ratio=2.0,
            ),
            32,
        ),
        "clip_vision": (
            _model(
                t.CLIPVisionModel,
                t.CLIPVisionConfig,
                image_size=32,
                patch_size=8,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
                attn_implementation="eager",
            ),
            32,
        ),
    }


def _wav2vec2():
    import transformers as t

    return _model(
        t.Wav2Vec2Model,
        t.Wav2Vec2Config,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        do_stable_layer_norm=False,
        feat_extract_norm="group",
        attn_implementation="eager",
    )()


# ------------------------------------------------------------------------- hand CNNs


def _cnns():
    import torch
    import torch.nn.functional as F
    from torch import nn

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return F.relu(y + (self.down(x) if self.down is not None else x))

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
            self.layers = nn.Sequential(Basic(8, 8, 1), Basic(8, 16, 2), Basic(16, 32, 2))
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            y = self.layers(self.stem(x))
            y = F.adaptive_avg_pool2d(y, 1)
            return self.fc(torch.flatten(y, 1))

    class InvRes(nn.Module):
        def __init__(self, cin, cout, stride, t=4):
            super().__init__()
            h = cin * t
            self.use_res = stride == 1 and cin == cout
            self.body = nn.Sequential(
                nn.Conv2d(cin, h, 1, bias=False),
                nn.BatchNorm2d(h),
                nn.ReLU6(),
                nn.Conv2d(h, h, 3, stride, 1, groups=h, bias=False),
                nn.BatchNorm2d(h),
                nn.ReLU6(),
                nn.Conv2d(h, cout, 1, bias=False),
                nn.BatchNorm2d(cout),
            )

        def forward(self, x):
            y = self.body(x)
            return x + y if self.use_res else y

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6())
            self.blocks = nn.Sequential(InvRes(8, 8, 1), InvRes(8, 16, 2), InvRes(16, 16, 1), InvRes(16, 24, 2))
            self.head = nn.Linear(24, 10)

        def forward(self, x):
            y = self.blocks(self.stem(x))
            return self.head(y.mean((2, 3)))

    class HSwish(nn.Module):
        def forward(self, x):
            return x * F.relu6(x + 3.0) / 6.0

    class SE(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc1 = nn.Conv2d(c, c // 4, 1)
            self.fc2 = nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            s = F.adaptive_avg_pool2d(x, 1)
            s = torch.sigmoid(self.fc2(F.relu(self.fc1(s))))
            return x * s

    class DepthSep(nn.Module):
        """PP-LCNet block: depthwise conv + BN + hswish, optional SE, pointwise conv + BN + hswish."""

        def __init__(self, cin, cout, stride, k=3, se=False):
            super().__init__()
            self.dw = nn.Sequential(
                nn.Conv2d(cin, cin, k, stride, k // 2, groups=cin, bias=False), nn.BatchNorm2d(cin), HSwish()
            )
            self.se = SE(cin) if se else nn.Identity()
            self.pw = nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), HSwish())

        def forward(self, x):
            return self.pw(self.se(self.dw(x)))

    class LCNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), HSwish())
            self.blocks = nn.Sequential(
                DepthSep(8, 16, 1),
                DepthSep(16, 16, 2),
                DepthSep(16, 32, 2, 5, se=True),
                DepthSep(32, 32, 1, 5, se=True),
            )
            self.last = nn.Conv2d(32, 64, 1)
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            y = F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1)
            y = HSwish()(self.last(y))
            return self.fc(torch.flatten(y, 1))

    class CRNN(nn.Module):
        """OCR recognizer (PP-OCR rec / CRNN): conv backbone, collapse H, BiLSTM over W, CTC head;
        dynamic batch and width, so the exporter computes the sequence shape at run time."""

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
                nn.Conv2d(16, 32, 3, 1, 1),
                nn.BatchNorm2d(32),
                nn.ReLU(),
            )
            self.rnn = nn.LSTM(32, 16, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(32, 20)

        def forward(self, x):
            f = self.backbone(x)  # [B, C, H', W']
            b, c, h, w = f.shape
            f = f.mean(2)  # collapse H
            f = f.permute(0, 2, 1).reshape(b, w, c)  # [B, W', C]
            y, _ = self.rnn(f)
            y = self.fc(y)
            return y.softmax(-1)

    class DetHead(nn.Module):
        """DB-style text detector: FPN-ish upsampling with Resize to the input's dynamic H/W."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
            self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
            self.lat1 = nn.Conv2d(8, 8, 1)
            self.lat2 = nn.Conv2d(16, 8, 1)
            self.out = nn.Conv2d(16, 1, 3, 1, 1)

        def forward(self, x):
            a = self.c1(x)
            b = self.c2(a)
            up = F.interpolate(self.lat2(b), size=a.shape[2:], mode="nearest")
            p = self.lat1(a) + up
            cat = torch.cat([p, F.interpolate(self.lat2(b), size=p.shape[2:], mode="bilinear")], 1)
            y = torch.sigmoid(self.out(cat))
            return F.interpolate(y, size=x.shape[2:], mode="bilinear")

    class TTSBlock(nn.Module):
        """TTS duration/length-regulator block (Kokoro-like): Conv1d + LayerNorm + LSTM, then
        positions built with arange/expand on the dynamic frame count."""

        def __init__(self, d=16):
            super().__init__()
            self.conv = nn.Conv1d(d, d, 5, padding=2)
            self.norm = nn.LayerNorm(d)
            self.lstm = nn.LSTM(d, d // 2, bidirectional=True, batch_first=True)
            self.proj = nn.Linear(d, d)
            self.pos = nn.Parameter(torch.randn(64, d))

        def forward(self, x):  # x [B, D, T]
            h = F.relu(self.conv(x)).transpose(1, 2)  # [B, T, D]
            h = self.norm(h)
            h, _ = self.lstm(h)
            t = h.shape[1]
            idx = torch.arange(t, device=h.device).unsqueeze(0).expand(h.shape[0], t)
            h = h + self.pos[idx]
            h = self.proj(h).reshape(h.shape[0], h.shape[1], 2, -1)
            return h.flatten(2).transpose(1, 2)

    return {
        "resnet": ResNet,
        "mobilenetv2": MobileNetV2,
        "lcnet": LCNet,
        "crnn": CRNN,
        "dbnet": DetHead,
        "tts": TTSBlock,
    }


# ---------------------------------------------------------------------------- catalog


def _audio_wrapper(model):
    """The audio model with a positional signature and one tensor output (corpus_hf's
    TextWrapper and ImageWrapper do the same for text and images)."""
    from torch import nn

    class AudioWrapper(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_values):
            return self.model(input_values=input_values, return_dict=False)[0]

    return AudioWrapper()


def catalog() -> dict[str, tuple]:
    """name -> (builder kind, arch, opset). Imports nothing heavy."""
    text = ["distilbert", "roberta", "albert", "electra", "bart", "bloom", "llama", "phi", "clip_text"]
    vision = ["vit", "deit", "swin", "convnext", "segformer", "mobilevit", "clip_vision"]
    cnn = ["resnet", "mobilenetv2", "lcnet", "crnn", "dbnet", "tts"]
    # BART's causal mask needs Trilu (opset 14) with either exporter.
    min_opset = {"bart": 14}
    out = {}
    for opset in (13, 17):
        for a in text:
            o = max(opset, min_opset.get(a, 0))
            out[f"{a}_op{o}"] = ("text", a, o)
        for a in vision:
            out[f"{a}_op{opset}"] = ("vision", a, opset)
        out[f"wav2vec2_op{opset}"] = ("audio", "wav2vec2", opset)
        for a in cnn:
            out[f"{a}_op{opset}"] = ("cnn", a, opset)
    return out


def spec_for(kind: str, arch: str, opset: int):
    import corpus_hf as hf
    import torch
    from corpus_lib import TORCHSCRIPT, Spec

    if kind == "text":
        make, sub = _hf_text_models()[arch]
        module = (hf.Seq2SeqWrapper if sub == "seq2seq" else hf.TextWrapper)(make())
        args = (hf._ids(), hf._mask())
        axes = dict(hf._TEXT_AXES)
        names = ["input_ids", "attention_mask"]
        if sub == "seq2seq":
            names.append("decoder_input_ids")
            args = (*args, hf._ids(5))
            axes["decoder_input_ids"] = {0: "batch", 1: "dec_seq"}
        # transformers' vmap-based causal masks are not traceable by TorchScript; its older implementation is
        ctx = hf._traceable_causal_masks if sub == "decoder" else None
        return Spec(
            module=module,
            args=args,
            input_names=names,
            output_names=["y"],
            exporter=TORCHSCRIPT,
            opset=opset,
            dynamic_axes={**axes, "y": {0: "batch"}},
            context=ctx,
            rtol=1e-3,
            atol=1e-4,
        )
    if kind == "vision":
        make, size = _hf_vision_models()[arch]
        module = hf.ImageWrapper(make())
        return Spec(
            module=module,
            args=(torch.randn(hf.BATCH, 3, size, size),),
            input_names=["pixel_values"],
            output_names=["y"],
            exporter=TORCHSCRIPT,
            opset=opset,
            dynamic_axes={"pixel_values": {0: "batch"}, "y": {0: "batch"}},
            rtol=1e-3,
            atol=1e-4,
        )
    if kind == "audio":
        module = _audio_wrapper(_wav2vec2())
        return Spec(
            module=module,
            args=(torch.randn(hf.BATCH, 400),),
            input_names=["input_values"],
            output_names=["y"],
            exporter=TORCHSCRIPT,
            opset=opset,
            dynamic_axes={"input_values": {0: "batch", 1: "samples"}, "y": {0: "batch", 1: "frames"}},
            rtol=1e-3,
            atol=1e-4,
        )
    module = _cnns()[arch]()
    if arch == "tts":
        return Spec(
            module=module,
            args=(torch.randn(hf.BATCH, 16, 12),),
            input_names=["x"],
            output_names=["y"],
            exporter=TORCHSCRIPT,
            opset=opset,
            dynamic_axes={"x": {0: "batch", 2: "frames"}},
            rtol=1e-3,
            atol=1e-4,
        )
    if arch == "crnn":
        x = torch.randn(hf.BATCH, 3, 16, 40)
        axes = {"x": {0: "batch", 3: "width"}}
    else:
        x = torch.randn(hf.BATCH, 3, 32, 32)
        axes = {"x": {0: "batch", 2: "height", 3: "width"}}
    return Spec(
        module=module,
        args=(x,),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=opset,
        dynamic_axes=axes,
        rtol=1e-3,
        atol=1e-4,
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--only", help="regex on model names")
    p.add_argument("--list", action="store_true")
    p.add_argument("--force", action="store_true")
    args = p.parse_args(argv)
    cat = catalog()
    names = [n for n in cat if not args.only or re.search(args.only, n)]
    if args.list:
        print("\n".join(names))
        return 0
    import random

    import corpus_lib
    import numpy as np
    import torch
    from corpus_lib import DYNAMO

    corpus_lib.quiet_exporters()
    # The models depend on this file and on the test corpus's wrappers and inputs.
    stamp = (HERE / "wide_corpus.py").read_bytes() + (ROOT / "tests" / "models" / "corpus_hf.py").read_bytes()
    digest = f"{zlib.crc32(stamp):08x} torch={torch.__version__}"
    args.out.mkdir(parents=True, exist_ok=True)
    failures = []
    for name in names:
        s = args.out / f"{name}.stamp"
        if not args.force and s.is_file() and s.read_text().strip() == digest:
            print(f"  {name:24s} cached", flush=True)
            continue
        kind, arch, opset = cat[name]
        seed = zlib.crc32(name.encode()) & 0x7FFFFFFF
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)
        start = time.perf_counter()
        try:
            spec = spec_for(kind, arch, opset)
            try:
                produced = corpus_lib.produce(name, spec, args.out, digest, description=f"{arch} ({kind})")
            except Exception as exc:  # TorchScript failed: the dynamo exporter, as a user would try next
                spec = spec_for(kind, arch, opset)
                spec.exporter = DYNAMO
                spec.notes.append(f"TorchScript failed: {corpus_lib._summarize_error(exc)}")
                produced = corpus_lib.produce(name, spec, args.out, digest, description=f"{arch} ({kind})")
        except Exception:
            failures.append(name)
            (args.out / f"{name}.error").write_text(traceback.format_exc())
            print(f"  {name:24s} FAILED (see {name}.error)", flush=True)
            continue
        (args.out / f"{name}.error").unlink(missing_ok=True)
        m = produced.manifest
        print(
            f"  {name:24s} {m['exporter']:12s} opset {m['opset']:2d} {m['node_count']:5d} nodes "
            f"{time.perf_counter() - start:6.1f}s",
            flush=True,
        )
    print(f"wide corpus: {len(names) - len(failures)}/{len(names)} in {args.out}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
