"""lower-contrib-ops against onnxruntime's own kernels: each contrib op in a one-node model,
run by onnxruntime as it is and after the pass (standard ops only), compared elementwise
per dtype on random and edge inputs; then onnxruntime's transformer optimizer output on
corpus models (BERT, ViT, GPT-2, CLIP, LLaMA, T5), lowered, equal to the optimized model.

BiasAdd has no CPU kernel in onnxruntime: its oracle is numpy (X + bias + skip)."""

from __future__ import annotations

import collections
import importlib.util
import logging

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
from onnx import TensorProto
from onnx import helper as oh

MS = "com.microsoft"
F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
NP = {F32: np.float32, F16: np.float16}
# Elementwise tolerances (rtol, atol) against onnxruntime's kernel ("large" inputs: atol
# scaled by the output's magnitude). float16: about 2 ulps near 1.
TOL = {F32: (1e-5, 1e-5), F16: (1e-3, 1e-3)}

# ---------------------------------------------------------------- building and running


def _model(op, inputs, n_out, *, attrs=None, domain=MS, opset=17, dtype=F32, consts=None, outputs=None):
    """One `op` node. `inputs`: name -> shape (graph inputs of `dtype`), "" for an omitted
    input (" ", "  "... for more: a dict holds "" once), or a name of `consts`
    (initializers, name -> array); trailing omitted inputs are dropped. `outputs`: the
    output names (default o0..o{n_out-1}; "" omits one)."""
    consts = consts or {}
    names = [n.strip() for n in inputs]
    while names and not names[-1]:
        names.pop()
    graph_inputs = [
        oh.make_tensor_value_info(n, dtype, s) for n, s in inputs.items() if s is not None and n not in consts
    ]
    outs = outputs or [f"o{i}" for i in range(n_out)]
    node = oh.make_node(op, names, outs, domain=domain, **(attrs or {}))
    graph = oh.make_graph(
        [node],
        "g",
        graph_inputs,
        [onnx.ValueInfoProto(name=o) for o in outs if o],
        [onnx.numpy_helper.from_array(v, n) for n, v in consts.items()],
    )
    imports = [oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)]
    return oh.make_model(graph, opset_imports=imports, ir_version=10)


def _ort(model, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # the kernels as written
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _lower(model, pipeline="lower-contrib-ops"):
    report = []
    lowered = osg.run(model, pipeline, report=report)
    return lowered, report


def _counts(report):
    counts = {}
    for entry in report:
        counts.update(entry.get("counts", {}) if isinstance(entry, dict) else getattr(entry, "counts", {}))
    return counts


def _contrib_nodes(model):
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    return [
        n.op_type
        for n in model.graph.node
        if n.domain == MS
        or n.op_type in ("SimplifiedLayerNormalization", "SkipSimplifiedLayerNormalization")
        or (n.op_type == "LayerNormalization" and opset < 17)
    ]


def _feeds(model, kind, seed=0):
    """Inputs of the model's graph inputs: kind random | zero | negative | large."""
    rng = np.random.default_rng(seed)
    feeds = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        shape = [d.dim_value for d in t.shape.dim]
        dt = NP[t.elem_type]
        x = rng.standard_normal(shape)
        if kind == "zero":
            x = np.zeros(shape)
        elif kind == "negative":
            x = -np.abs(x) * 3
        elif kind == "large":
            x = x * (60.0 if dt == np.float16 else 1000.0)
        feeds[vi.name] = x.astype(dt)
    return feeds


INPUT_KINDS = ["random", "zero", "negative", "large"]


def _check_lowering(model, *, oracle=None, kinds=INPUT_KINDS, tol=None, expect_rule=None, scale_all=False):
    """Lowers `model`; no contrib op is left, every new node names its rule; on each input
    kind the lowered model (onnxruntime) equals onnxruntime on the original (or
    `oracle(feeds)`). atol scales with the output's magnitude on "large" inputs, and on
    every input with `scale_all` (sums of many products, accumulated in another order)."""
    # Outputs typed as the optimizer's models have them (from the oracle's results).
    sample = _feeds(model, "random")
    for out, value in (oracle(sample) if oracle else _ort(model, sample)).items():
        vi = next(o for o in model.graph.output if o.name == out)
        vi.CopyFrom(oh.make_tensor_value_info(out, oh.np_dtype_to_tensor_dtype(value.dtype), value.shape))
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    rules = {p.value for n in lowered.graph.node for p in n.metadata_props if p.key == "onnxsurgeon.rule"}
    if expect_rule:
        assert rules == {expect_rule}, rules
    dtype = model.graph.input[0].type.tensor_type.elem_type
    rtol, atol = tol or TOL[dtype]
    for kind in kinds:
        feeds = _feeds(model, kind)
        want = oracle(feeds) if oracle else _ort(model, feeds)
        got = _ort(lowered, feeds)
        assert want.keys() == got.keys()
        for name in want:
            w, g = want[name], got[name]
            assert w.dtype == g.dtype and w.shape == g.shape, (name, w.dtype, g.dtype, w.shape, g.shape)
            scale = max(1.0, float(np.max(np.abs(w.astype(np.float64))))) if kind == "large" or scale_all else 1.0
            np.testing.assert_allclose(
                g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol * scale, err_msg=f"{name} ({kind})"
            )
    return lowered


# ---------------------------------------------------------------- the norms

DTYPES = [pytest.param(F32, id="f32"), pytest.param(F16, id="f16")]
H = 16  # hidden size


def _skip_ln_model(variant, opset, dtype, simplified=False):
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    inputs = {"input": (2, 3, H), "skip": (2, 3, H), "gamma": (H,)}
    attrs = {}
    outputs = ["y"]
    if variant == "skip_2d":
        inputs["skip"] = (3, H)
    if variant in ("beta", "beta_bias", "all_outputs") and not simplified:
        inputs["beta"] = (H,)
    if variant in ("bias", "beta_bias", "all_outputs"):
        if not simplified and "beta" not in inputs:
            inputs[""] = None  # beta omitted, bias given
        inputs["bias"] = (H,)
    if variant == "all_outputs":
        outputs = ["y", "", "inv_std_var", "sum"] if simplified else ["y", "mean", "inv_std_var", "sum"]
    if variant == "sum_only":
        outputs = ["y", "", "", "sum"]
    if variant == "epsilon":
        attrs["epsilon"] = 1e-3
    return _model(op, inputs, 0, attrs=attrs, opset=opset, dtype=dtype, outputs=outputs)


SKIP_VARIANTS = ["plain", "skip_2d", "beta", "bias", "beta_bias", "all_outputs", "sum_only", "epsilon"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("variant", SKIP_VARIANTS)
def test_skip_layernorm(variant, opset, dtype):
    lowered = _check_lowering(_skip_ln_model(variant, opset, dtype), expect_rule="lower-skip-layernorm")
    ops = collections.Counter(n.op_type for n in lowered.graph.node)
    assert (ops["LayerNormalization"] == 1) == (opset >= 17), ops


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [14, 18])
@pytest.mark.parametrize("variant", ["plain", "skip_2d", "bias", "all_outputs", "sum_only", "epsilon"])
def test_skip_simplified_layernorm(variant, opset, dtype):
    _check_lowering(
        _skip_ln_model(variant, opset, dtype, simplified=True), expect_rule="lower-skip-simplified-layernorm"
    )


def test_skip_simplified_layernorm_mean_output_refused():
    model = _skip_ln_model("plain", 17, F32, simplified=True)
    model.graph.node[0].output.extend(["mean"])
    model.graph.output.extend([onnx.ValueInfoProto(name="mean")])
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["SkipSimplifiedLayerNormalization"]
    assert any("mean output is read" in k for k in _counts(report)), _counts(report)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [14, 18])
@pytest.mark.parametrize("variant", ["plain", "inv_std_var", "axis_1", "axis_neg2", "epsilon", "stash_double"])
def test_simplified_layernorm(variant, opset, dtype):
    attrs = {}
    scale = (H,)
    outputs = ["y"]
    if variant == "inv_std_var":
        outputs = ["y", "inv"]
    if variant in ("axis_1", "axis_neg2"):
        attrs["axis"] = 1 if variant == "axis_1" else -2
        scale = (3, H)
    if variant == "epsilon":
        attrs["epsilon"] = 0.5
    if variant == "stash_double":
        attrs["stash_type"] = TensorProto.DOUBLE
    model = _model(
        "SimplifiedLayerNormalization",
        {"x": (2, 3, H), "scale": scale},
        0,
        attrs=attrs,
        domain="",
        opset=opset,
        dtype=dtype,
        outputs=outputs,
    )
    _check_lowering(model, expect_rule="lower-simplified-layernorm")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [11, 14, 16])
@pytest.mark.parametrize("variant", ["plain", "bias", "all_outputs", "axis_1", "epsilon"])
def test_layernorm_1_below_opset_17(variant, opset, dtype):
    inputs = {"x": (2, 3, H), "scale": (H,)}
    attrs = {}
    outputs = ["y"]
    if variant in ("bias", "all_outputs"):
        inputs["b"] = (H,)
    if variant == "all_outputs":
        outputs = ["y", "mean", "inv"]
    if variant == "axis_1":
        attrs["axis"] = 1
        inputs["scale"] = (3, H)
    if variant == "epsilon":
        attrs["epsilon"] = 1e-2
    model = _model("LayerNormalization", inputs, 0, attrs=attrs, domain="", opset=opset, dtype=dtype, outputs=outputs)
    _check_lowering(model, expect_rule="lower-layernorm-1")


def test_layernorm_at_opset_17_is_left_alone():
    model = _model("LayerNormalization", {"x": (2, H), "scale": (H,)}, 1, domain="", opset=17)
    lowered, report = _lower(model)
    assert [n.op_type for n in lowered.graph.node] == ["LayerNormalization"]
    assert not [k for k in _counts(report) if k.startswith(("left", "lower"))]


# ---------------------------------------------------------------- the activations


ACTIVATIONS = {
    # id: (op, inputs, attrs, rule)
    "gelu": ("Gelu", {"x": (2, 3, H)}, {}, "lower-gelu"),
    "bias_gelu": ("BiasGelu", {"a": (2, 3, H), "b": (H,)}, {}, "lower-bias-gelu"),
    "fast_gelu": ("FastGelu", {"x": (2, 3, H)}, {}, "lower-fast-gelu"),
    "fast_gelu_bias": ("FastGelu", {"x": (2, 3, H), "bias": (H,)}, {}, "lower-fast-gelu"),
    "quick_gelu": ("QuickGelu", {"x": (2, 3, H)}, {}, "lower-quick-gelu"),
    "quick_gelu_alpha_1": ("QuickGelu", {"x": (2, 3, H)}, {"alpha": 1.0}, "lower-quick-gelu"),  # SiLU
    "quick_gelu_alpha_neg": ("QuickGelu", {"x": (2, 3, H)}, {"alpha": -0.5}, "lower-quick-gelu"),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [14, 20])
@pytest.mark.parametrize("case", sorted(ACTIVATIONS))
def test_activation(case, opset, dtype):
    op, inputs, attrs, rule = ACTIVATIONS[case]
    model = _model(op, inputs, 1, attrs=attrs, opset=opset, dtype=dtype)
    lowered = _check_lowering(model, expect_rule=rule)
    has_gelu = any(n.op_type == "Gelu" for n in lowered.graph.node)
    assert has_gelu == (opset >= 20 and "gelu" in case and "quick" not in case)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bias_shape", [(H,), (1, 1, H)])
def test_bias_add(bias_shape, dtype):
    model = _model("BiasAdd", {"x": (2, 3, H), "bias": bias_shape, "skip": (2, 3, H)}, 1, dtype=dtype)
    with pytest.raises(Exception, match="BiasAdd"):  # CUDA only: the oracle is numpy
        _ort(model, _feeds(model, "random"))
    _check_lowering(model, oracle=lambda f: {"o0": (f["x"] + f["bias"]) + f["skip"]}, expect_rule="lower-bias-add")


def test_gelu_forbidden_by_earlier_pass_stays_decomposed():
    model = _model("FastGelu", {"x": (2, H)}, 1, opset=20)
    lowered, _ = _lower(model, "rewrite-gelu,lower-contrib-ops")
    assert "Gelu" not in {n.op_type for n in lowered.graph.node}
    assert "Tanh" in {n.op_type for n in lowered.graph.node}


# ---------------------------------------------------------------- FusedMatMul

FUSED_MATMUL = {
    # id: (A shape, B shape, attrs)
    "plain": ((2, 3, 4), (2, 4, 5), {}),
    "trans_a": ((2, 4, 3), (2, 4, 5), {"transA": 1}),
    "trans_b": ((2, 3, 4), (2, 5, 4), {"transB": 1}),
    "trans_both_alpha": ((4, 3), (5, 4), {"transA": 1, "transB": 1, "alpha": 0.125}),
    "alpha_neg": ((2, 3, 4), (4, 5), {"alpha": -2.0}),
    "broadcast_rank4": ((2, 1, 3, 4), (3, 5, 4), {"transB": 1, "alpha": 0.5}),
    "rank1_b": ((3, 4), (4,), {"alpha": 3.0}),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(FUSED_MATMUL))
def test_fused_matmul(case, dtype):
    a, b, attrs = FUSED_MATMUL[case]
    model = _model("FusedMatMul", {"a": a, "b": b}, 1, attrs=attrs, dtype=dtype)
    _check_lowering(model, expect_rule="lower-fused-matmul", tol=(1e-5, 1e-4) if dtype == F32 else None)


def test_fused_matmul_trans_batch_refused_and_named():
    model = _model("FusedMatMul", {"a": (2, 3, 4), "b": (3, 4, 5)}, 1, attrs={"transBatchA": 1})
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["FusedMatMul"]
    assert _counts(report) == {"left: com.microsoft.FusedMatMul: transBatchA=1 is not lowered": 1}


def test_ops_option_restricts():
    model = _model("Gelu", {"x": (2, H)}, 1)
    lowered, report = _lower(model, "lower-contrib-ops=FastGelu")
    assert _contrib_nodes(lowered) == ["Gelu"]
    assert _counts(report) == {"left: com.microsoft.Gelu: not in ops=": 1}


# ---------------------------------------------------------------- corpus, end to end

# corpus model -> (transformer optimizer model_type, the ops it is known to leave)
OPTIMIZED = {
    "bert_op14": ("bert", set()),
    "bert_dynamo18": ("bert", set()),
    "vit_op14": ("vit", set()),
    "gpt2_dynamo18": ("gpt2", set()),
    "clip_text_op17": ("clip", set()),
    "llama_dynamo18": ("gpt2", set()),
    "t5_op14": ("t5", set()),
}


@pytest.mark.parametrize("opt_level", [1, 2])
@pytest.mark.parametrize("name", sorted(OPTIMIZED))
def test_transformer_optimizer_output(name, opt_level, corpus):
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    model_type, left = OPTIMIZED[name]
    entry = corpus.model(name)
    optimized = optimize_model(str(entry.path), model_type=model_type, opt_level=opt_level, use_gpu=False).model
    before = collections.Counter(_contrib_nodes(optimized))
    assert before, "the optimizer wrote no contrib op"
    lowered, report = _lower(optimized)
    assert set(_contrib_nodes(lowered)) == left
    named = {k.split(".")[-1].split(":")[0] for k in _counts(report) if k.startswith("left")}
    assert named == left, _counts(report)
    for feeds in entry.all_inputs:
        want = _ort(optimized, feeds)
        got = _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-4, atol=1e-4, err_msg=f"{name}: {out}")


# The optimizer's other attention forms on BERT: MultiHeadAttention (fed by separate Q/K/V
# MatMuls), and Attention fed by the raw [B, T] mask when EmbedLayerNormalization is off.
FUSION_VARIANTS = {
    "multi_head_attention": {"use_multi_head_attention": True},
    "no_embed_layernorm": {"enable_embed_layer_norm": False},
    "multi_head_attention_no_embed_layernorm": {"use_multi_head_attention": True, "enable_embed_layer_norm": False},
}


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="the corpus' BERT needs transformers")
@pytest.mark.parametrize("variant", sorted(FUSION_VARIANTS))
def test_transformer_optimizer_attention_forms(variant, corpus):
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    options = FusionOptions("bert")
    for key, value in FUSION_VARIANTS[variant].items():
        setattr(options, key, value)
    entry = corpus.model("bert_op14")
    optimized = optimize_model(
        str(entry.path), model_type="bert", optimization_options=options, opt_level=1, use_gpu=False
    ).model
    before = collections.Counter(_contrib_nodes(optimized))
    attention = "MultiHeadAttention" if "multi_head" in variant else "Attention"
    assert before[attention] == 2 and before["EmbedLayerNormalization"] == ("no_embed" not in variant), before
    lowered, report = _lower(optimized)
    assert _contrib_nodes(lowered) == [], _counts(report)
    for feeds in entry.all_inputs:  # a padded batch among them
        want, got = _ort(optimized, feeds), _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-4, atol=1e-4, err_msg=f"{variant}: {out}")


@pytest.mark.parametrize("name", sorted(n for n, (_, left) in OPTIMIZED.items() if not left))
def test_transformer_optimizer_output_float16(name, corpus):
    """The optimizer's float16 models (float32 inputs and outputs kept): every contrib op
    lowered, outputs within 2 float16 ulps of the optimized model's."""
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    entry = corpus.model(name)
    optimized = optimize_model(str(entry.path), model_type=OPTIMIZED[name][0], opt_level=1, use_gpu=False)
    optimized.convert_float_to_float16(keep_io_types=True)
    optimized = optimized.model
    assert _contrib_nodes(optimized)
    lowered, report = _lower(optimized)
    assert _contrib_nodes(lowered) == [], _counts(report)
    for feeds in entry.all_inputs:
        want = _ort(optimized, feeds)
        got = _ort(lowered, feeds)
        for out in want:
            ulp = 2.0 ** (np.floor(np.log2(max(float(np.max(np.abs(want[out]))), 1e-3))) - 10)
            np.testing.assert_allclose(got[out], want[out], rtol=0, atol=2 * ulp, err_msg=f"{name}: {out}")


# ---------------------------------------------------------------- RotaryEmbedding

ROTARY = {
    # id: (input shape, position_ids shape, attrs)   B=2, S=3, N=2, H=8, max positions 16
    "3d_per_token": ((2, 3, 16), (2, 3), {"num_heads": 2}),
    "3d_offset": ((2, 3, 16), (1,), {"num_heads": 2}),
    "3d_no_num_heads": ((2, 3, 16), (2, 3), {}),
    "4d_per_token": ((2, 2, 3, 8), (2, 3), {}),
    "4d_offset": ((2, 2, 3, 8), (1,), {}),
    "3d_partial_rotary": ((2, 3, 16), (2, 3), {"num_heads": 2, "rotary_embedding_dim": 4}),
    "4d_partial_rotary": ((2, 2, 3, 8), (1,), {"rotary_embedding_dim": 4, "num_heads": 2}),
}


def _rotary_model(case, interleaved, dtype, opset=17):
    x, pos, attrs = ROTARY[case]
    half = (attrs.get("rotary_embedding_dim") or 8) // 2
    rng = np.random.default_rng(1)
    angles = np.arange(16)[:, None] * rng.uniform(0.1, 1.0, half)[None, :]
    consts = {"cos": np.cos(angles).astype(NP[dtype]), "sin": np.sin(angles).astype(NP[dtype])}
    if pos == (1,):
        consts["pos"] = np.array([5], np.int64)
    else:
        consts["pos"] = rng.integers(0, 16, pos).astype(np.int64)
    attrs = dict(attrs, interleaved=int(interleaved))
    return _model(
        "RotaryEmbedding",
        {"x": x, "pos": pos, "cos": (16, half), "sin": (16, half)},
        1,
        attrs=attrs,
        opset=opset,
        dtype=dtype,
        consts=consts,
    )


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("interleaved", [False, True], ids=["halves", "interleaved"])
@pytest.mark.parametrize("case", sorted(ROTARY))
def test_rotary_embedding(case, interleaved, dtype):
    _check_lowering(_rotary_model(case, interleaved, dtype), expect_rule="lower-rotary-embedding")


def test_rotary_embedding_position_ids_as_input():
    """position_ids fed at run time (the optimizer's decoders): ranks known, values not."""
    model = _rotary_model("3d_per_token", False, F32)
    model.graph.initializer.remove(next(t for t in model.graph.initializer if t.name == "pos"))
    model.graph.input.append(oh.make_tensor_value_info("pos", TensorProto.INT64, (2, 3)))
    lowered, _ = _lower(model)
    assert _contrib_nodes(lowered) == []
    feeds = {
        "x": np.random.default_rng(2).standard_normal((2, 3, 16)).astype(np.float32),
        "pos": np.array([[0, 1, 2], [7, 15, 3]], np.int64),
    }
    want, got = _ort(model, feeds), _ort(lowered, feeds)
    np.testing.assert_allclose(got["o0"], want["o0"], rtol=1e-5, atol=1e-5)


def test_rotary_embedding_packed_batching_refused():
    model = _rotary_model("3d_per_token", False, F32)
    model.graph.node[0].attribute.append(oh.make_attribute("is_packed_batching", 1))
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["RotaryEmbedding"]
    assert _counts(report) == {"left: com.microsoft.RotaryEmbedding: is_packed_batching=1 is not lowered": 1}


# ---------------------------------------------------------------- MatMulNBits

NBITS = {
    # id: (K, N, block_size, zero points, bias)
    "k64_block32_default_zp": (64, 24, 32, False, False),
    "k64_block16_zp_bias": (64, 24, 16, True, True),
    "k40_padded_block16": (40, 8, 16, False, True),  # 3 blocks, the last one padded
    "k128_block64_zp": (128, 16, 64, True, False),
    "k48_block16_odd_blocks_zp": (48, 8, 16, True, True),  # each row's zero points padded to a byte
}


def _nbits_model(case, dtype, opset=21):
    k, n, block, with_zp, with_bias = NBITS[case]
    blocks = -(-k // block)
    rng = np.random.default_rng(3)
    consts = {
        "b": rng.integers(0, 256, (n, blocks, block // 2)).astype(np.uint8),
        "scales": (rng.uniform(0.01, 0.1, n * blocks)).astype(NP[dtype]),
    }
    inputs = {"a": (2, 3, k), "b": None, "scales": None}
    if with_zp:
        consts["zp"] = rng.integers(0, 256, n * -(-blocks // 2)).astype(np.uint8)
        inputs["zp"] = None
    if with_bias:
        if not with_zp:
            inputs[""] = None
        inputs[" "] = None  # g_idx omitted (a second empty name)
        consts["bias"] = rng.standard_normal(n).astype(NP[dtype])
        inputs["bias"] = None
    attrs = {"K": k, "N": n, "bits": 4, "block_size": block}
    model = _model("MatMulNBits", inputs, 1, attrs=attrs, opset=opset, dtype=dtype, consts=consts)
    return model


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(NBITS))
def test_matmul_nbits_blocked_dequantize(case, dtype):
    lowered = _check_lowering(
        _nbits_model(case, dtype),
        expect_rule="lower-matmul-nbits",
        kinds=["random", "negative"],
        tol=(1e-5, 1e-5) if dtype == F32 else (1e-3, 1e-3),
        scale_all=True,  # onnxruntime accumulates float16 products in float
    )
    ops = collections.Counter(n.op_type for n in lowered.graph.node)
    assert ops["DequantizeLinear"] == 1 and ops["MatMul"] == 1, ops
    weight = next(t for t in lowered.graph.initializer if t.data_type == TensorProto.UINT4 and len(t.dims) == 2)
    assert weight.dims[1] % NBITS[case][2] == 0  # int4 kept, blocked


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opset", [17, 21])
@pytest.mark.parametrize("case", sorted(NBITS))
def test_matmul_nbits_dequantize_true(case, opset, dtype):
    """dequantize=true: float weights computed by the pass, at any opset."""
    model = _nbits_model(case, dtype, opset=opset)
    sample = _feeds(model, "random")
    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("o0", dtype, _ort(model, sample)["o0"].shape))
    lowered, report = _lower(model, "lower-contrib-ops(ops=MatMulNBits,dequantize=true)")
    assert _contrib_nodes(lowered) == [] and "DequantizeLinear" not in {n.op_type for n in lowered.graph.node}
    k, n = NBITS[case][:2]
    assert [list(t.dims) for t in lowered.graph.initializer if t.data_type == dtype and len(t.dims) == 2] == [[k, n]]
    rtol, atol = (1e-5, 1e-5) if dtype == F32 else (1e-3, 1e-3)
    for kind in ("random", "negative"):
        feeds = _feeds(model, kind)
        want, got = _ort(model, feeds)["o0"], _ort(lowered, feeds)["o0"]
        scale = max(1.0, float(np.max(np.abs(want.astype(np.float64)))))
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol * scale)


def test_matmul_nbits_below_opset_21_refused_and_named():
    model = _nbits_model("k64_block32_default_zp", F32, opset=20)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["MatMulNBits"]
    assert _counts(report) == {
        "left: com.microsoft.MatMulNBits: opset < 21: blocked int4 DequantizeLinear needs opset 21 "
        "(dequantize=true: float weights)": 1
    }


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "zero_points"])
@pytest.mark.parametrize("name", ["bert_dynamo18", "gpt2_dynamo18", "llama_dynamo18"])
def test_int4_quantizer_output(name, symmetric, corpus):
    """onnxruntime's int4 quantizer (MatMulNBitsQuantizer, block 32) on corpus models
    converted to opset 21: every MatMulNBits lowered, int4 kept, outputs equal."""
    import onnx.version_converter
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    entry = corpus.model(name)
    quantizer = MatMulNBitsQuantizer(
        onnx.version_converter.convert_version(onnx.load(entry.path), 21), block_size=32, is_symmetric=symmetric
    )
    quantizer.process()
    quantized = quantizer.model.model
    nodes = [n for n in quantized.graph.node if n.op_type == "MatMulNBits"]
    assert nodes and all((len(n.input) > 3 and n.input[3] != "") == (not symmetric) for n in nodes)
    lowered, report = _lower(quantized)
    assert _contrib_nodes(lowered) == [] and _counts(report)["lower-matmul-nbits"] == len(nodes)
    assert collections.Counter(n.op_type for n in lowered.graph.node)["DequantizeLinear"] == len(nodes)
    for feeds in entry.all_inputs:
        want, got = _ort(quantized, feeds), _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-5, atol=1e-5, err_msg=f"{name}: {out}")


# ---------------------------------------------------------------- Attention

# B=2, S=3, input hidden 16, num_heads 2 (head size 8); past length 4. Masks are constants
# (int32), some keys masked in each, a fully masked row in "mask_2d_row_masked".
ATT_MASKS = {
    "mask_2d": np.array([[1, 1, 0], [1, 1, 1]], np.int32),
    "mask_2d_row_masked": np.array([[0, 0, 0], [1, 0, 1]], np.int32),
    "mask_3d": np.array([[[1, 0, 0], [1, 1, 0], [1, 1, 1]], [[1, 1, 1], [0, 1, 1], [1, 0, 1]]], np.int32),
    "mask_lengths": np.array([2, 3], np.int32),
    "mask_ends_starts": np.array([3, 2, 1, 0], np.int32),
}
ATTENTION = {
    # id: (attrs, mask, extra)   extra: bias | no_bias | past | attention_bias
    "plain": ({}, None, {"bias"}),
    "no_bias": ({}, None, set()),
    "unidirectional": ({"unidirectional": 1}, None, {"bias"}),
    "scale": ({"scale": 0.3}, None, {"bias"}),
    "qkv_hidden_sizes": ({"qkv_hidden_sizes": [16, 16, 8]}, None, {"bias"}),
    "mask_filter_value": ({"mask_filter_value": -50.0}, "mask_2d", {"bias"}),
    "unidirectional_mask_2d": ({"unidirectional": 1}, "mask_2d", {"bias"}),
    "attention_bias": ({}, "mask_2d", {"bias", "attention_bias"}),
    "past": ({"unidirectional": 1}, None, {"bias", "past"}),
    "past_mask_2d": ({"unidirectional": 1}, "past_mask_2d", {"bias", "past"}),
    "past_bidirectional": ({}, None, {"bias", "past"}),
    **{m: ({}, m, {"bias"}) for m in ATT_MASKS},
}


def _attention_model(case, opset=17):
    attrs, mask, extra = ATTENTION[case]
    attrs = dict(attrs, num_heads=2)
    width = sum(attrs.get("qkv_hidden_sizes", [16, 16, 16]))
    rng = np.random.default_rng(4)
    consts = {"w": (rng.standard_normal((16, width)) * 0.3).astype(np.float32)}
    inputs = {"x": (2, 3, 16), "w": None}
    if "bias" in extra:
        consts["b"] = rng.standard_normal(width).astype(np.float32)
    inputs["b" if "bias" in extra else ""] = None
    if mask == "past_mask_2d":
        consts["mask"] = np.array([[0, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]], np.int32)
    elif mask:
        consts["mask"] = ATT_MASKS[mask]
    inputs["mask" if mask else " "] = None
    outputs = ["y"]
    if "past" in extra:
        inputs["past"] = (2, 2, 2, 4, 8)
        outputs.append("present")
    if "attention_bias" in extra:
        if "past" not in extra:
            inputs["  "] = None
        inputs["attention_bias"] = (1, 2, 3, 3)
    model = _model("Attention", inputs, 0, attrs=attrs, opset=opset, consts=consts, outputs=outputs)
    return model


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("case", sorted(ATTENTION))
def test_attention(case, opset):
    lowered = _check_lowering(_attention_model(case, opset), expect_rule="lower-attention", scale_all=True)
    assert "Softmax" in {n.op_type for n in lowered.graph.node}


def test_attention_mask_1d_dynamic_batch():
    """A 1-D mask_index with a dynamic batch size: [B] lengths or [2B] ends and starts,
    told apart at run time."""
    model = _attention_model("plain")
    model.graph.input[0].CopyFrom(oh.make_tensor_value_info("x", F32, ("B", 3, 16)))
    model.graph.input.append(oh.make_tensor_value_info("mask", TensorProto.INT32, ("M",)))
    model.graph.node[0].input.append("mask")
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    x = np.random.default_rng(5).standard_normal((2, 3, 16)).astype(np.float32)
    for mask in ([2, 3], [1, 3], [3, 2, 1, 0], [2, 3, 0, 1]):
        feeds = {"x": x, "mask": np.array(mask, np.int32)}
        np.testing.assert_allclose(_ort(lowered, feeds)["y"], _ort(model, feeds)["y"], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- EmbedLayerNormalization

EMBED = {
    # id: (segment, mask, position_ids, outputs, attrs)
    "plain": (True, True, None, ["y", "mask_index"], {}),
    "no_segment": (False, True, None, ["y", "mask_index"], {}),
    "no_mask": (True, False, None, ["y", "mask_index"], {}),
    "embedding_sum": (True, True, None, ["y", "mask_index", "sum"], {"epsilon": 1e-5}),
    "position_ids_bs": (True, True, (2, 5), ["y", "mask_index"], {}),
    "position_ids_1s": (True, False, (1, 5), ["y", "", "sum"], {}),
}


def _embed_model(case, opset):
    segment, mask, position_ids, outputs, attrs = EMBED[case]
    rng = np.random.default_rng(6)
    consts = {"ids": rng.integers(0, 20, (2, 5)).astype(np.int32)}
    inputs = {"ids": None, "seg" if segment else "": None, "we": (20, H), "pe": (12, H)}
    if segment:
        consts["seg"] = rng.integers(0, 2, (2, 5)).astype(np.int32)
    inputs["se" if segment else " "] = (2, H) if segment else None
    inputs["gamma"], inputs["beta"] = (H,), (H,)
    if mask:
        consts["mask"] = np.array([[1, 1, 1, 0, 0], [1, 2, 1, 1, 1]], np.int32)  # 2 is not counted
    inputs["mask" if mask else "  "] = None
    if position_ids:
        consts["pos"] = rng.integers(0, 12, position_ids).astype(np.int32)
        inputs["pos"] = None
    model = _model("EmbedLayerNormalization", inputs, 0, attrs=attrs, opset=opset, consts=consts, outputs=outputs)
    return model


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("case", sorted(EMBED))
def test_embed_layernorm(case, opset):
    lowered = _check_lowering(_embed_model(case, opset), expect_rule="lower-embed-layernorm")
    assert ("LayerNormalization" in {n.op_type for n in lowered.graph.node}) == (opset >= 17)


# ---------------------------------------------------------------- MultiHeadAttention

# B=2, S=3, D=16, num_heads 2 (H=8); L: key/value length (3, or 4 for cross attention);
# past length 2.
MHA = {
    # id: (form, attrs, extras)   extras: bias, mask_2d/mask_1d/mask_3d, attention_bias, past, cross, dv8
    "separate_bias": ("separate", {}, {"bias"}),
    "separate": ("separate", {}, set()),
    "cross_bias": ("separate", {}, {"bias", "cross"}),
    "dv8_bias": ("separate", {}, {"bias", "dv8"}),
    "unidirectional": ("separate", {"unidirectional": 1}, {"bias"}),
    "scale": ("separate", {"scale": 0.2}, {"bias"}),
    "mask_2d": ("separate", {}, {"bias", "mask_2d"}),
    "mask_1d": ("separate", {}, {"bias", "mask_1d"}),
    "mask_3d": ("separate", {}, {"mask_3d"}),
    "mask_filter_value": ("separate", {"mask_filter_value": -1e9}, {"mask_2d"}),
    "attention_bias": ("separate", {}, {"bias", "attention_bias"}),
    "past": ("separate", {"unidirectional": 1}, {"bias", "past"}),
    "past_mask_2d": ("separate", {"unidirectional": 1}, {"bias", "past", "mask_2d"}),
    "past_bidirectional_attention_bias": ("separate", {}, {"past", "attention_bias"}),
    "packed_qkv": ("packed_qkv", {}, set()),
    "packed_qkv_unidirectional_mask": ("packed_qkv", {"unidirectional": 1}, {"mask_2d"}),
    "packed_kv": ("packed_kv", {}, {"cross"}),
    "heads_kv": ("heads_kv", {}, {"cross", "mask_1d"}),
}


def _mha_model(case, opset=17):
    form, attrs, extra = MHA[case]
    attrs = dict(attrs, num_heads=2)
    rng = np.random.default_rng(7)
    L = 4 if "cross" in extra else 3
    T = L + (2 if "past" in extra else 0)
    dv = 8 if "dv8" in extra else 16
    inputs, consts, outputs = {}, {}, ["y"]
    if form == "packed_qkv":
        inputs["q"] = (2, 3, 2, 3, 8)
    else:
        inputs["q"] = (2, 3, 16)
    if form == "separate":
        inputs["k"], inputs["v"] = (2, L, 16), (2, L, dv)
    elif form == "packed_kv":
        inputs["k"] = (2, L, 2, 2, 8)
    elif form == "heads_kv":
        inputs["k"], inputs["v"] = (2, 2, L, 8), (2, 2, L, 8)
    if "bias" in extra:
        consts["bias"] = rng.standard_normal(32 + dv).astype(np.float32)
    names = list(inputs) + [""] * (3 - len(inputs)) + ["bias" if "bias" in extra else ""]
    if "mask_2d" in extra:
        consts["mask"] = np.ones((2, T), np.int32)
        consts["mask"][0, -1] = consts["mask"][1, 0] = 0
    elif "mask_1d" in extra:
        consts["mask"] = np.array([T - 1, T], np.int32)
    elif "mask_3d" in extra:
        consts["mask"] = rng.integers(0, 2, (2, 3, T)).astype(np.int32)
        consts["mask"][:, :, 0] = 1
    names.append("mask" if "mask" in consts else "")
    if "attention_bias" in extra:
        inputs["attention_bias"] = (1, 2, 3, T)
    names.append("attention_bias" if "attention_bias" in extra else "")
    if "past" in extra:
        inputs["past_key"], inputs["past_value"] = (2, 2, 2, 8), (2, 2, 2, 8)
        names += ["past_key", "past_value"]
        outputs += ["present_key", "present_value"]
    while names and not names[-1]:
        names.pop()
    graph_inputs = {n: s for n, s in inputs.items()}
    model = _model("MultiHeadAttention", graph_inputs, 0, attrs=attrs, opset=opset, consts=consts, outputs=outputs)
    node = model.graph.node[0]
    node.input[:] = names
    return model


def _unpacked_oracle(case, opset):
    """onnxruntime has no CPU kernel for the packed forms: its oracle is onnxruntime's kernel
    on the same node with Q, K, V unpacked ([B, L, N, i, H] -> [B, L, N * H])."""
    form, attrs, extra = MHA[case]
    model = _mha_model(case, opset)
    node = model.graph.node[0]
    L = 4 if "cross" in extra else 3
    separate = onnx.ModelProto()
    separate.CopyFrom(model)
    inputs = separate.graph.input
    for name in ("q", "k"):
        if name in [i.name for i in inputs]:
            inputs.remove(next(i for i in inputs if i.name == name))
    extra_inputs = [oh.make_tensor_value_info(n, F32, (2, 3 if n == "q" else L, 16)) for n in ("q", "k", "v")]
    for i, vi in enumerate(extra_inputs):
        inputs.insert(i, vi)
    separate.graph.node[0].input[:3] = ["q", "k", "v"]
    packed = [i for i in node.input[:2] if i]

    def unpack(x):
        return [x[:, :, :, i, :].reshape(x.shape[0], x.shape[1], -1) for i in range(x.shape[3])]

    def oracle(feeds):
        feeds = dict(feeds)
        parts = unpack(feeds.pop("q")) if form == "packed_qkv" else [feeds.pop("q")]
        if form == "packed_kv":
            parts += unpack(feeds.pop("k"))
        return _ort(separate, dict(feeds, q=parts[0], k=parts[1], v=parts[2]))

    assert packed
    return model, oracle


@pytest.mark.parametrize("opset", [14, 17])
@pytest.mark.parametrize("case", sorted(MHA))
def test_multi_head_attention(case, opset):
    if MHA[case][0] in ("packed_qkv", "packed_kv"):
        model, oracle = _unpacked_oracle(case, opset)
        with pytest.raises(Exception, match="not implemented for CPU"):
            _ort(model, _feeds(model, "random"))
        _check_lowering(model, oracle=oracle, expect_rule="lower-multi-head-attention", scale_all=True)
        return
    _check_lowering(_mha_model(case, opset), expect_rule="lower-multi-head-attention", scale_all=True)


# ---------------------------------------------------------------- GroupQueryAttention

# num_heads 4, kv_num_heads 2 (head size 8): query [B, S, 32], key/value [B, S, 16]; past
# [B, 2, P, 8]. seqlens_k = each batch's total length - 1 (B its length). onnxruntime
# takes a chunk (S > 1 after a past) for one batch only.
GQA = {
    # id: (S, P, seqlens_k, attrs, extras)   extras: packed
    "prompt": (3, 0, [2, 2], {}, set()),
    "prompt_past_buffer": (3, 4, [2, 2], {}, set()),  # a first prompt: past ignored
    "decode": (1, 4, [4, 4], {}, set()),
    "decode_padded_cache": (1, 4, [4, 2], {}, set()),  # batch 1: new key at position 3 of 5
    "chunk": (3, 4, [6], {}, set()),
    "chunk_padded_cache": (2, 4, [3], {}, set()),
    "packed": (3, 4, [6], {}, {"packed"}),
    "packed_prompt": (3, 0, [2, 2], {}, {"packed"}),
    "local_window": (3, 4, [6], {"local_window_size": 2}, set()),
    "local_window_decode": (1, 4, [4, 3], {"local_window_size": 2}, set()),
    "softcap": (3, 4, [6], {"softcap": 2.0}, set()),
    "softcap_decode": (1, 4, [4, 4], {"softcap": 0.5}, set()),
    "scale": (1, 4, [4, 4], {"scale": 0.5}, set()),
    "mha_heads": (3, 4, [6], {"kv_num_heads": 4}, set()),
    "one_kv_head": (1, 4, [4, 2], {"kv_num_heads": 1}, set()),
    "not_causal": (3, 0, [2, 2], {"causal": 0}, set()),
    "rotary_prompt": (3, 0, [2, 2], {"do_rotary": 1}, {"rotary"}),
    "rotary_decode_padded": (1, 4, [4, 2], {"do_rotary": 1}, {"rotary"}),
    "rotary_chunk_interleaved": (3, 4, [6], {"do_rotary": 1, "rotary_interleaved": 1}, {"rotary"}),
    "rotary_partial_packed": (1, 4, [4, 3], {"do_rotary": 1}, {"rotary_partial", "packed"}),
    "rotary_partial_interleaved": (3, 0, [2, 2], {"do_rotary": 1, "rotary_interleaved": 1}, {"rotary_partial"}),
}


def _gqa_model(case, dtype=F32, opset=17):
    s, p, seqlens, attrs, extra = GQA[case]
    attrs = dict({"num_heads": 4, "kv_num_heads": 2}, **attrs)
    # onnxruntime rotates heads of 16k only, cos_cache 8k wide: partial rotary is 16 of 32
    h = 32 if "rotary_partial" in extra else 16 if "rotary" in extra else 8
    kv, b = attrs["kv_num_heads"] * h, len(seqlens)
    d = 4 * h
    inputs = {"q": (b, s, d + 2 * kv)} if "packed" in extra else {"q": (b, s, d), "k": (b, s, kv), "v": (b, s, kv)}
    names = list(inputs) + ([""] * 2 if "packed" in extra else [])
    outputs = ["y", "present_key", "present_value"]
    if p:
        inputs["past_key"] = inputs["past_value"] = (b, attrs["kv_num_heads"], p, h)
        names += ["past_key", "past_value"]
    else:
        names += ["", ""]
    consts = {"seqlens_k": np.array(seqlens, np.int32), "total": np.array(max(seqlens) + 1, np.int32)}
    names += ["seqlens_k", "total"]
    if extra & {"rotary", "rotary_partial"}:
        half = 8
        angles = np.arange(16)[:, None] * np.random.default_rng(8).uniform(0.1, 1.0, half)[None, :]
        consts["cos"], consts["sin"] = np.cos(angles).astype(NP[dtype]), np.sin(angles).astype(NP[dtype])
        names += ["cos", "sin"]
    model = _model(
        "GroupQueryAttention", inputs, 0, attrs=attrs, opset=opset, dtype=dtype, consts=consts, outputs=outputs
    )
    model.graph.node[0].input[:] = names
    return model


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(GQA))
def test_group_query_attention(case, dtype):
    """Against onnxruntime's kernel; the cache rows past each batch's total length and
    (padded prompts) are unspecified there, so only the defined rows are compared."""
    model = _gqa_model(case, dtype)
    s, p, seqlens, _, _ = GQA[case]
    sample = _feeds(model, "random")
    for out, value in _ort(model, sample).items():
        vi = next(o for o in model.graph.output if o.name == out)
        vi.CopyFrom(oh.make_tensor_value_info(out, dtype, value.shape))
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    rules = {p.value for n in lowered.graph.node for p in n.metadata_props if p.key == "onnxsurgeon.rule"}
    assert rules == {"lower-group-query-attention"}
    rtol, atol = TOL[dtype]
    for kind in INPUT_KINDS:
        feeds = _feeds(model, kind)
        want, got = _ort(model, feeds), _ort(lowered, feeds)
        for name in want:
            w, g = want[name].astype(np.float64), got[name].astype(np.float64)
            assert w.shape == g.shape and want[name].dtype == got[name].dtype, (name, w.shape, g.shape)
            if name != "y":
                for b, total in enumerate(seqlens):
                    w[b, :, total + 1 :] = g[b, :, total + 1 :] = 0
            scale = max(1.0, float(np.max(np.abs(w))))
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * scale, err_msg=f"{name} ({kind})")


# ---------------------------------------------------------------- FusedConv, BiasSplitGelu

FUSED_CONV = {
    # id: (activation, params, conv attrs, bias, Z)
    "relu_bias": ("Relu", [], {}, True, False),
    "none_sum": ("", [], {}, True, True),
    "tanh_pads": ("Tanh", [], {"pads": [1, 1, 1, 1]}, True, False),
    "sigmoid_strides": ("Sigmoid", [], {"strides": [2, 2]}, False, False),
    "leaky_relu_sum": ("LeakyRelu", [0.1], {}, True, True),
    "clip": ("Clip", [-0.5, 0.7], {"dilations": [2, 2]}, True, False),
    "hard_sigmoid_group": ("HardSigmoid", [0.3, 0.4], {"group": 2}, True, False),
}


@pytest.mark.parametrize("opset", [9, 17])
@pytest.mark.parametrize("case", sorted(FUSED_CONV))
def test_fused_conv(case, opset):
    act, params, conv, bias, z = FUSED_CONV[case]
    cin = 4 if conv.get("group") else 3
    inputs = {"x": (1, cin, 8, 8), "w": (4, cin // conv.get("group", 1), 3, 3)}
    if bias:
        inputs["b"] = (4,)
    attrs = dict(conv, kernel_shape=[3, 3])
    probe = _model("FusedConv", inputs, 1, attrs=attrs, opset=opset)
    if z:  # Z: the Conv's output shape
        if not bias:
            inputs[""] = None
        inputs["z"] = _ort(probe, _feeds(probe, "random"))["o0"].shape
    if act:
        attrs["activation"] = act
    if params:
        attrs["activation_params"] = params
    model = _model("FusedConv", inputs, 1, attrs=attrs, opset=opset)
    _check_lowering(model, expect_rule="lower-fused-conv", scale_all=True)


def _gelu_erf(x):
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)))


@pytest.mark.parametrize("opset", [14, 20])
def test_bias_split_gelu(opset):
    model = _model("BiasSplitGelu", {"x": (2, 4, 16), "bias": (16,)}, 1, opset=opset)
    with pytest.raises(Exception, match="BiasSplitGelu"):  # CUDA only: the oracle is numpy
        _ort(model, _feeds(model, "random"))

    def oracle(feeds):
        s = feeds["x"].astype(np.float64) + feeds["bias"]
        return {"o0": (s[..., :8] * _gelu_erf(s[..., 8:])).astype(np.float32)}

    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("o0", F32, (2, 4, 8)))
    _check_lowering(model, oracle=oracle, expect_rule="lower-bias-split-gelu", tol=(1e-5, 1e-5))


# ---------------------------------------------------------------- DynamicQuantizeMatMul, MatMulIntegerToFloat

QUANT_MATMUL = {
    # id: (B type, per-column scale/zero point, zero point, bias)
    "int8_scalar": (np.int8, False, False, False),
    "int8_per_column_zp_bias": (np.int8, True, True, True),
    "uint8_scalar_zp": (np.uint8, False, True, False),
    "uint8_per_column_zp_bias": (np.uint8, True, True, True),
}


def _quant_consts(case, rng):
    btype, per_column, zp, bias = QUANT_MATMUL[case]
    info = np.iinfo(btype)
    consts = {
        "B": rng.integers(info.min, info.max + 1, (16, 8)).astype(btype),
        "b_scale": rng.uniform(0.01, 0.05, 8 if per_column else ()).astype(np.float32),
    }
    if zp:
        consts["b_zp"] = rng.integers(info.min // 2, info.max // 2, 8 if per_column else ()).astype(btype)
    if bias:
        consts["bias"] = rng.standard_normal(8).astype(np.float32)
    return consts


def _quant_compare(model, feeds_list):
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    ops = {n.op_type for n in lowered.graph.node}
    assert "MatMulInteger" in ops and "MatMul" not in ops, ops  # the quantization kept
    for feeds in feeds_list:
        want, got = _ort(model, feeds), _ort(lowered, feeds)
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-6, atol=1e-6)
    return lowered


@pytest.mark.parametrize("case", sorted(QUANT_MATMUL))
def test_dynamic_quantize_matmul(case):
    consts = _quant_consts(case, np.random.default_rng(9))
    names = ["a", "B", "b_scale", "b_zp" if "b_zp" in consts else "", "bias" if "bias" in consts else ""]
    model = _model("DynamicQuantizeMatMul", {"a": (2, 3, 16)}, 0, consts=consts, outputs=["y"])
    model.graph.node[0].input[:] = [n for n in names]
    while not model.graph.node[0].input[-1]:
        model.graph.node[0].input.pop()
    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("y", F32, (2, 3, 8)))
    rng = np.random.default_rng(10)
    feeds = [{"a": (rng.standard_normal((2, 3, 16)) * s).astype(np.float32)} for s in (1.0, 100.0)]
    feeds.append({"a": np.abs(feeds[0]["a"])})  # all positive: a zero point of 0
    feeds.append({"a": np.zeros((2, 3, 16), np.float32)})
    lowered = _quant_compare(model, feeds)
    assert "DynamicQuantizeLinear" in {n.op_type for n in lowered.graph.node}


@pytest.mark.parametrize("a_type", [np.uint8, np.int8])
@pytest.mark.parametrize("case", sorted(QUANT_MATMUL))
def test_matmul_integer_to_float(case, a_type):
    if a_type == np.int8 and QUANT_MATMUL[case][0] == np.uint8:
        pytest.skip("onnxruntime has no int8 x uint8 kernel")
    rng = np.random.default_rng(11)
    consts = _quant_consts(case, rng)
    consts["a_scale"] = np.array(0.02, np.float32)
    consts["a_zp"] = np.array(3, a_type)
    names = ["a", "B", "a_scale", "b_scale", "a_zp", "b_zp" if "b_zp" in consts else ""]
    names.append("bias" if "bias" in consts else "")
    graph = oh.make_graph(
        [oh.make_node("MatMulIntegerToFloat", names, ["y"], domain=MS)],
        "g",
        [oh.make_tensor_value_info("a", oh.np_dtype_to_tensor_dtype(np.dtype(a_type)), (2, 3, 16))],
        [oh.make_tensor_value_info("y", F32, (2, 3, 8))],
        [onnx.numpy_helper.from_array(v, n) for n, v in consts.items()],
    )
    while not graph.node[0].input[-1]:
        graph.node[0].input.pop()
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)], ir_version=10)
    info = np.iinfo(a_type)
    feeds = [{"a": rng.integers(info.min, info.max + 1, (2, 3, 16)).astype(a_type)} for _ in range(3)]
    _quant_compare(model, feeds)


# ---------------------------------------------------------------- the QLinear ops

QLINEAR = {
    # id: (op, operand shapes, attrs)
    "add": ("QLinearAdd", [(2, 3, 8), (2, 3, 8)], {}),
    "add_broadcast": ("QLinearAdd", [(2, 3, 8), (8,)], {}),
    "mul": ("QLinearMul", [(2, 3, 8), (2, 3, 8)], {}),
    "sigmoid": ("QLinearSigmoid", [(2, 3, 8)], {}),
    "leaky_relu": ("QLinearLeakyRelu", [(2, 3, 8)], {"alpha": 0.2}),
    "global_average_pool": ("QLinearGlobalAveragePool", [(2, 3, 5, 5)], {}),
    "concat": ("QLinearConcat", [(2, 3, 4), (2, 5, 4), (2, 1, 4)], {"axis": 1}),
}


@pytest.mark.parametrize("qtype", [np.uint8, np.int8])
@pytest.mark.parametrize("zero_points", [True, False], ids=["zero_points", "no_zero_points"])
@pytest.mark.parametrize("case", sorted(QLINEAR))
def test_qlinear(case, zero_points, qtype):
    """DequantizeLinear -> the float op -> QuantizeLinear, within one quantization step of
    onnxruntime's kernel (which rounds in its own order, or by table)."""
    op, shapes, attrs = QLINEAR[case]
    rng = np.random.default_rng(12)
    info = np.iinfo(qtype)
    elem = oh.np_dtype_to_tensor_dtype(np.dtype(qtype))
    consts, names, inputs = {}, [], []

    def quantization(prefix):
        consts[f"{prefix}_scale"] = np.array(rng.uniform(0.02, 0.1), np.float32)
        if zero_points:
            consts[f"{prefix}_zp"] = np.array(rng.integers(info.min // 2, info.max // 2), qtype)
        return [f"{prefix}_scale", f"{prefix}_zp" if zero_points else ""]

    if op == "QLinearConcat":
        names += quantization("y")
    for i, shape in enumerate(shapes):
        inputs.append(oh.make_tensor_value_info(f"x{i}", elem, shape))
        names += [f"x{i}"] + quantization(f"x{i}")
    if op != "QLinearConcat":
        names += quantization("y")
    graph = oh.make_graph(
        [oh.make_node(op, names, ["y"], domain=MS, **attrs)],
        "g",
        inputs,
        [onnx.ValueInfoProto(name="y")],
        [onnx.numpy_helper.from_array(v, n) for n, v in consts.items()],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)], ir_version=10)
    feeds = {f"x{i}": rng.integers(info.min, info.max + 1, s).astype(qtype) for i, s in enumerate(shapes)}
    try:
        want = _ort(model, feeds)["y"]
    except Exception as e:  # noqa: BLE001
        if zero_points:
            raise
        # onnxruntime types a missing zero point as uint8 (Add/Mul with int8) or requires
        # them (Concat, GlobalAveragePool): no oracle for those
        pytest.skip(f"onnxruntime does not run it: {str(e)[:120]}")
    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("y", elem, want.shape))
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    assert {"DequantizeLinear", "QuantizeLinear"} <= {n.op_type for n in lowered.graph.node}
    got = _ort(lowered, feeds)["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= 1 and np.mean(diff) < 0.05, (diff.max(), np.mean(diff))


def test_attention_float16_lowest_mask_filter_value():
    """The optimizer writes mask_filter_value = float's lowest; in float16 it is clamped to
    float16's lowest (not -inf): a fully masked row stays finite. onnxruntime's CPU kernel is
    float only: the oracle is the float32 node."""
    model = _attention_model("mask_2d_row_masked")
    model.graph.node[0].attribute.append(oh.make_attribute("mask_filter_value", float(np.finfo(np.float32).min)))
    half = onnx.ModelProto()
    half.CopyFrom(model)
    half.graph.input[0].type.tensor_type.elem_type = F16
    for t in half.graph.initializer:
        if t.data_type == F32:
            t.CopyFrom(onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t).astype(np.float16), t.name))
    half.graph.output[0].CopyFrom(oh.make_tensor_value_info("y", F16, (2, 3, 16)))
    lowered, report = _lower(half)
    assert _contrib_nodes(lowered) == [], _counts(report)
    x = np.random.default_rng(13).standard_normal((2, 3, 16))
    want = _ort(model, {"x": x.astype(np.float32)})["y"]
    got = _ort(lowered, {"x": x.astype(np.float16)})["y"]
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got.astype(np.float32), want, rtol=2e-2, atol=2e-2)
