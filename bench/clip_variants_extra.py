"""The CLIP export variants bench/clip_variants.py does not make, for the same question
(does `--pass simplify` hold on CLIP text towers users export?):

    OPTIMUM_PY bench/clip_variants_extra.py optimum OUT_DIR [--onnxsurgeon BIN]
    PY bench/clip_variants_extra.py clipmodel OUT_DIR [--onnxsurgeon BIN]

optimum (OPTIMUM_PY: the optimum exporter venv, scripts/exporter-venv.sh optimum): the text
towers as optimum exports Stable Diffusion's (CLIPTextOnnxConfig) and SDXL's second one
(CLIPTextWithProjectionOnnxConfig), with and without every hidden state as an output, at
three sizes (hidden x heads, projection: 32x2 p16, 64x4 p64, 64x8 p32) and opsets 14 and 17.
optimum declares text_embeds [batch_size, sequence_length]; it computes [batch, projection].

clipmodel (PY: any venv with torch and transformers): the whole CLIPModel (text and vision
towers) exported as transformers.onnx's CLIPOnnxConfig did (input_ids, pixel_values and
attention_mask with dynamic axes, the four output embeddings and logits), opsets 14 and 17.
Its vision input has dynamic channels and sizes: --check needs --input-shapes, which is given.

With --onnxsurgeon each is run through `BIN --pass simplify --check` and one line per model
says what happened.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
from pathlib import Path

SIZES = ((32, 2, 16), (64, 4, 64), (64, 8, 32))


def _config(hidden: int, heads: int, projection: int, hidden_states: bool):
    import transformers

    return transformers.CLIPTextConfig(
        vocab_size=1000,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=2,
        num_attention_heads=heads,
        max_position_embeddings=77,
        projection_dim=projection,
        eos_token_id=2,
        output_hidden_states=hidden_states,
    )


def optimum_variants(out: Path):
    """Yields (path, extra onnxsurgeon args) for each optimum export."""
    import optimum.exporters.onnx.model_configs as configs
    import torch
    import transformers
    from optimum.exporters.onnx import export

    kinds = {
        "text": (transformers.CLIPTextModel, configs.CLIPTextOnnxConfig),
        "proj": (transformers.CLIPTextModelWithProjection, configs.CLIPTextWithProjectionOnnxConfig),
    }
    for kind, hidden_states, size, opset in itertools.product(kinds, (False, True), SIZES, (14, 17)):
        torch.manual_seed(0)
        model_class, onnx_config_class = kinds[kind]
        model = model_class(_config(*size, hidden_states)).eval()
        hidden, heads, projection = size
        name = f"opt_{kind}_{'hs' if hidden_states else 'nohs'}_h{hidden}x{heads}p{projection}_op{opset}"
        path = out / f"{name}.onnx"
        export(model=model, config=onnx_config_class(model.config, task="feature-extraction"), output=path, opset=opset)
        yield path, []


def clipmodel_variants(out: Path):
    import torch
    import transformers
    from torch import nn

    class Outputs(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, pixel_values, attention_mask):
            o = self.model(input_ids=input_ids, pixel_values=pixel_values, attention_mask=attention_mask)
            return o.logits_per_image, o.logits_per_text, o.text_embeds, o.image_embeds

    for opset, hidden, heads in ((14, 32, 2), (17, 64, 4)):
        torch.manual_seed(0)
        text = _config(hidden, heads, 16, False)
        vision = transformers.CLIPVisionConfig(
            hidden_size=hidden,
            intermediate_size=2 * hidden,
            num_hidden_layers=2,
            num_attention_heads=heads,
            image_size=32,
            patch_size=8,
        )
        config = transformers.CLIPConfig(text_config=text.to_dict(), vision_config=vision.to_dict(), projection_dim=16)
        model = Outputs(transformers.CLIPModel(config).eval())
        ids = torch.randint(3, 1000, (2, 8))
        ids[:, -1] = 2
        args = (ids, torch.randn(2, 3, 32, 32), torch.ones(2, 8, dtype=torch.long))
        batch = {0: "batch"}
        axes = {
            "input_ids": {0: "batch", 1: "sequence"},
            "pixel_values": {0: "batch", 1: "num_channels", 2: "height", 3: "width"},
            "attention_mask": {0: "batch", 1: "sequence"},
            **{n: batch for n in ("logits_per_image", "logits_per_text", "text_embeds", "image_embeds")},
        }
        path = out / f"clipmodel_op{opset}_tf{transformers.__version__}.onnx"
        torch.onnx.export(
            model,
            args,
            str(path),
            input_names=list(axes)[:3],
            output_names=list(axes)[3:],
            dynamic_axes=axes,
            opset_version=opset,
            do_constant_folding=True,
            dynamo=False,
        )
        yield path, ["--input-shapes", "input_ids:2,8", "pixel_values:2,3,32,32", "attention_mask:2,8"]


def main() -> int:
    import warnings

    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("optimum", "clipmodel"))
    parser.add_argument("out", type=Path)
    parser.add_argument("--onnxsurgeon", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    warnings.filterwarnings("ignore")
    failed = 0
    make = optimum_variants if args.mode == "optimum" else clipmodel_variants
    for path, extra in make(args.out):
        status = "exported"
        if args.onnxsurgeon:
            simplified = path.with_name(path.stem + ".simplified.onnx")
            cmd = [
                str(args.onnxsurgeon),
                "--pass",
                "simplify",
                "--check",
                "-q",
                *extra,
                str(path),
                "-o",
                str(simplified),
            ]
            run = subprocess.run(cmd, capture_output=True, text=True)
            status = f"simplify exit {run.returncode}: {(run.stderr.strip() or 'ok').splitlines()[0][:300]}"
            failed += run.returncode != 0
        print(f"{path.stem}\t{status}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
