"""onnxruntime's transformer optimizer as a judge of simplify's output.

    .venv/bin/python bench/ort_fusions.py MODEL.onnx ...    fused-op families of each model

Users run simplify and then `onnxruntime.transformers.optimizer.optimize_model(path,
model_type="bert")`; what that fuses depends on the forms it finds. fusions() counts the fused
ops it leaves, by family, so two forms of one model compare family by family:

  attention  Attention, MultiHeadAttention, GroupQueryAttention
  norm       every fused normalization: LayerNormalization, SkipLayerNormalization,
             EmbedLayerNormalization, SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization
  skip       the norms that took a residual Add too: Skip(Simplified)LayerNormalization,
             EmbedLayerNormalization
  embed      EmbedLayerNormalization
  gelu       Gelu, FastGelu, BiasGelu, GemmFastGelu
  bias-gelu  BiasGelu (the bias Add fused too)

A family that grows is more of the model fused: a SkipLayerNormalization counts as a norm and
a skip, so a LayerNorm that lost its residual Add shows as one skip fewer, same norms.
A fused skip whose skip operand is a Constant node's output is a norm, not a skip: onnxruntime
refuses the same tensor as an initializer (fusion_skiplayernorm: "for add_input in add.input:
if get_initializer(...): return"), so an Add of a constant (a position embedding folded at
static shapes) fuses only where a tool left the constant as a node, one node more.
Used by tests/python/test_ort_fusions.py and bench/linear_forms.py; also importable from
bench/.venv-anchors (it needs onnx and onnxruntime only).
"""

from __future__ import annotations

import collections
import contextlib
import io
import logging
import os
import subprocess
import sys

FAMILIES = {
    "attention": ("Attention", "MultiHeadAttention", "GroupQueryAttention"),
    "norm": (
        "LayerNormalization",
        "SkipLayerNormalization",
        "EmbedLayerNormalization",
        "SimplifiedLayerNormalization",
        "SkipSimplifiedLayerNormalization",
    ),
    "skip": ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "EmbedLayerNormalization"),
    "embed": ("EmbedLayerNormalization",),
    "gelu": ("Gelu", "FastGelu", "BiasGelu", "GemmFastGelu"),
    "bias-gelu": ("BiasGelu",),
}


# The fused ops counted one by one (fused_ops, fewer_ops): a family count can hide one op
# traded for another (an EmbedLayerNormalization lost, a LayerNormalization gained).
OPS = (
    "Attention",
    "MultiHeadAttention",
    "GroupQueryAttention",
    "SkipLayerNormalization",
    "EmbedLayerNormalization",
    "LayerNormalization",
    "SkipSimplifiedLayerNormalization",
    "SimplifiedLayerNormalization",
    "RotaryEmbedding",
    "Gelu",
    "FastGelu",
    "BiasGelu",
)


def optimized(path: str, model_type: str = "bert"):
    """`path` after onnxruntime's offline transformer optimizer (model_type bert, or gpt2 for
    decoders, heads and hidden size detected from the graph, no onnxruntime graph
    optimizations): a ModelProto."""
    from onnxruntime.transformers import optimizer

    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        logging.disable(logging.WARNING)
        try:
            opt = optimizer.optimize_model(path, model_type=model_type, opt_level=0, num_heads=0, hidden_size=0)
        finally:
            logging.disable(logging.NOTSET)
    return opt.model


def fusions(path: str) -> dict[str, int]:
    """Fused ops of `path` per family (FAMILIES), and `nodes`: what the optimizer left in all."""
    model = optimized(path)
    ops = collections.Counter(n.op_type for n in model.graph.node)
    out = {family: sum(ops[op] for op in members) for family, members in FAMILIES.items()}
    constants = {o for n in model.graph.node if n.op_type == "Constant" for o in n.output}
    out["skip"] -= sum(
        1
        for n in model.graph.node
        if n.op_type in ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
        and any(i in constants for i in n.input[:2])
    )
    out["nodes"] = sum(ops.values())
    return out


def fused_ops(path: str, model_type: str = "bert") -> dict[str, int]:
    """How many of each fused op (OPS) onnxruntime's transformer optimizer makes of `path`."""
    ops = collections.Counter(n.op_type for n in optimized(path, model_type).graph.node)
    return {op: ops[op] for op in OPS}


def present_ops(path: str) -> dict[str, int]:
    """How many of each fused op (OPS) `path` holds already, before any optimizer."""
    import onnx

    ops = collections.Counter(n.op_type for n in onnx.load(path, load_external_data=False).graph.node)
    return {op: ops[op] for op in OPS}


def fused_by_onnxruntime(path: str, raw: str, model_type: str = "bert") -> dict[str, int]:
    """fused_ops(path) less the fused ops a tool wrote itself (those `path` holds beyond the raw
    export's): onnxsim writes com.microsoft Attention of its own on some ViTs, which says nothing
    of the forms it leaves for onnxruntime's optimizer."""
    after, mine, theirs = fused_ops(path, model_type), present_ops(path), present_ops(raw)
    return {op: after[op] - max(0, mine[op] - theirs[op]) for op in OPS}


# What each fused op counts with in fewer_ops: the fused ops that contain it (a
# SkipLayerNormalization is a LayerNormalization that took the residual Add too, a BiasGelu a
# Gelu that took the bias Add, an Attention a MultiHeadAttention with the Q/K/V projections).
CONTAINED_IN = {
    "Attention": ("Attention",),
    "MultiHeadAttention": ("MultiHeadAttention", "Attention", "GroupQueryAttention"),
    "GroupQueryAttention": ("GroupQueryAttention",),
    "SkipSimplifiedLayerNormalization": ("SkipSimplifiedLayerNormalization",),
    "SimplifiedLayerNormalization": ("SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization"),
    "RotaryEmbedding": ("RotaryEmbedding",),
    "EmbedLayerNormalization": ("EmbedLayerNormalization",),
    "SkipLayerNormalization": ("SkipLayerNormalization", "EmbedLayerNormalization"),
    "LayerNormalization": ("LayerNormalization", "SkipLayerNormalization", "EmbedLayerNormalization"),
    "BiasGelu": ("BiasGelu",),
    "FastGelu": ("FastGelu",),
    "Gelu": ("Gelu", "BiasGelu", "FastGelu"),
}


def fewer_ops(a: dict[str, int], b: dict[str, int]) -> list[str]:
    """The fused ops (OPS) `a` has fewer of than `b`, each counted with the fused ops that
    contain it (CONTAINED_IN): a Gelu fused with its bias is not a Gelu lost."""

    def count(d, op):
        return sum(d.get(o, 0) for o in CONTAINED_IN[op])

    return [op for op in OPS if count(a, op) < count(b, op)]


def fewer(a: dict[str, int], b: dict[str, int]) -> list[str]:
    """The families `a` fuses fewer of than `b`."""
    return [f for f in FAMILIES if a.get(f, 0) < b.get(f, 0)]


def onnxsim_python() -> str | None:
    """A Python that imports onnxsim: this one, else bench/.venv-anchors' (bench/simplify_bench.py
    makes it), else ~/.cache/onnxsurgeon/venv-anchors'. None when there is none."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [
        sys.executable,
        os.path.join(here, ".venv-anchors", "bin", "python"),
        os.path.expanduser("~/.cache/onnxsurgeon/venv-anchors/bin/python"),
    ]
    for py in candidates:
        if os.path.exists(py):
            proc = subprocess.run([py, "-c", "import onnxsim"], capture_output=True)
            if proc.returncode == 0:
                return py
    return None


def run_onnxsim(python: str, src: str, dst: str, timeout: float = 600) -> None:
    """onnxsim.simplify(src) written to dst, in `python`'s environment; raises on failure."""
    code = (
        "import sys, onnx, onnxsim\n"
        "m, ok = onnxsim.simplify(onnx.load(sys.argv[1]))\n"
        "assert ok, 'onnxsim check failed'\n"
        "onnx.save(m, sys.argv[2])\n"
    )
    proc = subprocess.run([python, "-c", code, src, dst], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"onnxsim {src}: {proc.stderr.strip()[-300:]}")


def main() -> int:
    for path in sys.argv[1:]:
        f = fusions(path)
        print(f"{os.path.basename(path)}: " + " ".join(f"{k}={v}" for k, v in f.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
