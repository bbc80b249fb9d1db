#!/usr/bin/env python3
"""A ~480 MB real transformer for bench/python_path.py: GPT-2 from transformers with 6
layers at GPT-2 small width (n_embd 768, vocab 50257), random weights from a fixed seed,
exported by torch.onnx (TorchScript exporter, opset 17; the tied embedding becomes a second,
transposed copy for the LM head: 517 nodes) with weights inline. Unlike
bench/make_large_model.py's MLP (weights and almost no nodes), simplify has real work on
it: shape subgraphs to fold, Constants, duplicated subexpressions.

  .venv/bin/python bench/make_transformer_model.py [--force]  ->  bench/.data/gpt2_6l.onnx
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, ".data", "gpt2_6l.onnx")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--layers", type=int, default=6)
    args = ap.parse_args()
    if os.path.exists(OUT) and not args.force:
        print(OUT)
        return 0
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=args.layers,
        n_embd=768,
        n_head=12,
        vocab_size=50257,
        n_positions=1024,
        use_cache=False,
        attn_implementation="eager",
    )
    model = transformers.GPT2LMHeadModel(config).eval()

    class Logits(torch.nn.Module):  # the tuple output of a causal LM, reduced to its logits
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            return self.lm(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]

    ids = torch.randint(0, config.vocab_size, (1, 16))
    mask = torch.ones(1, 16, dtype=torch.long)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".part"
    # transformers >= 4.53 builds causal masks with torch.vmap, which the tracer rejects
    # ("unordered_map::at"); its older implementation traces (as tests/models/corpus_hf.py).
    import transformers.masking_utils as masking

    masking.sdpa_mask = masking.sdpa_mask_older_torch
    with torch.no_grad():
        torch.onnx.export(
            Logits(model),
            (ids, mask),
            tmp,
            input_names=["input_ids", "attention_mask"],
            output_names=["logits"],
            opset_version=17,
            dynamo=False,
        )
    import onnx

    m = onnx.load(tmp)  # one file: weights inline, as a user's ModelProto holds them
    onnx.save(m, tmp)
    os.replace(tmp, OUT)
    print(f"{OUT}: {os.path.getsize(OUT) / 1e6:.0f} MB, {len(m.graph.node)} nodes", file=sys.stderr)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
