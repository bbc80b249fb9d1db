#!/usr/bin/env python3
"""A ~330 MB real transformer for bench/python_path.py: GPT-2 from transformers with 6
layers at GPT-2 small width (n_embd 768, vocab 50257), random weights from a fixed seed,
exported by torch.onnx (TorchScript exporter, opset 17) with weights inline. Unlike
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
    config = transformers.GPT2Config(n_layer=args.layers, n_embd=768, n_head=12, vocab_size=50257,
                                     n_positions=1024, use_cache=False)
    model = transformers.GPT2LMHeadModel(config).eval()
    model.config.return_dict = False
    ids = torch.randint(0, config.vocab_size, (1, 16))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    tmp = OUT + ".part"
    with torch.no_grad():
        torch.onnx.export(model, (ids,), tmp, input_names=["input_ids"], output_names=["logits"],
                          dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}},
                          opset_version=17, dynamo=False)
    import onnx

    m = onnx.load(tmp)  # one file: weights inline, as a user's ModelProto holds them
    onnx.save(m, tmp)
    os.replace(tmp, OUT)
    print(f"{OUT}: {os.path.getsize(OUT) / 1e6:.0f} MB, {len(m.graph.node)} nodes", file=sys.stderr)
    print(OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
