"""simplify keeps what onnxruntime's transformer optimizer fuses.

Users run simplify, then `onnxruntime.transformers.optimizer.optimize_model(path,
model_type="bert")`. For every transformer of the corpus (tag "transformer"), the fused ops
that optimizer makes of simplify's output, family by family (bench/ort_fusions.py: attention,
norm, skip, embed, gelu, bias-gelu), are at least those it makes of the raw export and of
onnx-simplifier's output, on the export as it is (dynamic axes). And on the export made static
at the corpus inputs' shapes (set-input-shape, then simplify: where flatten-region runs Linear
layers as Gemms on 2-D views and must keep the attention and normalization forms whole),
at least what onnxsim makes of the same static model. Not against the raw static model:
with static shapes the position-embedding lookup folds to a constant (onnxsim folds it too),
and onnxruntime's EmbedLayerNormalization fusion needs the lookup (bert_op14: embed 1 -> 0).

onnxsim is the anchor installed from PyPI into bench/.venv-anchors (bench/simplify_bench.py
makes it from bench/requirements-anchors.txt; ~/.cache/onnxsurgeon/venv-anchors also counts);
without it the onnxsim comparison is skipped, saying so, and the raw one still runs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("ort_fusions", REPO / "bench" / "ort_fusions.py")
ort_fusions = importlib.util.module_from_spec(_spec)
sys.modules["ort_fusions"] = ort_fusions
_spec.loader.exec_module(ort_fusions)

pytest.importorskip("onnxruntime.transformers.optimizer")


def _transformer(corpus_model):
    if "transformer" not in corpus_model.tags:
        pytest.skip("not a transformer")
    if not corpus_model.runnable:
        pytest.skip("not runnable in onnxruntime")


@pytest.fixture(scope="session")
def onnxsim_python():
    return ort_fusions.onnxsim_python()


def _static_pipeline(corpus_model) -> str | None:
    shapes = ";".join(f"{k}:{'x'.join(map(str, v.shape))}" for k, v in corpus_model.inputs.items() if v.ndim)
    return f"set-input-shape(shapes={shapes}),simplify" if shapes else None


def test_simplify_fuses_at_least_raw(corpus_model, run_cli, tmp_path):
    _transformer(corpus_model)
    out = tmp_path / "simplified.onnx"
    run_cli("-q", "--pass", "simplify", corpus_model.path, "-o", out)
    raw = ort_fusions.fusions(str(corpus_model.path))
    ours = ort_fusions.fusions(str(out))
    lost = ort_fusions.fewer(ours, raw)
    assert not lost, f"simplify fuses fewer {lost} than the raw export: {ours} against {raw}"


@pytest.mark.parametrize("form", ["dynamic", "static"])
def test_simplify_fuses_at_least_onnxsim(corpus_model, form, run_cli, onnxsim_python, tmp_path):
    _transformer(corpus_model)
    if onnxsim_python is None:
        pytest.skip("onnxsim is not installed (bench/.venv-anchors); only the raw comparison ran")
    pipeline = "simplify" if form == "dynamic" else _static_pipeline(corpus_model)
    if pipeline is None:
        pytest.skip("no input has dims to fix")
    src = corpus_model.path
    if form == "static":  # onnxsim gets the same static model simplify starts from
        src = tmp_path / "static.onnx"
        run_cli("-q", "--pass", pipeline.split(",simplify")[0], corpus_model.path, "-o", src)
    ours_path, theirs_path = tmp_path / "simplified.onnx", tmp_path / "onnxsim.onnx"
    run_cli("-q", "--pass", "simplify", src, "-o", ours_path)
    ort_fusions.run_onnxsim(onnxsim_python, str(src), str(theirs_path))
    ours = ort_fusions.fusions(str(ours_path))
    theirs = ort_fusions.fusions(str(theirs_path))
    lost = ort_fusions.fewer(ours, theirs)
    assert not lost, f"{form} simplify fuses fewer {lost} than onnxsim: {ours} against {theirs}"


# ---- the dev-BERT export variants (bench/bert_variants.py) -----------------------
# The corpus's BERTs use eager attention with an attention_mask input. Exported with torch's
# SDPA attention (q and k each scaled by sqrt(1/sqrt(d)) before the score MatMul) or without an
# attention_mask (the mask built from ones at run time), simplify's output lost every fused
# Attention and EmbedLayerNormalization. Each variant: fused op by op (ort_fusions.OPS) after
# simplify >= on the raw export and >= after onnxsim, and simplify's output computes what the
# raw export does in onnxruntime.
_variants_spec = importlib.util.spec_from_file_location("bert_variants", REPO / "bench" / "bert_variants.py")
bert_variants = importlib.util.module_from_spec(_variants_spec)
_variants_spec.loader.exec_module(bert_variants)


@pytest.fixture(scope="session")
def bert_variant_dir(tmp_path_factory):
    """The variants exported once per session, in a subprocess (torch stays out of this one)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("bert_variants")
    import subprocess

    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bert_variants.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0:
        pytest.fail(f"exporting the BERT variants failed:\n{proc.stderr[-2000:]}", pytrace=False)
    return out


@pytest.mark.parametrize("variant", list(bert_variants.VARIANTS))
def test_bert_variant_fuses_at_least_raw_and_onnxsim(variant, bert_variant_dir, run_cli, onnxsim_python, tmp_path):
    import numpy as np
    import onnxruntime as ort

    raw = bert_variant_dir / f"{variant}.onnx"
    ours_path = tmp_path / "simplified.onnx"
    run_cli("-q", "--pass", "simplify", raw, "-o", ours_path)
    ours = ort_fusions.fused_ops(str(ours_path))
    theirs_raw = ort_fusions.fused_ops(str(raw))
    lost = ort_fusions.fewer_ops(ours, theirs_raw)
    assert not lost, f"simplify fuses fewer {lost} than the raw export: {ours} against {theirs_raw}"
    assert ours["Attention"] + ours["MultiHeadAttention"] > 0, f"no attention fused: {ours}"
    feeds = dict(np.load(bert_variant_dir / f"{variant}.inputs.npz"))
    want = ort.InferenceSession(str(raw), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(str(ours_path), providers=["CPUExecutionProvider"]).run(None, feeds)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    if onnxsim_python is None:
        pytest.skip("onnxsim is not installed (bench/.venv-anchors); only the raw comparison ran")
    theirs_path = tmp_path / "onnxsim.onnx"
    ort_fusions.run_onnxsim(onnxsim_python, str(raw), str(theirs_path))
    theirs = ort_fusions.fused_ops(str(theirs_path))
    lost = ort_fusions.fewer_ops(ours, theirs)
    assert not lost, f"simplify fuses fewer {lost} than onnxsim: {ours} against {theirs}"


# ---- residual Adds of a constant the export computes (bench/skip_form_exports.py) ----------
# DINOv2 and YOLOS interpolate their position embeddings, DETR's first decoder self-attention
# reads only the query embeddings: at static sizes both fold, and the Add before the next
# LayerNormalization adds a constant. onnxruntime's SkipLayerNormalization fusion refuses an
# initializer operand, so simplify writes such a folded operand as a Constant node (one node)
# and keeps it so. Pinned: what onnxruntime's optimizer fuses of simplify's output (before
# the rule, DINOv2 and YOLOS each lost the first SkipLayerNormalization, DETR its first cross-
# attention one), and the outputs against the raw export's.
_skip_spec = importlib.util.spec_from_file_location("skip_form_exports", REPO / "bench" / "skip_form_exports.py")
skip_form_exports = importlib.util.module_from_spec(_skip_spec)
_skip_spec.loader.exec_module(skip_form_exports)

# name: (fused ops of simplify's output, LayerNormalization nodes simplify leaves, raw has)
SKIP_FORM_PINNED = {
    "dinov2_skip_op17": ({"SkipLayerNormalization": 7, "LayerNormalization": 0, "BiasGelu": 3}, 7, 7),
    "dinov2_skip_dynbatch_op17": ({"SkipLayerNormalization": 7, "LayerNormalization": 0, "BiasGelu": 3}, 7, 7),
    "yolos_skip_op17": ({"SkipLayerNormalization": 7, "LayerNormalization": 0, "BiasGelu": 3}, 7, 7),
    # The decoder's first self-attention and its LayerNorm fold whole: 10 of the raw 11 are left,
    # 9 fused with their residual Add (raw: 10 of 11), the last one reads a SkipLayerNorm.
    "detr_skip_op17": ({"SkipLayerNormalization": 9, "LayerNormalization": 1}, 10, 11),
}


@pytest.fixture(scope="session")
def skip_form_dir(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("skip_form_exports")
    import subprocess

    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "skip_form_exports.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if proc.returncode != 0:
        pytest.fail(f"exporting the skip-form models failed:\n{proc.stderr[-2000:]}", pytrace=False)
    return out


def _layernorms(path) -> int:
    import onnx

    return sum(n.op_type == "LayerNormalization" for n in onnx.load(str(path)).graph.node)


@pytest.mark.parametrize("name", list(skip_form_exports.EXPORTS))
def test_folded_skip_operand_keeps_skip_layernorm(name, skip_form_dir, run_cli, onnxsim_python, tmp_path):
    import numpy as np
    import onnxruntime as ort

    raw = skip_form_dir / f"{name}.onnx"
    ours_path = tmp_path / "simplified.onnx"
    run_cli("-q", "--pass", "simplify", raw, "-o", ours_path)
    want_ops, ours_norms, raw_norms = SKIP_FORM_PINNED[name]
    assert (_layernorms(ours_path), _layernorms(raw)) == (ours_norms, raw_norms)
    ours = ort_fusions.fused_ops(str(ours_path))
    assert {k: ours[k] for k in want_ops} == want_ops, ours
    theirs_raw = ort_fusions.fused_ops(str(raw))
    if ours_norms == raw_norms:
        assert not ort_fusions.fewer_ops(ours, theirs_raw), f"{ours} against the raw export's {theirs_raw}"
    # simplify on its own output changes nothing: the Constant stays a node.
    again = tmp_path / "again.onnx"
    run_cli("-q", "--pass", "simplify", ours_path, "-o", again)
    assert ort_fusions.fused_ops(str(again)) == ours
    feeds = dict(np.load(skip_form_dir / f"{name}.inputs.npz"))
    want = ort.InferenceSession(str(raw), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(str(ours_path), providers=["CPUExecutionProvider"]).run(None, feeds)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    if onnxsim_python is None:
        pytest.skip("onnxsim is not installed (bench/.venv-anchors); only the raw comparison ran")
    theirs_path = tmp_path / "onnxsim.onnx"
    ort_fusions.run_onnxsim(onnxsim_python, str(raw), str(theirs_path))
    theirs = ort_fusions.fused_by_onnxruntime(str(theirs_path), str(raw))
    lost = ort_fusions.fewer_ops(ours, theirs)
    assert not lost, f"simplify fuses fewer {lost} than onnxsim: {ours} against {theirs}"
