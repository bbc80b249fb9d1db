"""The dev-BERT export variants, for the onnxruntime
transformer optimizer check (tests/python/test_ort_fusions.py):

    .venv/bin/python bench/bert_variants.py OUT_DIR [NAME ...]    export them (all by default)

A transformers BertModel with a small random config (2 layers, 2 heads of 16, hidden 32),
exported with torch.onnx.export's default settings but for the ones a variant names: the
exporter (TorchScript or dynamo), the opset, dynamic batch/sequence axes or static shapes,
the attention_mask and token_type_ids inputs, and the attention implementation (torch's
scaled_dot_product_attention, transformers' default, or "eager"). Each writes NAME.onnx and
NAME.inputs.npz (inputs at batch 2, sequence 8, the second sequence right-padded).

These are the forms the corpus's bert_op14/bert_dynamo18 (eager, with a mask) did not have:
the SDPA export scales q and k by sqrt(1/sqrt(d)) each before the score MatMul, and without an
attention_mask input the mask is built from ones at run time; simplify lost every fused
Attention (and the EmbedLayerNormalization that needs one) on both before this was tested.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

# name: (exporter, opset, dynamic axes, attention_mask input, token_type_ids input, attention)
VARIANTS = {
    "bert_sdpa_op14": ("torchscript", 14, True, True, False, "sdpa"),
    "bert_sdpa_static_op14": ("torchscript", 14, False, True, False, "sdpa"),
    "bert_sdpa_nomask_tt_op17": ("torchscript", 17, True, False, True, "sdpa"),
    "bert_eager_nomask_op14": ("torchscript", 14, True, False, False, "eager"),
    "bert_eager_nomask_tt_op17": ("torchscript", 17, True, False, True, "eager"),
}

BATCH, SEQ, VOCAB = 2, 8, 99


def export(name: str, out: Path) -> None:
    import numpy as np
    import torch
    import transformers
    from torch import nn
    from transformers import BertConfig, BertModel

    transformers.logging.set_verbosity_error()
    exporter, opset, dynamic, mask, token_types, attention = VARIANTS[name]

    class Wrapper(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, *rest):
            rest = list(rest)
            kw = {}
            if mask:
                kw["attention_mask"] = rest.pop(0)
            if token_types:
                kw["token_type_ids"] = rest.pop(0)
            return self.model(input_ids=input_ids, return_dict=False, **kw)[0]

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_act="gelu",
        attn_implementation=attention,
    )
    model = Wrapper(BertModel(config, add_pooling_layer=False).eval())
    inputs = {"input_ids": torch.randint(0, VOCAB, (BATCH, SEQ))}
    if mask:
        m = torch.ones(BATCH, SEQ, dtype=torch.long)
        m[1, SEQ - 3 :] = 0
        inputs["attention_mask"] = m
    if token_types:
        t = torch.zeros(BATCH, SEQ, dtype=torch.long)
        t[:, SEQ // 2 :] = 1
        inputs["token_type_ids"] = t
    names = list(inputs)
    kw = dict(opset_version=opset, input_names=names, output_names=["last_hidden_state"], dynamo=exporter == "dynamo")
    if dynamic and exporter == "dynamo":
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq", max=64)
        kw["dynamic_shapes"] = tuple({0: batch, 1: seq} for _ in names)
    elif dynamic:
        kw["dynamic_axes"] = {n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs.values()), str(out / f"{name}.onnx"), **kw)
    np.savez(out / f"{name}.inputs.npz", **{k: v.numpy() for k, v in inputs.items()})


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or list(VARIANTS):
        export(name, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
