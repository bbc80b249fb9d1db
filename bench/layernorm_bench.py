#!/usr/bin/env python3
"""LayerNorm fusion on a 24-layer transformer export: onnxsurgeon beside onnxruntime's
transformers optimizer (FusionLayerNormalization) and the onnxscript rewriter
(fuse_layer_normalization), all on the same file.

The model: a transformers BertModel (24 layers, hidden 256, 4 heads, random weights from
a config; no hub download) whose nn.LayerNorm modules are replaced by the hand-written
LayerNorm people write and exporters decompose -- mean, Sub, Pow(2), mean, Add(eps),
Sqrt, Div, Mul, Add -- exported by torch's TorchScript exporter at opset 17. 49
LayerNorms (24 x 2 + embeddings).

Each tool runs file -> file (load, fuse, save), best of --repeat runs, in its own
subprocess for peak memory. Reported: wall time, LayerNormalization nodes after, and the
max abs difference of the fused model's output from the original's in onnxruntime.

    .venv/bin/python bench/layernorm_bench.py [--repeat 3] [--write-docs]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, ".data", "layernorm")
MODEL = os.path.join(DATA, "bert24_handwritten_ln_op17.onnx")
CLI = os.path.join(ROOT, "build", "onnxsurgeon")
LAYERS, HIDDEN, HEADS, SEQ = 24, 256, 4, 64


def make_model() -> None:
    if os.path.exists(MODEL):
        return
    import torch
    from transformers import BertConfig, BertModel

    class HandWrittenLayerNorm(torch.nn.Module):
        def __init__(self, ln: torch.nn.LayerNorm):
            super().__init__()
            self.weight, self.bias, self.eps = ln.weight, ln.bias, ln.eps

        def forward(self, x):
            mean = x.mean(-1, keepdim=True)
            var = (x - mean).pow(2).mean(-1, keepdim=True)
            return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias

    def replace(module: torch.nn.Module) -> None:
        for name, child in module.named_children():
            if isinstance(child, torch.nn.LayerNorm):
                setattr(module, name, HandWrittenLayerNorm(child))
            else:
                replace(child)

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=1000,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=4 * HIDDEN,
        max_position_embeddings=128,
    )
    model = BertModel(config).eval()
    replace(model)
    ids = torch.randint(0, 1000, (1, SEQ))
    os.makedirs(DATA, exist_ok=True)
    torch.onnx.export(
        model,
        (ids,),
        MODEL,
        input_names=["input_ids"],
        output_names=["last_hidden_state", "pooler"],
        opset_version=17,
        dynamo=False,
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}},
    )


# Each tool: a snippet run in a fresh interpreter with IN and OUT defined.
TOOLS = {
    "onnxsurgeon (CLI)": None,
    "onnxruntime transformers optimizer": """
import onnx
from onnxruntime.transformers.onnx_model import OnnxModel
from onnxruntime.transformers.fusion_layernorm import FusionLayerNormalization
m = OnnxModel(onnx.load(IN))
FusionLayerNormalization(m).apply()
m.prune_graph()
onnx.save(m.model, OUT)
""",
    "onnxscript rewriter": """
import onnx_ir as ir
from onnxscript.rewriter.rules.fusion._layer_norm import fuse_layer_normalization
m = ir.load(IN)
fuse_layer_normalization(m)
ir.save(m, OUT)
""",
}


def run_tool(name: str, out: str) -> tuple[float, int]:
    """Wall seconds (whole process minus interpreter start-up for Python tools) and peak RSS KiB."""
    if TOOLS[name] is None:
        cmd = ["/usr/bin/time", "-f", "%M", CLI, "--pass", "fix-layernorm", MODEL, "-o", out]
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return time.perf_counter() - start, int(proc.stderr.strip().splitlines()[-1])
    code = (
        f"IN, OUT = {MODEL!r}, {out!r}\nimport time\n_t = time.perf_counter()\n"
        + TOOLS[name]
        + "\nprint('SECONDS', time.perf_counter() - _t)\n"
    )
    proc = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-c", code], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{name} failed:\n{proc.stderr[-2000:]}")
    seconds = float(re.search(r"SECONDS (\S+)", proc.stdout).group(1))
    return seconds, int(proc.stderr.strip().splitlines()[-1])


def max_error(original: str, fused: str) -> float:
    import onnxruntime as ort

    ids = np.random.default_rng(0).integers(0, 1000, size=(2, SEQ), dtype=np.int64)
    a = ort.InferenceSession(original, providers=["CPUExecutionProvider"]).run(None, {"input_ids": ids})
    b = ort.InferenceSession(fused, providers=["CPUExecutionProvider"]).run(None, {"input_ids": ids})
    return max(float(np.abs(x - y).max()) for x, y in zip(a, b))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write-docs", action="store_true")
    args = ap.parse_args()
    make_model()
    import onnx

    size_mb = os.path.getsize(MODEL) / 1e6
    nodes = len(onnx.load(MODEL).graph.node)
    rows = []
    for name in TOOLS:
        out = os.path.join(DATA, re.sub(r"\W+", "_", name) + ".onnx")
        runs = [run_tool(name, out) for _ in range(args.repeat)]
        seconds = min(r[0] for r in runs)
        rss = max(r[1] for r in runs)
        fused = onnx.load(out)
        ln = sum(1 for n in fused.graph.node if n.op_type == "LayerNormalization")
        rows.append((name, seconds, rss / 1024, ln, len(fused.graph.node), max_error(MODEL, out)))
    table = [
        "| tool | wall time (s) | peak RSS (MB) | LayerNormalization after | nodes after | max abs error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, s, mb, ln, n, err in rows:
        table.append(f"| {name} | {s:.3f} | {mb:.0f} | {ln} | {n} | {err:.1e} |")
    header = (
        f"Model: BertModel, {LAYERS} layers, hidden {HIDDEN}, hand-written LayerNorms (49), TorchScript "
        f"export at opset 17: {nodes} nodes, {size_mb:.0f} MB. Best of {args.repeat}."
    )
    text = header + "\n\n" + "\n".join(table)
    print(text)
    if args.write_docs:
        docs = os.path.join(ROOT, "docs", "benchmarks.md")
        content = open(docs).read()
        begin, end = "<!-- layernorm-bench:begin -->", "<!-- layernorm-bench:end -->"
        block = f"{begin}\n    .venv/bin/python bench/layernorm_bench.py --write-docs\n\n{text}\n{end}"
        if begin in content:
            content = re.sub(re.escape(begin) + ".*?" + re.escape(end), lambda _: block, content, flags=re.S)
        else:
            content += "\n## LayerNorm fusion: fix-layernorm beside onnxruntime and onnxscript\n\n" + block + "\n"
        open(docs, "w").write(content)
    return 0


if __name__ == "__main__":
    sys.exit(main())
