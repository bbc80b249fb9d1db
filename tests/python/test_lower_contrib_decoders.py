"""lower-contrib-ops on real decoders with a KV cache, equal to onnxruntime at two past
lengths: a GPT-2 through onnxruntime's transformer optimizer (com.microsoft Attention with
past and present, a left-padded mask; tests/python/gpt2_past_models.py), and a LLaMA (random config, save_pretrained) built by onnxruntime-genai's model builder
(-e cpu -p fp32: GroupQueryAttention with packed QKV, do_rotary and past,
SkipSimplifiedLayerNormalization), and the same with int4 weights (-p int4: MatMulNBits with
accuracy_level=4, where onnxruntime's CPU kernel quantizes the activations to int8 too: the
oracle is the same model at accuracy_level 0, the op's exact definition).

The builder is not a dependency: its tests run where `onnxruntime_genai` imports (its
wheel unpacked on PYTHONPATH is enough; 0.11.4 works with transformers 4.57, 0.18 needs a
newer transformers), and skip elsewhere."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest

needs_builder = pytest.mark.skipif(
    importlib.util.find_spec("onnxruntime_genai") is None, reason="onnxruntime-genai (its model builder) not importable"
)


def _llama_dir(tmp_path):
    import torch
    import transformers

    config = transformers.LlamaConfig(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
    )
    torch.manual_seed(0)
    path = tmp_path / "hf"
    transformers.LlamaForCausalLM(config).eval().save_pretrained(path)
    return path


def _build(tmp_path, precision):
    """The builder's model.onnx (its last step, the tokenizer, fails without one: ignored)."""
    out = tmp_path / precision
    cmd = [sys.executable, "-m", "onnxruntime_genai.models.builder", "-m", "none", "-i", str(_llama_dir(tmp_path))]
    cmd += ["-o", str(out), "-p", precision, "-e", "cpu", "-c", str(tmp_path / "cache")]
    subprocess.run(cmd, env=dict(os.environ), capture_output=True, timeout=600, check=False)
    if not (out / "model.onnx").exists():
        pytest.skip("the model builder wrote no model")
    return onnx.load(out / "model.onnx")


def _session(model):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def _feeds(model, batch, seq, past, rng):
    sizes = {"batch_size": batch, "sequence_length": seq, "past_sequence_length": past}
    sizes["total_sequence_length"] = past + seq
    feeds = {}
    for vi in model.graph.input:
        dims = [d.dim_value or sizes[d.dim_param] for d in vi.type.tensor_type.shape.dim]
        if vi.name == "input_ids":
            feeds[vi.name] = rng.integers(0, 128, dims).astype(np.int64)
        elif vi.name == "attention_mask":
            feeds[vi.name] = np.ones(dims, np.int64)
        else:
            feeds[vi.name] = rng.standard_normal(dims).astype(np.float32)
    return feeds


def test_gpt2_attention_with_past_lowered(tmp_path):
    """Attention (unidirectional, past [2, B, N, P, H], present, a 2-D mask with a left-padded
    row), EmbedLayerNormalization, SkipLayerNormalization, FastGelu: all lowered; logits and
    presents equal to onnxruntime at past 0 and 5 (measured max abs error 5.4e-07)."""
    from gpt2_past_models import export_optimized

    model = onnx.load(export_optimized(str(tmp_path / "gpt2")))
    attention = [n for n in model.graph.node if n.op_type == "Attention"]
    assert len(attention) == 2 and all(len(n.input) == 5 and len(n.output) == 2 for n in attention)
    lowered = osg.run(model, "lower-contrib-ops")
    assert [n.op_type for n in lowered.graph.node if n.domain == "com.microsoft"] == []
    want_s, got_s = _session(model), _session(lowered)
    rng = np.random.default_rng(0)
    for past, batch, seq in [(0, 2, 3), (0, 1, 1), (5, 2, 3), (5, 2, 1)]:
        feeds = {
            "input_ids": rng.integers(0, 128, (batch, seq)).astype(np.int64),
            "position_ids": np.tile(np.arange(past, past + seq), (batch, 1)).astype(np.int64),
            "attention_mask": np.ones((batch, past + seq), np.int64),
        }
        if batch == 2 and past:
            feeds["attention_mask"][1, :2] = 0  # a left-padded row
        for i in range(2):
            feeds[f"past_{i}"] = rng.standard_normal((2, batch, 4, past, 16)).astype(np.float32)
        for name, w, g in zip([o.name for o in want_s.get_outputs()], want_s.run(None, feeds), got_s.run(None, feeds)):
            assert w.shape == g.shape, name
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=f"{name} past {past} batch {batch}")


@needs_builder
@pytest.mark.parametrize(("precision", "ops"), [("fp32", {"GroupQueryAttention"}), ("int4", {"MatMulNBits"})])
def test_genai_builder_llama_lowered(tmp_path, precision, ops):
    """Every com.microsoft op lowered; logits and present K/V equal to onnxruntime on a first
    prompt (past 0) and on a continuation (past 5), batch 2 and 1 (onnxruntime's
    GroupQueryAttention takes a batch of one for a multi-token step with a past)."""
    model = _build(tmp_path, precision)
    assert ops <= {n.op_type for n in model.graph.node if n.domain == "com.microsoft"}
    lowered = osg.run(model, "lower-contrib-ops")
    assert [n.op_type for n in lowered.graph.node if n.domain == "com.microsoft"] == []
    for node in model.graph.node:  # the oracle: MatMulNBits as defined, float activations
        for a in node.attribute:
            if node.op_type == "MatMulNBits" and a.name == "accuracy_level":
                a.i = 0
    want_s, got_s = _session(model), _session(lowered)
    rng = np.random.default_rng(0)
    for past, batch, seq in [(0, 2, 3), (0, 2, 1), (5, 1, 3), (5, 2, 1)]:
        feeds = _feeds(model, batch, seq, past, rng)
        for name, w, g in zip([o.name for o in want_s.get_outputs()], want_s.run(None, feeds), got_s.run(None, feeds)):
            assert w.shape == g.shape, name
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{name} past {past} batch {batch}")
