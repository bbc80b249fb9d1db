"""Dev exports whose residual Add before a LayerNormalization adds a constant that the export
computes at run time, for the onnxruntime transformer optimizer check
(tests/python/test_ort_fusions.py):

    .venv/bin/python bench/skip_form_exports.py OUT_DIR [NAME ...]    export them (all by default)

transformers models with small random configs, batch 1, exported by torch.onnx.export
(TorchScript) at opset 17: DINOv2 and YOLOS interpolate their position embeddings to the
image size (static here, so the interpolation folds), DETR's first decoder self-attention
reads only the query embeddings (it folds whole). onnxruntime's SkipLayerNormalization fusion
refuses an initializer operand, so simplify keeps such a folded operand as a Constant node
(passes/fold/skip_operand.h). Each writes NAME.onnx and NAME.inputs.npz.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

# name: (image size, dynamic batch)
EXPORTS = {
    "dinov2_skip_op17": (56, False),
    "dinov2_skip_dynbatch_op17": (56, True),
    "yolos_skip_op17": (48, False),
    "detr_skip_op17": (64, False),
}


def _model(name: str):
    import transformers as t

    if name.startswith("dinov2"):
        cfg = t.Dinov2Config(
            hidden_size=48,
            num_hidden_layers=3,
            num_attention_heads=3,
            intermediate_size=96,
            image_size=56,
            patch_size=14,
        )
        return t.Dinov2Model(cfg), ["last_hidden_state"]
    if name.startswith("yolos"):
        cfg = t.YolosConfig(
            hidden_size=48,
            num_hidden_layers=3,
            num_attention_heads=3,
            intermediate_size=96,
            image_size=[48, 48],
            patch_size=12,
            num_detection_tokens=6,
            num_labels=3,
        )
        return t.YolosForObjectDetection(cfg), ["logits", "pred_boxes"]
    backbone = t.ResNetConfig(
        embedding_size=16,
        hidden_sizes=[16, 24, 32, 40],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=["stage4"],
    )
    cfg = t.DetrConfig(
        use_timm_backbone=False,
        backbone_config=backbone,
        use_pretrained_backbone=False,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        num_queries=7,
        num_labels=5,
    )
    return t.DetrForObjectDetection(cfg), ["logits", "pred_boxes"]


def export(name: str, out: Path) -> None:
    import numpy as np
    import torch

    size, dynamic = EXPORTS[name]
    torch.manual_seed(0)
    model, outputs = _model(name)
    model.eval()

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, pixel_values):
            r = self.model(pixel_values=pixel_values, return_dict=True)
            return tuple(r[o] for o in outputs)

    pixels = np.random.default_rng(0).standard_normal((1, 3, size, size)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            Wrap(),
            (torch.from_numpy(pixels),),
            str(out / f"{name}.onnx"),
            input_names=["pixel_values"],
            output_names=outputs,
            opset_version=17,
            dynamo=False,
            dynamic_axes={"pixel_values": {0: "batch"}} if dynamic else None,
        )
    np.savez(out / f"{name}.inputs.npz", pixel_values=pixels)


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or list(EXPORTS):
        export(name, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
