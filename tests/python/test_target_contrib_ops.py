"""`--target` and onnxruntime's contrib ops: decided per op, per profile. onnxruntime's
transformer optimizer output on the corpus BERT (SkipLayerNormalization, Attention,
BiasGelu, EmbedLayerNormalization; MultiHeadAttention in its other form) through
`--target`: the ops the target runs stay (onnxruntime's, OpenVINO's measured list), the
rest are lowered by lower-contrib-ops(ops=...), the written model passes its own
`check --target` and matches onnxruntime on the original. A contrib op without a lowering
or with a refused attribute stays a named blocker with the pass's reason.

The probe behind the profiles: targets/probes/contrib_ops.py (targets/probes/contrib_ops.txt).
The slow tests run the real backends (ort-1.10, openvino) with --backend-check where their
venvs are installed, and are skipped where not (tests/python/test_backend_check.py)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto
from onnx import helper as oh

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from harness import BACKENDS_DIR  # noqa: E402

MS = "com.microsoft"

# optimizer variant -> its options
VARIANTS = {"attention": {}, "multi_head_attention": {"use_multi_head_attention": True}}

# target -> (variant -> the contrib ops the result keeps); the optimizer writes
# EmbedLayerNormalization, SkipLayerNormalization, BiasGelu and Attention or MultiHeadAttention.
EXPECTED = {
    "ort": {
        "attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu", "Attention"},
        "multi_head_attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu", "MultiHeadAttention"},
    },
    # onnxruntime 1.10 and 1.14 have no MultiHeadAttention (targets/probes/contrib_ops.txt)
    # ... nor Attention's mask_filter_value (onnxruntime 1.32's optimizer writes it)
    "ort-1.10": {
        "attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu"},
        "multi_head_attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu"},
    },
    "ort-1.14": {
        "attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu", "Attention"},
        "multi_head_attention": {"EmbedLayerNormalization", "SkipLayerNormalization", "BiasGelu"},
    },
    # OpenVINO converts all but EmbedLayerNormalization; its Attention computes differently
    "openvino": {
        "attention": {"SkipLayerNormalization", "BiasGelu"},
        "multi_head_attention": {"SkipLayerNormalization", "BiasGelu", "MultiHeadAttention"},
    },
    "rknn2": {"attention": set(), "multi_head_attention": set()},
    "trt-8.6": {"attention": set(), "multi_head_attention": set()},
    "trt-10": {"attention": set(), "multi_head_attention": set()},
}


def _contrib(model):
    return {n.op_type for n in model.graph.node if n.domain == MS}


def _ort(model_path, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    names = {i.name for i in s.get_inputs()}
    return s.run(None, {k: v for k, v in feeds.items() if k in names})


@pytest.fixture(scope="module")
def optimized(corpus, tmp_path_factory):
    """variant -> (path of the optimizer's output for bert_op14, the corpus entry)."""
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    entry = corpus.model("bert_op14")
    out = {}
    for variant, extra in VARIANTS.items():
        from onnxruntime.transformers.fusion_options import FusionOptions

        options = FusionOptions("bert")
        for k, v in extra.items():
            setattr(options, k, v)
        model = optimize_model(
            str(entry.path), model_type="bert", opt_level=1, use_gpu=False, optimization_options=options
        ).model
        path = tmp_path_factory.mktemp("opt") / f"bert_{variant}.onnx"
        onnx.save(model, path)
        out[variant] = (path, entry)
    return out


def _cli(cli_path, *args, env=None):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("target", sorted(EXPECTED))
def test_target_plans_contrib_lowering_per_op(cli_path, optimized, tmp_path, target, variant):
    src, entry = optimized[variant]
    assert _contrib(onnx.load(src)) >= {"SkipLayerNormalization", "EmbedLayerNormalization"}
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", target, src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    result = onnx.load(out)
    keep = EXPECTED[target][variant]
    assert _contrib(result) == keep, proc.stderr
    lacking = _contrib(onnx.load(src)) - keep
    if lacking:  # limited to what the target lacks
        plan = next(l for l in proc.stderr.splitlines() if "ran" in l and "lower-contrib-ops" in l)
        ops = plan.split("lower-contrib-ops(ops=")[1].split(")")[0].split(",")[0].split(";")
        assert set(ops) == lacking, plan
    check = _cli(cli_path, "check", "--target", target, out)
    assert check.returncode == 0, check.stdout + check.stderr
    for feeds in entry.all_inputs:
        want, got = _ort(src, feeds), _ort(out, feeds)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_check_names_the_step_and_the_fact(cli_path, optimized):
    src, _ = optimized["multi_head_attention"]
    proc = _cli(cli_path, "check", "--target", "ort-1.10", src)
    assert proc.returncode == 1
    assert "lacks MultiHeadAttention" in proc.stdout and "lower-contrib-ops(ops=MultiHeadAttention)" in proc.stdout
    assert "targets/probes/contrib_ops.py" in proc.stdout
    # onnxruntime runs the optimizer's ops: nothing to do
    assert _cli(cli_path, "check", "--target", "ort", src).returncode == 0


def _one_node(op, attrs=None, opset=17):
    x = oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])
    w = oh.make_tensor("w", TensorProto.FLOAT, [8, 24], np.zeros(8 * 24, np.float32))
    b = oh.make_tensor("b", TensorProto.FLOAT, [24], np.zeros(24, np.float32))
    node = oh.make_node(op, ["x", "w", "b"], ["y"], domain=MS, num_heads=2, **(attrs or {}))
    graph = oh.make_graph([node], "g", [x], [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w, b])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)], ir_version=8)


def test_refused_attribute_stays_a_named_blocker(cli_path, tmp_path):
    """Attention with do_rotary: lower-contrib-ops refuses it; --target names it with the reason."""
    m = tmp_path / "m.onnx"
    onnx.save(_one_node("Attention", {"do_rotary": 1}), m)
    proc = _cli(cli_path, "--target", "rknn2", m, "-o", tmp_path / "o.onnx")
    assert proc.returncode != 0 and not (tmp_path / "o.onnx").exists()
    assert "Attention" in proc.stderr and "lower-contrib-ops left: com.microsoft.Attention: " in proc.stderr, (
        proc.stderr
    )
    assert "do_rotary" in proc.stderr, proc.stderr


def test_op_without_lowering_is_named(cli_path, tmp_path):
    m = tmp_path / "m.onnx"
    onnx.save(_one_node("QOrderedMatMul"), m)
    proc = _cli(cli_path, "check", "--target", "openvino", m)
    assert proc.returncode == 1 and "none:" in proc.stdout, proc.stdout
    # onnxruntime's own profiles take the com.microsoft domain
    assert _cli(cli_path, "check", "--target", "ort", m).returncode == 0


# ----------------------------------------------------------------- the real backends

REAL = {"ort-1.10": "ort-1.10", "openvino": "openvino"}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("target", sorted(REAL))
def test_backend_check_real_backend(cli_path, optimized, tmp_path, target, variant):
    if not (BACKENDS_DIR / REAL[target] / "ready").is_file():
        pytest.skip(f"{REAL[target]} venv not installed (make backends-setup BACKENDS={REAL[target]})")
    src, _ = optimized[variant]
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", target, "--backend-check", src, "-o", out, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"backend check on {target}" in proc.stderr
