"""Judging-corpus models from torch and transformers (the project's .venv): encoders, vision,
audio and the batch-1 edge architectures. Nothing here is in tests/models.

Three sources, all exported with random weights from small configs (no hub):
  wide_*_op17   bench/wide_corpus.py's architectures (simplify was never tuned on them), at
                opset 17 with dynamic axes; its CLIP text and LLaMA are left out, the
                development corpus has those architectures.
  enc_*         encoders the wide corpus lacks (DeBERTa-v2, MPNet, XLM-R, Whisper encoder).
  b1_*          batch-1 edge exports: static shapes, batch 1, TorchScript at opset 13 or 17,
                as NPU users export (tests/backends/batch1_corpus.py does the same for 12
                models); CNNs, detectors, OCR, ASR/VAD, encoders and decoders.
Each returns a tests/models/corpus_lib.Spec; generate.py writes it with corpus_lib.produce,
so expected outputs are the torch module's.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "models"), str(ROOT / "bench")]

WIDE_LEFT_OUT = {"clip_text", "llama"}  # the development corpus has these architectures


def wide_names() -> list[str]:
    import wide_corpus

    return [
        f"wide_{name}"
        for name, (kind, arch, opset) in wide_corpus.catalog().items()
        if opset >= 17 and arch not in WIDE_LEFT_OUT
    ]


# --------------------------------------------------------------------------- helpers


def _quiet():
    import transformers

    transformers.logging.set_verbosity_error()


def _spec(module, args, input_names, output_names, opset, axes=None, tags=(), rtol=1e-3, atol=1e-4, context=None):
    from corpus_lib import TORCHSCRIPT, Spec

    return Spec(
        module=module.eval(),
        args=tuple(args),
        input_names=list(input_names),
        output_names=list(output_names),
        exporter=TORCHSCRIPT,
        opset=opset,
        dynamic_axes=axes,
        tags=list(tags),
        rtol=rtol,
        atol=atol,
        context=context,
    )


class _First:
    """Wraps a transformers model: positional inputs, outputs[0] (and more by index)."""

    @staticmethod
    def make(model, keys, picks=(0,)):
        from torch import nn

        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *args):
                out = self.model(**dict(zip(keys, args)), return_dict=False)
                picked = tuple(out[i] for i in picks)
                return picked if len(picked) > 1 else picked[0]

        return Wrapper()


SMALL_TEXT = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def _tokens(shape, vocab=99, low=3):
    import torch

    return torch.randint(low, vocab, shape)


# ---------------------------------------------------------------- dynamic encoders


def _encoder(model_cls, config_cls, **cfg):
    import torch

    _quiet()
    model = model_cls(config_cls(vocab_size=99, max_position_embeddings=64, attn_implementation="eager", **cfg))
    ids = _tokens((2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    return _spec(
        _First.make(model, ["input_ids", "attention_mask"]),
        (ids, mask),
        ["input_ids", "attention_mask"],
        ["y"],
        17,
        axes,
    )


def enc_deberta_v2_op17():
    import transformers as t

    return _encoder(t.DebertaV2Model, t.DebertaV2Config, **SMALL_TEXT, relative_attention=True, position_buckets=8)


def enc_mpnet_op17():
    import transformers as t

    return _encoder(t.MPNetModel, t.MPNetConfig, **SMALL_TEXT)


def enc_xlm_roberta_op17():
    import transformers as t

    return _encoder(t.XLMRobertaModel, t.XLMRobertaConfig, **SMALL_TEXT)


def enc_whisper_encoder_op17():
    import torch
    import transformers as t

    _quiet()
    config = t.WhisperConfig(
        vocab_size=99,
        num_mel_bins=16,
        d_model=32,
        encoder_layers=2,
        encoder_attention_heads=2,
        decoder_layers=1,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_source_positions=16,
        max_target_positions=16,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=0,
        attn_implementation="eager",
    )
    encoder = t.WhisperModel(config).get_encoder()
    features = torch.randn(2, 16, 32)
    return _spec(
        _First.make(encoder, ["input_features"]),
        (features,),
        ["input_features"],
        ["y"],
        17,
        {"input_features": {0: "batch"}, "y": {0: "batch"}},
        tags=["audio"],
    )


# -------------------------------------------------------------------- batch-1 edge


def _hf_vision(model_cls, config_cls, size=32, picks=(0,), opset=17, tags=("cnn",), **cfg):
    import torch

    _quiet()
    model = model_cls(config_cls(**cfg))
    pixels = torch.randn(1, 3, size, size)
    outputs = [f"y{i}" for i in range(len(picks))]
    return _spec(_First.make(model, ["pixel_values"], picks), (pixels,), ["pixel_values"], outputs, opset, tags=tags)


def b1_resnet_op13():
    import transformers as t

    return _hf_vision(
        t.ResNetModel,
        t.ResNetConfig,
        opset=13,
        embedding_size=16,
        hidden_sizes=[16, 32],
        depths=[1, 1],
        layer_type="basic",
    )


def b1_mobilenet_v2_op13():
    import transformers as t

    return _hf_vision(t.MobileNetV2Model, t.MobileNetV2Config, opset=13, depth_multiplier=0.35, image_size=32)


def b1_efficientnet_op13():
    import transformers as t

    return _hf_vision(
        t.EfficientNetModel,
        t.EfficientNetConfig,
        opset=13,
        image_size=32,
        width_coefficient=0.25,
        depth_coefficient=0.25,
        hidden_dim=320,  # round_filters(1280) at width 0.25: the head conv's channels
    )


def b1_regnet_op13():
    import transformers as t

    return _hf_vision(
        t.RegNetModel, t.RegNetConfig, opset=13, embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], groups_width=8
    )


def b1_convnextv2_op17():
    import transformers as t

    return _hf_vision(t.ConvNextV2Model, t.ConvNextV2Config, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])


def b1_levit_op17():
    import transformers as t

    return _hf_vision(
        t.LevitModel,
        t.LevitConfig,
        size=64,
        image_size=64,
        hidden_sizes=[32, 48, 64],
        num_attention_heads=[1, 2, 2],
        depths=[1, 1, 1],
        key_dim=[8, 8, 8],
        tags=("transformer",),
    )


def b1_poolformer_op13():
    import transformers as t

    return _hf_vision(
        t.PoolFormerModel, t.PoolFormerConfig, opset=13, hidden_sizes=[16, 32, 32, 32], depths=[1, 1, 1, 1]
    )


def b1_mobilevitv2_op17():
    import transformers as t

    return _hf_vision(t.MobileViTV2Model, t.MobileViTV2Config, size=64, image_size=64, width_multiplier=0.25)


def b1_dinov2_op17():
    import transformers as t

    return _hf_vision(t.Dinov2Model, t.Dinov2Config, image_size=32, patch_size=8, tags=("transformer",), **SMALL_TEXT)


def b1_beit_op17():
    import transformers as t

    return _hf_vision(
        t.BeitModel,
        t.BeitConfig,
        image_size=32,
        patch_size=8,
        use_relative_position_bias=True,
        tags=("transformer",),
        **SMALL_TEXT,
    )


def b1_yolos_op17():
    import transformers as t

    return _hf_vision(
        t.YolosForObjectDetection,
        t.YolosConfig,
        picks=(0, 1),
        image_size=[32, 32],
        patch_size=8,
        num_detection_tokens=5,
        num_labels=3,
        tags=("detector", "transformer"),
        **SMALL_TEXT,
    )


def b1_segformer_op17():
    import transformers as t

    return _hf_vision(
        t.SegformerForSemanticSegmentation,
        t.SegformerConfig,
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        patch_sizes=[7, 3],
        strides=[4, 2],
        num_attention_heads=[1, 2],
        mlp_ratios=[2, 2],
        decoder_hidden_size=32,
        num_labels=4,
        tags=("segmentation", "transformer"),
    )


def b1_detr_op17():
    import transformers as t

    backbone = t.ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic", out_features=["stage2"]
    )
    return _hf_vision(
        t.DetrForObjectDetection,
        t.DetrConfig,
        size=64,
        picks=(0, 1),
        use_timm_backbone=False,
        use_pretrained_backbone=False,
        backbone_config=backbone,
        d_model=32,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=5,
        num_labels=3,
        tags=("detector", "transformer"),
    )


def _hf_audio(model, samples=800, picks=(0,), tags=("audio",)):
    import torch

    wave = torch.randn(1, samples)
    outputs = [f"y{i}" for i in range(len(picks))]
    return _spec(_First.make(model, ["input_values"], picks), (wave,), ["input_values"], outputs, 17, tags=tags)


def _speech_small():
    return dict(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        conv_dim=(16, 16),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=2,
        vocab_size=12,
    )


def b1_wav2vec2_ctc_op17():
    import transformers as t

    _quiet()
    return _hf_audio(t.Wav2Vec2ForCTC(t.Wav2Vec2Config(**_speech_small())), tags=("audio", "asr"))


def b1_hubert_op17():
    import transformers as t

    _quiet()
    return _hf_audio(t.HubertModel(t.HubertConfig(**_speech_small())))


def b1_whisper_encoder_op17():
    spec = enc_whisper_encoder_op17()
    import torch

    spec.args = (torch.randn(1, 16, 32),)
    spec.dynamic_axes = None
    return spec


def _b1_text(model, opset=17, seq=12, tags=("encoder",), context=None):
    ids = _tokens((1, seq))
    return _spec(_First.make(model, ["input_ids"]), (ids,), ["input_ids"], ["y"], opset, tags=tags, context=context)


def b1_distilbert_op13():
    import transformers as t

    _quiet()
    config = t.DistilBertConfig(
        vocab_size=99, dim=32, n_layers=2, n_heads=2, hidden_dim=64, attn_implementation="eager"
    )
    return _b1_text(t.DistilBertModel(config), opset=13)


def b1_albert_op13():
    import transformers as t

    _quiet()
    config = t.AlbertConfig(vocab_size=99, embedding_size=16, attn_implementation="eager", **SMALL_TEXT)
    return _b1_text(t.AlbertModel(config, add_pooling_layer=False), opset=13)


def b1_mobilebert_op13():
    import transformers as t

    _quiet()
    config = t.MobileBertConfig(
        vocab_size=99,
        hidden_size=32,
        embedding_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        intra_bottleneck_size=16,
        num_feedforward_networks=2,
    )
    return _b1_text(t.MobileBertModel(config, add_pooling_layer=False), opset=13)


def b1_t5_encoder_op17():
    import transformers as t

    _quiet()
    config = t.T5Config(
        vocab_size=99, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2, feed_forward_proj="gated-gelu"
    )
    return _b1_text(t.T5EncoderModel(config), opset=17)


def _causal(model):
    import corpus_hf

    model.config.use_cache = False
    return _b1_text(model, opset=17, tags=("decoder",), context=corpus_hf._traceable_causal_masks)


def b1_gpt2_op17():
    import transformers as t

    _quiet()
    config = t.GPT2Config(vocab_size=99, n_embd=32, n_layer=2, n_head=2, n_positions=32, attn_implementation="eager")
    return _causal(t.GPT2LMHeadModel(config))


def b1_qwen2_op17():
    import transformers as t

    _quiet()
    config = t.Qwen2Config(
        vocab_size=99, num_key_value_heads=1, max_position_embeddings=64, attn_implementation="eager", **SMALL_TEXT
    )
    return _causal(t.Qwen2ForCausalLM(config))


# Hand-written edge architectures (torch.nn), each a known deployment shape.


def _cbr(cin, cout, k=3, s=1, act="relu", groups=1):
    from torch import nn

    acts = {
        "relu": nn.ReLU(),
        "silu": nn.SiLU(),
        "hswish": nn.Hardswish(),
        "leaky": nn.LeakyReLU(0.1),
        "relu6": nn.ReLU6(),
    }
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), acts[act])


def _image(module, size=(64, 64), channels=3, outputs=("y",), opset=13, tags=("cnn",)):
    import torch

    x = torch.randn(1, channels, *size)
    return _spec(module, (x,), ["x"], outputs, opset, tags=tags)


def b1_yolov5_sppf_op13():
    """YOLOv5-style: C3-ish backbone with SiLU, SPPF (three chained MaxPools), a PAN
    upsample-concat and the Detect decode: sigmoid, grid add, anchor multiply, reshape."""
    import torch
    from torch import nn

    class SPPF(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.cv1, self.cv2, self.pool = (
                _cbr(c, c // 2, 1, act="silu"),
                _cbr(c * 2, c, 1, act="silu"),
                nn.MaxPool2d(5, 1, 2),
            )

        def forward(self, x):
            x = self.cv1(x)
            y1 = self.pool(x)
            y2 = self.pool(y1)
            return self.cv2(torch.cat([x, y1, y2, self.pool(y2)], 1))

    class Yolo(nn.Module):
        def __init__(self, classes=3, anchors=3):
            super().__init__()
            self.stem = nn.Sequential(_cbr(3, 8, 3, 2, "silu"), _cbr(8, 16, 3, 2, "silu"))
            self.c3 = _cbr(16, 32, 3, 2, "silu")
            self.c4 = nn.Sequential(_cbr(32, 32, 3, 2, "silu"), SPPF(32))
            self.up = nn.Upsample(scale_factor=2, mode="nearest")
            self.fuse = _cbr(64, 32, 1, act="silu")
            self.na, self.no = anchors, classes + 5
            self.heads = nn.ModuleList([nn.Conv2d(32, anchors * self.no, 1), nn.Conv2d(32, anchors * self.no, 1)])
            self.register_buffer("anchor", torch.tensor([[10.0, 13], [16, 30], [33, 23]]))

        def forward(self, x):
            p3 = self.c3(self.stem(x))
            p4 = self.c4(p3)
            f3 = self.fuse(torch.cat([self.up(p4), p3], 1))
            out = []
            for head, feat, stride in zip(self.heads, (f3, p4), (8, 16)):
                y = head(feat)
                b, _, h, w = y.shape
                y = y.view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
                gy, gx = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
                grid = torch.stack((gx, gy), 2).view(1, 1, h, w, 2).float()
                xy = (y[..., :2] * 2 - 0.5 + grid) * stride
                wh = (y[..., 2:4] * 2) ** 2 * self.anchor.view(1, self.na, 1, 1, 2)
                out.append(torch.cat((xy, wh, y[..., 4:]), -1).view(b, -1, self.no))
            return torch.cat(out, 1)

    return _image(Yolo(), tags=("detector",))


def b1_ssdlite_op13():
    """SSDLite-style: depthwise-separable backbone, per-scale box and class heads, each
    permuted to NHWC and flattened, concatenated across scales, softmax over classes."""
    import torch
    from torch import nn

    class SSDLite(nn.Module):
        def __init__(self, classes=4, anchors=3):
            super().__init__()
            self.s1 = nn.Sequential(
                _cbr(3, 16, 3, 2, "relu6"), _cbr(16, 16, 3, 1, "relu6", 16), _cbr(16, 24, 1, act="relu6")
            )
            self.s2 = nn.Sequential(_cbr(24, 24, 3, 2, "relu6", 24), _cbr(24, 32, 1, act="relu6"))
            self.boxes = nn.ModuleList([nn.Conv2d(24, anchors * 4, 3, 1, 1), nn.Conv2d(32, anchors * 4, 3, 1, 1)])
            self.scores = nn.ModuleList(
                [nn.Conv2d(24, anchors * classes, 3, 1, 1), nn.Conv2d(32, anchors * classes, 3, 1, 1)]
            )
            self.classes = classes

        def forward(self, x):
            f1 = self.s1(x)
            f2 = self.s2(f1)
            boxes = [b(f).permute(0, 2, 3, 1).reshape(1, -1, 4) for b, f in zip(self.boxes, (f1, f2))]
            scores = [s(f).permute(0, 2, 3, 1).reshape(1, -1, self.classes) for s, f in zip(self.scores, (f1, f2))]
            return torch.cat(boxes, 1), torch.cat(scores, 1).softmax(-1)

    return _image(SSDLite(), outputs=("boxes", "scores"), tags=("detector",))


def b1_retinaface_op13():
    """RetinaFace-style: FPN with nearest upsampling added laterally, SSH context module
    (3x3, 5x5 and 7x7 receptive fields concatenated), class/box/landmark heads."""
    import torch
    from torch import nn

    class SSH(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a = _cbr(c, c // 2, 3, act="leaky")
            self.b1, self.b2 = _cbr(c, c // 4, 3, act="leaky"), _cbr(c // 4, c // 4, 3, act="leaky")
            self.c2 = _cbr(c // 4, c // 4, 3, act="leaky")

        def forward(self, x):
            b = self.b1(x)
            return torch.relu(torch.cat([self.a(x), self.b2(b), self.c2(self.b2(b))], 1))

    class RetinaFace(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Sequential(_cbr(3, 8, 3, 2, "leaky"), _cbr(8, 16, 3, 2, "leaky"))
            self.c2 = _cbr(16, 32, 3, 2, "leaky")
            self.l1, self.l2 = _cbr(16, 16, 1, act="leaky"), _cbr(32, 16, 1, act="leaky")
            self.ssh = SSH(16)
            self.cls, self.box, self.lmk = nn.Conv2d(16, 4, 1), nn.Conv2d(16, 8, 1), nn.Conv2d(16, 20, 1)

        def forward(self, x):
            f1 = self.c1(x)
            f2 = self.c2(f1)
            p2 = self.l2(f2)
            p1 = self.l1(f1) + nn.functional.interpolate(p2, size=f1.shape[2:], mode="nearest")
            outs = []
            for p in (self.ssh(p1), self.ssh(p2)):
                outs.append((self.cls(p), self.box(p), self.lmk(p)))
            flat = [
                torch.cat([o[i].permute(0, 2, 3, 1).reshape(1, -1, k) for o in outs], 1)
                for i, k in ((0, 2), (1, 4), (2, 10))
            ]
            return flat[0].softmax(-1), flat[1], flat[2]

    return _image(RetinaFace(), outputs=("scores", "boxes", "landmarks"), tags=("detector",))


def b1_unet_op13():
    """UNet: encoder max-pools, decoder ConvTranspose upsampling and skip concatenations."""
    import torch
    from torch import nn

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2, self.e3 = _cbr(3, 8), _cbr(8, 16), _cbr(16, 32)
            self.pool = nn.MaxPool2d(2)
            self.u2, self.d2 = nn.ConvTranspose2d(32, 16, 2, 2), _cbr(32, 16)
            self.u1, self.d1 = nn.ConvTranspose2d(16, 8, 2, 2), _cbr(16, 8)
            self.head = nn.Conv2d(8, 2, 1)

        def forward(self, x):
            e1 = self.e1(x)
            e2 = self.e2(self.pool(e1))
            e3 = self.e3(self.pool(e2))
            d2 = self.d2(torch.cat([self.u2(e3), e2], 1))
            return self.head(self.d1(torch.cat([self.u1(d2), e1], 1)))

    return _image(UNet(), tags=("segmentation", "cnn"))


def b1_dbnet_op17():
    """DBNet text detector: FPN over 4 scales, each upsampled to 1/4 and concatenated,
    probability and threshold maps by ConvTranspose, and the differentiable binarization
    1/(1+exp(-k(P-T)))."""
    import torch
    from torch import nn

    class DB(nn.Module):
        def __init__(self):
            super().__init__()
            self.stages = nn.ModuleList([_cbr(3, 8, 3, 2), _cbr(8, 16, 3, 2), _cbr(16, 24, 3, 2), _cbr(24, 32, 3, 2)])
            self.lat = nn.ModuleList([nn.Conv2d(c, 16, 1) for c in (8, 16, 24, 32)])
            self.smooth = nn.ModuleList([nn.Conv2d(16, 4, 3, 1, 1) for _ in range(4)])
            self.prob = nn.Sequential(
                _cbr(16, 8), nn.ConvTranspose2d(8, 8, 2, 2), nn.ReLU(), nn.ConvTranspose2d(8, 1, 2, 2)
            )
            self.thresh = nn.Sequential(
                _cbr(16, 8), nn.ConvTranspose2d(8, 8, 2, 2), nn.ReLU(), nn.ConvTranspose2d(8, 1, 2, 2)
            )

        def forward(self, x):
            feats = []
            for stage in self.stages:
                x = stage(x)
                feats.append(x)
            lats = [lat(f) for lat, f in zip(self.lat, feats)]
            for i in range(3, 0, -1):
                lats[i - 1] = lats[i - 1] + nn.functional.interpolate(lats[i], scale_factor=2.0, mode="nearest")
            size = lats[1].shape[2:]
            fused = torch.cat(
                [
                    nn.functional.interpolate(s(l), size=size, mode="nearest")
                    for s, l in zip(self.smooth, lats[1:] + lats[:1])
                ],
                1,
            )
            p, t = torch.sigmoid(self.prob(fused)), torch.sigmoid(self.thresh(fused))
            return p, torch.reciprocal(1 + torch.exp(-50 * (p - t)))

    return _image(DB(), size=(64, 96), outputs=("prob", "binary"), opset=17, tags=("ocr", "detector"))


def b1_crnn_ctc_op13():
    """CRNN recognizer as PP-OCR's mobile one: conv stack collapsing height, squeeze,
    bidirectional LSTM x2, linear to classes, softmax (CTC); static width 96."""
    from torch import nn

    class CRNN(nn.Module):
        def __init__(self, classes=37):
            super().__init__()
            self.conv = nn.Sequential(
                _cbr(3, 16),
                nn.MaxPool2d(2),
                _cbr(16, 32),
                nn.MaxPool2d(2),
                _cbr(32, 48),
                nn.MaxPool2d((2, 1)),
                _cbr(48, 48),
                nn.MaxPool2d((4, 1)),
            )
            self.rnn = nn.LSTM(48, 32, num_layers=2, bidirectional=True, batch_first=True)
            self.fc = nn.Linear(64, classes)

        def forward(self, x):
            f = self.conv(x).squeeze(2).permute(0, 2, 1)
            return self.fc(self.rnn(f)[0]).softmax(-1)

    return _image(CRNN(), size=(32, 96), tags=("ocr",))


def b1_kws_dscnn_op13():
    """Keyword spotting DS-CNN on an MFCC map (1x49x10): depthwise-separable blocks,
    average pool, FC."""
    from torch import nn

    class DSCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(
                _cbr(1, 32, 3, 2),
                *[nn.Sequential(_cbr(32, 32, 3, 1, groups=32), _cbr(32, 32, 1)) for _ in range(3)],
                nn.AdaptiveAvgPool2d(1),
            )
            self.fc = nn.Linear(32, 12)

        def forward(self, x):
            return self.fc(self.body(x).flatten(1))

    return _image(DSCNN(), size=(49, 10), channels=1, tags=("audio", "cnn"))


def b1_vad_lstm_op17():
    """A Silero-like VAD: STFT as a strided Conv1d, magnitude, conv encoder, LSTM with
    state in and out, sigmoid probability."""
    import torch
    from torch import nn

    class VAD(nn.Module):
        def __init__(self):
            super().__init__()
            self.stft = nn.Conv1d(1, 66, 64, 32, bias=False)
            self.enc = nn.Sequential(nn.Conv1d(33, 32, 3, 1, 1), nn.ReLU(), nn.Conv1d(32, 32, 3, 2, 1), nn.ReLU())
            self.lstm = nn.LSTM(32, 32, batch_first=True)
            self.out = nn.Linear(32, 1)

        def forward(self, x, h, c):
            spec = self.stft(x.unsqueeze(1))
            real, imag = spec[:, :33], spec[:, 33:]
            mag = torch.sqrt(real * real + imag * imag)
            feat = self.enc(mag).transpose(1, 2)
            y, (hn, cn) = self.lstm(feat, (h, c))
            return torch.sigmoid(self.out(y[:, -1])), hn, cn

    x, h, c = torch.randn(1, 512), torch.zeros(1, 1, 32), torch.zeros(1, 1, 32)
    return _spec(VAD(), (x, h, c), ["x", "h", "c"], ["prob", "hn", "cn"], 17, tags=("audio", "vad"))


def b1_pose_heatmap_op13():
    """SimpleBaseline pose: strided backbone, three ConvTranspose upsamplings, 1x1 to
    keypoint heatmaps."""
    from torch import nn

    body = nn.Sequential(
        _cbr(3, 16, 3, 2),
        _cbr(16, 32, 3, 2),
        _cbr(32, 32, 3, 2),
        nn.ConvTranspose2d(32, 16, 4, 2, 1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.ConvTranspose2d(16, 16, 4, 2, 1),
        nn.BatchNorm2d(16),
        nn.ReLU(),
        nn.Conv2d(16, 17, 1),
    )
    return _image(body, size=(64, 48), tags=("cnn",))


def b1_espcn_op13():
    """ESPCN super-resolution: convs then PixelShuffle (DepthToSpace) x3."""
    from torch import nn

    body = nn.Sequential(
        nn.Conv2d(1, 16, 5, 1, 2),
        nn.Tanh(),
        nn.Conv2d(16, 8, 3, 1, 1),
        nn.Tanh(),
        nn.Conv2d(8, 9, 3, 1, 1),
        nn.PixelShuffle(3),
    )
    return _image(body, size=(24, 24), channels=1, tags=("cnn",))


def b1_shufflenet_op13():
    """ShuffleNetV2 unit: channel split, depthwise branch, concat and channel shuffle
    (reshape-transpose-reshape)."""
    import torch
    from torch import nn

    class Unit(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.branch = nn.Sequential(
                _cbr(c // 2, c // 2, 1), _cbr(c // 2, c // 2, 3, 1, groups=c // 2), _cbr(c // 2, c // 2, 1)
            )

        def forward(self, x):
            a, b = x.chunk(2, 1)
            y = torch.cat([a, self.branch(b)], 1)
            n, c, h, w = y.shape
            return y.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)

    body = nn.Sequential(
        _cbr(3, 24, 3, 2),
        nn.MaxPool2d(3, 2, 1),
        Unit(24),
        Unit(24),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(24, 10),
    )
    return _image(body)


def b1_ghostnet_op13():
    """GhostNet module: a primary conv and a cheap depthwise conv concatenated, with SE
    (hard-sigmoid gate) in the bottleneck."""
    import torch
    from torch import nn

    class Ghost(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.primary = _cbr(cin, cout // 2, 1)
            self.cheap = _cbr(cout // 2, cout // 2, 3, groups=cout // 2)

        def forward(self, x):
            y = self.primary(x)
            return torch.cat([y, self.cheap(y)], 1)

    class SE(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.fc = nn.Sequential(
                nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c // 4, 1), nn.ReLU(), nn.Conv2d(c // 4, c, 1), nn.Hardsigmoid()
            )

        def forward(self, x):
            return x * self.fc(x)

    body = nn.Sequential(
        _cbr(3, 16, 3, 2),
        Ghost(16, 32),
        SE(32),
        Ghost(32, 16),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    )
    return _image(body)


def b1_deeplab_aspp_op13():
    """DeepLabV3 head: ASPP with dilated convs and image pooling, bilinear upsample to the
    input size (align_corners=False)."""
    import torch
    from torch import nn

    class ASPP(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(_cbr(3, 16, 3, 2), _cbr(16, 32, 3, 2))
            self.branches = nn.ModuleList(
                [nn.Conv2d(32, 16, 1)] + [nn.Conv2d(32, 16, 3, padding=d, dilation=d) for d in (2, 4)]
            )
            self.pool = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(32, 16, 1))
            self.head = nn.Conv2d(64, 5, 1)

        def forward(self, x):
            f = self.body(x)
            pooled = nn.functional.interpolate(self.pool(f), size=f.shape[2:], mode="bilinear", align_corners=False)
            y = self.head(torch.cat([b(f) for b in self.branches] + [pooled], 1))
            return nn.functional.interpolate(y, size=x.shape[2:], mode="bilinear", align_corners=False)

    return _image(ASPP(), tags=("segmentation", "cnn"))


def build(name: str):
    """The Spec of judging model NAME (wide_*, enc_* or b1_*)."""
    if name.startswith("wide_"):
        import wide_corpus

        kind, arch, opset = wide_corpus.catalog()[name[len("wide_") :]]
        return wide_corpus.spec_for(kind, arch, opset)
    return globals()[name]()


BATCH1 = sorted(n for n in list(globals()) if n.startswith("b1_"))
ENCODERS = sorted(n for n in list(globals()) if n.startswith("enc_"))
