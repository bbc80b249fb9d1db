"""Image backbones, classifiers, segmenters and detectors from transformers, small random
configs, batch 1 at a fixed resolution."""

from __future__ import annotations

from common import image, picked

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def _logits(model_cls, cfg, opset, size=32):
    cfg.num_labels = 10
    return picked(model_cls(cfg), "logits"), image(size), ["logits"], opset


def _deit(opset):
    from transformers import DeiTConfig, DeiTForImageClassification

    return _logits(DeiTForImageClassification, DeiTConfig(image_size=32, patch_size=8, **SMALL), opset)


def _swin(opset):
    from transformers import SwinConfig, SwinForImageClassification

    cfg = SwinConfig(image_size=32, patch_size=2, embed_dim=16, depths=[1, 1], num_heads=[2, 4], window_size=4)
    return _logits(SwinForImageClassification, cfg, opset)


def _convnextv2(opset):
    from transformers import ConvNextV2Config, ConvNextV2ForImageClassification

    cfg = ConvNextV2Config(num_stages=2, hidden_sizes=[16, 32], depths=[1, 1])
    return _logits(ConvNextV2ForImageClassification, cfg, opset)


def _mobilevit(opset):
    from transformers import MobileViTConfig, MobileViTForImageClassification

    cfg = MobileViTConfig(
        image_size=64,
        hidden_sizes=[24, 32, 40],
        neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
        num_attention_heads=2,
    )
    return _logits(MobileViTForImageClassification, cfg, opset, size=64)


def _segformer(opset):
    from transformers import SegformerConfig, SegformerForSemanticSegmentation

    cfg = SegformerConfig(
        num_encoder_blocks=2,
        depths=[1, 1],
        sr_ratios=[2, 1],
        hidden_sizes=[16, 32],
        num_attention_heads=[1, 2],
        decoder_hidden_size=32,
        num_labels=4,
    )
    model = SegformerForSemanticSegmentation(cfg)
    return picked(model, "logits"), image(64), ["logits"], opset


def _yolos(opset):
    from transformers import YolosConfig, YolosForObjectDetection

    cfg = YolosConfig(image_size=[32, 32], patch_size=8, num_detection_tokens=5, num_labels=4, **SMALL)
    return picked(YolosForObjectDetection(cfg), "pred_boxes"), image(32), ["pred_boxes"], opset


def _mobilenet_v2(opset):
    from transformers import MobileNetV2Config, MobileNetV2ForImageClassification

    cfg = MobileNetV2Config(depth_multiplier=0.35, image_size=64, finegrained_output=False)
    return _logits(MobileNetV2ForImageClassification, cfg, opset, size=64)


def _mobilenet_v1(opset):
    from transformers import MobileNetV1Config, MobileNetV1ForImageClassification

    cfg = MobileNetV1Config(depth_multiplier=0.25, image_size=64)
    return _logits(MobileNetV1ForImageClassification, cfg, opset, size=64)


def _efficientnet(opset):
    from transformers import EfficientNetConfig, EfficientNetForImageClassification

    cfg = EfficientNetConfig(
        image_size=64, width_coefficient=0.25, depth_coefficient=0.25, hidden_dim=320, depthwise_padding=[]
    )
    return _logits(EfficientNetForImageClassification, cfg, opset, size=64)


def _regnet(opset):
    from transformers import RegNetConfig, RegNetForImageClassification

    cfg = RegNetConfig(embedding_size=16, hidden_sizes=[16, 32, 48], depths=[1, 1, 1], groups_width=8)
    return _logits(RegNetForImageClassification, cfg, opset)


def _resnet(opset):
    from transformers import ResNetConfig, ResNetForImageClassification

    cfg = ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 48, 64], depths=[1, 1, 1, 1], layer_type="basic")
    return _logits(ResNetForImageClassification, cfg, opset)


MODELS = {
    "deit_op17_b1": lambda: _deit(17),
    "swin_op17_b1": lambda: _swin(17),
    "convnextv2_op17_b1": lambda: _convnextv2(17),
    "mobilevit_op14_b1": lambda: _mobilevit(14),
    "segformer_op14_b1": lambda: _segformer(14),
    "yolos_op17_b1": lambda: _yolos(17),
    "mobilenet_v2_op13_b1": lambda: _mobilenet_v2(13),
    "mobilenet_v1_op11_b1": lambda: _mobilenet_v1(11),
    "efficientnet_op13_b1": lambda: _efficientnet(13),
    "regnet_op13_b1": lambda: _regnet(13),
    "resnet_op13_b1": lambda: _resnet(13),
}
