"""lower-contrib-ops on the contrib ops onnxruntime has no CPU kernel for: GroupNorm,
SkipGroupNorm, RelativePositionBias, GatedRelativePositionBias, NhwcConv, GemmFastGelu.

onnxruntime's CPU provider refuses each ('Could not find an implementation'), so the oracle
is numpy written from onnxruntime's CUDA kernels and the op schemas
(docs/ContribOperators.md):
  onnxruntime/contrib_ops/cuda/diffusion/group_norm.cc, group_norm_impl_kernel.cuh
    (GroupNormNHWCSumKernel: sum and sum of squares in float; GroupNormNHWCScaleKernel:
    var = E[x^2] - mean^2, rsqrtf(var + epsilon), gamma * x + beta, x * sigmoid(x));
  onnxruntime/contrib_ops/cuda/bert/relative_attn_bias.cc, relative_attn_bias_impl.cu
    (buildRelativeAttentionBias: T5's bucket in float, the table read head-major;
    GatedRelativePositionBiasKernelSmallD: the gate from the sums of the halves);
  onnxruntime/python/tools/transformers/fusion_nhwc_conv.py (NhwcConv: the Conv with X and
    W transposed to channels last), fusion_gemmfastgelu.py (GemmFastGelu: MatMul + FastGelu,
    whose CPU kernels are the oracle).
Then onnxruntime's transformer optimizer on a UNet-like torch CNN (GroupNorm + SiLU, a
skip Add, channels last and first): the lowered optimized model equals the torch export."""

from __future__ import annotations

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


def _model(op, inputs, outputs, attrs, *, opset=17, consts=None, in_types=None):
    """One `op` node. `inputs`: name -> (shape, elem type) graph inputs, "" omits one;
    `consts`: initializers."""
    consts = consts or {}
    graph_inputs = [oh.make_tensor_value_info(n, t, s) for n, (s, t) in inputs.items() if n and n not in consts]
    node = oh.make_node(op, list(in_types or inputs), outputs, domain=MS, **attrs)
    graph = oh.make_graph(
        [node],
        "g",
        graph_inputs,
        [onnx.ValueInfoProto(name=o) for o in outputs if o],
        [onnx.numpy_helper.from_array(v, n) for n, v in consts.items()],
    )
    imports = [oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)]
    return oh.make_model(graph, opset_imports=imports, ir_version=10)


def _run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds)))


def _lower(model):
    report = []
    lowered = osg.run(model, "lower-contrib-ops", report=report)
    counts = {}
    for entry in report:
        counts.update(entry.get("counts", {}) if isinstance(entry, dict) else getattr(entry, "counts", {}))
    counts.pop("opset-imports-removed", None)  # with the last com.microsoft node
    return lowered, counts


def _ms_nodes(model):
    return [n.op_type for n in model.graph.node if n.domain == MS]


def _no_cpu_kernel(model, feeds):
    with pytest.raises(Exception, match="Could not find an implementation|NOT_IMPLEMENTED"):
        _run(model, feeds)


# ---------------------------------------------------------------- GroupNorm, SkipGroupNorm


def _group_norm_kernel(x, gamma, beta, groups, eps, silu, channels_last=True):
    """The CUDA kernel's arithmetic: x in its own type, statistics in float
    (sum, sum of squares; var = E[x^2] - mean^2), the affine and SiLU in float."""
    dtype = x.dtype
    xf = x.astype(np.float32)
    if not channels_last:
        xf = xf.transpose(0, 2, 3, 1)
    n, h, w, c = xf.shape
    g = xf.reshape(n, h * w, groups, c // groups)
    s = g.sum(axis=(1, 3), dtype=np.float32)
    sq = (g * g).sum(axis=(1, 3), dtype=np.float32)
    inv = np.float32(1.0) / np.float32(h * w * (c // groups))
    mean = s * inv
    var = sq * inv - mean * mean
    inv_std = np.float32(1.0) / np.sqrt(var + np.float32(eps))
    y = (g - mean[:, None, :, None]) * inv_std[:, None, :, None]
    y = y.reshape(n, h, w, c) * gamma.astype(np.float32) + beta.astype(np.float32)
    if silu:
        y = y * (np.float32(1.0) / (np.float32(1.0) + np.exp(-y)))
    if not channels_last:
        y = y.transpose(0, 3, 1, 2)
    return y.astype(dtype)


def _group_norm_model(shape, dtype, groups, activation, *, skip=None, bias=False, sum_out=False, attrs=None):
    c = shape[-1] if (attrs or {}).get("channels_last", 1) else shape[1]
    inputs = {"x": (shape, dtype), "gamma": ([c], F32), "beta": ([c], F32)}
    op = "GroupNorm"
    if skip is not None:
        op = "SkipGroupNorm"
        inputs["skip"] = (skip, dtype)
        if bias:
            inputs["bias"] = ([c], dtype)
    outputs = ["y", "s"] if sum_out else ["y"]
    return _model(op, inputs, outputs, {"groups": groups, "activation": activation, **(attrs or {})})


def _feeds(model, rng, scale=1.0):
    feeds = {}
    for i in model.graph.input:
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        dtype = NP[i.type.tensor_type.elem_type]
        feeds[i.name] = (rng.standard_normal(dims) * (scale if i.name == "x" else 1.0)).astype(dtype)
    return feeds


GROUP_NORM = {
    # id: (shape NHWC, groups, activation)
    "g8_silu": ((2, 5, 3, 32), 8, 1),
    "g8_none": ((2, 5, 3, 32), 8, 0),
    "groups1": ((1, 4, 4, 16), 1, 1),
    "groupsC": ((2, 3, 3, 16), 16, 1),
    "hw1": ((3, 1, 1, 8), 2, 0),
}


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("case", sorted(GROUP_NORM))
@pytest.mark.parametrize("scale", [1.0, 300.0], ids=["unit", "large"])
def test_group_norm(case, dtype, scale):
    shape, groups, activation = GROUP_NORM[case]
    model = _group_norm_model(shape, dtype, groups, activation)
    rng = np.random.default_rng(0)
    feeds = _feeds(model, rng, scale)
    _no_cpu_kernel(model, feeds)
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-group-norm": 1}, counts
    got = _run(lowered, feeds)["y"]
    want = _group_norm_kernel(feeds["x"], feeds["gamma"], feeds["beta"], groups, 1e-5, activation)
    # float: the kernel's one-pass variance and InstanceNormalization's two-pass one agree to
    # float rounding; float16: one ulp of the output (both round the same float result).
    atol = 2e-5 if dtype == F32 else 2.0 ** (np.floor(np.log2(np.abs(want).max())) - 10)
    if case == "hw1" and activation == 0:  # one pixel per (n, channel) group of 4: y = +-1 * gamma + beta
        atol = max(atol, 1e-3)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-4, atol=atol)


def test_group_norm_float16_gamma():
    """gamma and beta in float16 (the schema's M allows it; onnxruntime's CUDA kernel reads
    float only): cast to float, exact widening."""
    model = _group_norm_model((2, 3, 3, 16), F16, 4, 1)
    for i in model.graph.input[1:]:
        i.type.tensor_type.elem_type = F16
    feeds = _feeds(model, np.random.default_rng(6))
    lowered, counts = _lower(model)
    assert counts == {"lower-group-norm": 1}, counts
    want = _group_norm_kernel(feeds["x"], feeds["gamma"], feeds["beta"], 4, 1e-5, True)
    ulp = 2.0 ** (np.floor(np.log2(np.abs(want).max())) - 10)
    np.testing.assert_allclose(_run(lowered, feeds)["y"].astype(np.float32), want.astype(np.float32), atol=ulp)


def test_group_norm_channels_first_and_epsilon():
    """channels_last=0 (the optimizer's group_norm_channels_last=False: NCHW in place of the
    NCHW pattern), a large epsilon, dynamic batch and spatial dims."""
    attrs = {"channels_last": 0, "epsilon": 0.5}
    model = _group_norm_model(("n", 32, "h", "w"), F32, 4, 1, attrs=attrs)
    x = np.random.default_rng(1).standard_normal((2, 32, 3, 5)).astype(np.float32)
    gamma = np.linspace(-2, 2, 32).astype(np.float32)
    beta = np.linspace(1, -1, 32).astype(np.float32)
    lowered, counts = _lower(model)
    assert counts == {"lower-group-norm": 1}, counts
    got = _run(lowered, {"x": x, "gamma": gamma, "beta": beta})["y"]
    np.testing.assert_allclose(got, _group_norm_kernel(x, gamma, beta, 4, 0.5, True, False), rtol=1e-5, atol=2e-5)


SKIP = {
    # id: (skip shape, bias, S output)
    "full_bias_sum": ((2, 4, 3, 16), True, True),
    "full": ((2, 4, 3, 16), False, False),
    "broadcast4_bias": ((2, 1, 1, 16), True, True),
    "broadcast2": ((2, 16), False, True),
}


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("case", sorted(SKIP))
def test_skip_group_norm(case, dtype):
    skip_shape, bias, sum_out = SKIP[case]
    model = _group_norm_model((2, 4, 3, 16), dtype, 4, 1, skip=skip_shape, bias=bias, sum_out=sum_out)
    feeds = _feeds(model, np.random.default_rng(2))
    _no_cpu_kernel(model, feeds)
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-skip-group-norm": 1}, counts
    got = _run(lowered, feeds)
    skip = feeds["skip"].reshape(2, 1, 1, 16) if len(skip_shape) == 2 else feeds["skip"]
    s = feeds["x"] + skip  # in the input's type, as the kernel
    if bias:
        s = s + feeds["bias"]
    want = _group_norm_kernel(s, feeds["gamma"], feeds["beta"], 4, 1e-5, True)
    atol = 2e-5 if dtype == F32 else 2.0 ** (np.floor(np.log2(np.abs(want).max())) - 10)
    np.testing.assert_allclose(got["y"].astype(np.float32), want.astype(np.float32), rtol=1e-4, atol=atol)
    if sum_out:  # onnxruntime's CPU provider adds float16 in float (its inserted Casts): one
        # rounding where the kernel rounds each Add, one float16 ulp apart at most
        ulp = 0 if dtype == F32 else 2.0 ** (np.floor(np.log2(np.abs(s).max())) - 10)
        np.testing.assert_allclose(got["s"].astype(np.float32), s.astype(np.float32), rtol=0, atol=ulp)


GROUP_NORM_REFUSED = {
    # id: (model, the reason named)
    "activation2": (lambda: _group_norm_model((1, 2, 2, 8), F32, 2, 2), "activation 2 is not 0 (none) or 1 (SiLU)"),
    "indivisible": (lambda: _group_norm_model((1, 2, 2, 6), F32, 4, 0), "C = 6 is not divisible by groups = 4"),
    "rank3": (lambda: _group_norm_model((1, 4, 8), F32, 2, 0), "X's rank is unknown or not 4"),
    "skip_channels_first": (
        lambda: _group_norm_model((1, 8, 2, 2), F32, 2, 0, skip=(1, 8, 2, 2), attrs={"channels_last": 0}),
        "channels_last=0: the op defines skip's shapes for NHWC only, and no kernel runs it",
    ),
    "skip_rank3": (lambda: _group_norm_model((1, 2, 2, 8), F32, 2, 0, skip=(1, 4, 8)), "skip's rank is unknown"),
}


@pytest.mark.parametrize("case", sorted(GROUP_NORM_REFUSED))
def test_group_norm_refused(case):
    build, reason = GROUP_NORM_REFUSED[case]
    model = build()
    lowered, counts = _lower(model)
    op = model.graph.node[0].op_type
    assert _ms_nodes(lowered) == [op]
    (key,) = counts
    assert key.startswith(f"left: com.microsoft.{op}: {reason}"), counts


# ---------------------------------------------------------------- RelativePositionBias


def _t5_bucket(r, num_buckets, max_distance, bidirectional, ftype=np.float32):
    """buildRelativeAttentionBias' bucket of r = key - query, in `ftype` arithmetic."""
    r = np.asarray(r, dtype=np.int64)
    bucket = np.zeros_like(r)
    n = num_buckets
    if bidirectional:
        n //= 2
        bucket += np.where(r > 0, n, 0)
        r = np.abs(r)
    else:
        r = np.where(r > 0, 0, -r)
    max_exact = n // 2
    with np.errstate(divide="ignore"):
        ratio = np.log(r.astype(ftype) / ftype(max_exact)) / np.log(ftype(max_distance) / ftype(max_exact))
        large = max_exact + np.trunc(np.where(r < max_exact, 0, ratio * ftype(n - max_exact))).astype(np.int64)
    return bucket + np.where(r < max_exact, r, np.minimum(large, n - 1))


def _rel_pos_bias_kernel(table, q, k, max_distance, bidirectional):
    num_buckets = table.shape[0]
    head_major = table.reshape(-1, num_buckets)  # the kernel reads [num_heads][num_buckets]
    r = np.arange(k)[None, :] - np.arange(q)[:, None]
    return head_major[:, _t5_bucket(r, num_buckets, max_distance, bidirectional)][None]


RPB = {
    # id: (num_buckets, num_heads, max_distance, bidirectional, seq lengths)
    "t5_encoder": (32, 4, 128, 1, [1, 7, 300]),
    "t5_decoder": (32, 4, 128, 0, [1, 7, 300]),
    "small_md": (16, 2, 20, 1, [45]),
    "odd_buckets": (11, 3, 40, 0, [60]),
}


def test_t5_buckets_are_not_on_a_rounding_edge():
    """The buckets do not depend on float's last bit: float and double agree on every
    relative position the table covers, so a 1-ulp logf difference (CUDA's against
    this machine's) moves none."""
    r = np.arange(-1000, 1001)
    for nb, _, md, bidir, _ in RPB.values():
        np.testing.assert_array_equal(_t5_bucket(r, nb, md, bidir), _t5_bucket(r, nb, md, bidir, np.float64))


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("case", sorted(RPB))
@pytest.mark.parametrize("length_shape", [[], [1]], ids=["scalar", "vector"])
def test_relative_position_bias(case, dtype, length_shape):
    nb, heads, md, bidir, lengths = RPB[case]
    table = np.random.default_rng(3).standard_normal((nb, heads)).astype(NP[dtype])
    inputs = {
        "table": ([nb, heads], dtype),
        "q": (length_shape, TensorProto.INT64),
        "k": (length_shape, TensorProto.INT64),
    }
    model = _model(
        "RelativePositionBias", inputs, ["y"], {"max_distance": md, "is_bidirectional": bidir}, consts={"table": table}
    )
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-relative-position-bias": 1}, counts
    for s in lengths:
        n = np.array(s, dtype=np.int64).reshape(length_shape)
        if s <= 7:
            _no_cpu_kernel(model, {"q": n, "k": n})
        got = _run(lowered, {"q": n, "k": n})["y"]
        np.testing.assert_array_equal(got, _rel_pos_bias_kernel(table, s, s, md, bidir))


RPB_REFUSED = {
    "max_distance_small": (32, 8, 1, "max_distance 8 <= max_exact 8"),
    "too_few_buckets": (2, 10, 1, "num_buckets 2 leaves no exact bucket"),
}


@pytest.mark.parametrize("case", sorted(RPB_REFUSED))
def test_relative_position_bias_refused(case):
    nb, md, bidir, reason = RPB_REFUSED[case]
    table = np.zeros((nb, 2), np.float32)
    inputs = {"table": ([nb, 2], F32), "q": ([], TensorProto.INT64), "k": ([], TensorProto.INT64)}
    model = _model(
        "RelativePositionBias", inputs, ["y"], {"max_distance": md, "is_bidirectional": bidir}, consts={"table": table}
    )
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == ["RelativePositionBias"]
    (key,) = counts
    assert key.startswith(f"left: com.microsoft.RelativePositionBias: {reason}"), counts


# ---------------------------------------------------------------- GatedRelativePositionBias


def _gated_kernel(query, query_bias, rel_pos, weight, bias, eco_a, num_heads):
    """GatedRelativePositionBias: the projection in the input's type, the gate in float."""
    b, s, _ = query.shape
    q = (query + query_bias).reshape(b, s, num_heads, -1).transpose(0, 2, 1, 3)
    qw = (q.astype(np.float32) @ weight.astype(np.float32)).astype(query.dtype).astype(np.float32)
    g = qw + bias.astype(np.float32)
    d = g.shape[-1] // 2
    u = 1.0 / (1.0 + np.exp(-g[..., :d].sum(-1, keepdims=True)))
    r = 1.0 / (1.0 + np.exp(-g[..., d:].sum(-1, keepdims=True)))
    gate = u * (r * eco_a.astype(np.float32) - 1.0) + 2.0
    return (gate * rel_pos.astype(np.float32)).astype(query.dtype)


def _gated_model(dtype, b=2, s=5, n=3, h=4, d=6, token_offset=False):
    inputs = {
        "query": ([b, s, n * h], dtype),
        "query_bias": ([n * h], dtype),
        "rel_pos": ([1, n, s, s], dtype),
        "weight": ([h, d], dtype),
        "bias": ([d], dtype),
        "eco_a": ([1, n, 1, 1], dtype),
    }
    if token_offset:
        inputs["token_offset"] = ([b, s], TensorProto.INT32)
    return _model("GatedRelativePositionBias", inputs, ["y"], {"num_heads": n})


@pytest.mark.parametrize("dtype", [F32, F16], ids=["f32", "f16"])
@pytest.mark.parametrize("dims", [(2, 5, 3, 4, 6), (1, 8, 2, 8, 32)], ids=["small", "d32"])
def test_gated_relative_position_bias(dtype, dims):
    b, s, n, h, d = dims
    model = _gated_model(dtype, b, s, n, h, d)
    feeds = _feeds(model, np.random.default_rng(4))
    _no_cpu_kernel(model, feeds)
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-gated-relative-position-bias": 1}, counts
    got = _run(lowered, feeds)["y"]
    want = _gated_kernel(*(feeds[k] for k in ("query", "query_bias", "rel_pos", "weight", "bias", "eco_a")), n)
    tol = 1e-5 if dtype == F32 else 4e-3
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=tol, atol=tol)


def test_gated_relative_position_bias_refused():
    cases = {
        "token_offset (the packed form) is not lowered": _gated_model(F32, token_offset=True),
        "D = 5 is odd: no halves": _gated_model(F32, d=5),
    }
    for reason, model in cases.items():
        lowered, counts = _lower(model)
        assert _ms_nodes(lowered) == ["GatedRelativePositionBias"]
        (key,) = counts
        assert key == f"left: com.microsoft.GatedRelativePositionBias: {reason}", counts


# ---------------------------------------------------------------- NhwcConv


@pytest.mark.parametrize("group", [1, 2])
def test_nhwc_conv(group):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 6, 5, 4)).astype(np.float32)  # NHWC
    w = rng.standard_normal((6, 3, 3, 4 // group)).astype(np.float32)  # [M, kH, kW, C/group]
    b = rng.standard_normal(6).astype(np.float32)
    attrs = {"kernel_shape": [3, 3], "pads": [1, 0, 1, 2], "strides": [2, 1], "group": group}
    model = _model(
        "NhwcConv",
        {"x": ([2, 6, 5, 4], F32), "w": ([6, 3, 3, 4 // group], F32), "b": ([6], F32)},
        ["y"],
        attrs,
        consts={"w": w, "b": b},
    )
    _no_cpu_kernel(model, {"x": x})
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-nhwc-conv": 1}, counts
    conv = oh.make_model(
        oh.make_graph(
            [oh.make_node("Conv", ["x", "w", "b"], ["y"], **attrs)],
            "g",
            [oh.make_tensor_value_info("x", F32, [2, 4, 6, 5])],
            [oh.make_tensor_value_info("y", F32, None)],
            [onnx.numpy_helper.from_array(w.transpose(0, 3, 1, 2).copy(), "w"), onnx.numpy_helper.from_array(b, "b")],
        ),
        opset_imports=[oh.make_opsetid("", 17)],
    )
    want = _run(conv, {"x": x.transpose(0, 3, 1, 2).copy()})["y"].transpose(0, 2, 3, 1)
    np.testing.assert_array_equal(_run(lowered, {"x": x})["y"], want)


# ---------------------------------------------------------------- a UNet through the optimizer


def _unet_export(path, chained=False):
    """A small UNet-like CNN: diffusers' ResnetBlock2D shape (GroupNorm + SiLU, Conv, the
    time embedding added before the second GroupNorm, a residual Add before a GroupNorm
    without activation), random weights, exported by torch at opset 17. `chained`: the
    blocks' residual sums feed the next block's GroupNorm and its residual Add (the
    SkipGroupNorm whose sum output S is read), then GroupNorm + SiLU."""
    torch = pytest.importorskip("torch")
    nn = torch.nn
    silu = nn.functional.silu

    class Block(nn.Module):
        def __init__(self, c=16, t=8):
            super().__init__()
            self.gn1, self.conv1 = nn.GroupNorm(4, c), nn.Conv2d(c, c, 3, padding=1)
            self.proj, self.gn2 = nn.Linear(t, c), nn.GroupNorm(4, c)
            self.conv2, self.gn3 = nn.Conv2d(c, c, 3, padding=1), nn.GroupNorm(8, c, eps=1e-6)

        def forward(self, x, temb):
            h = self.conv1(silu(self.gn1(x)))
            h = h + self.proj(silu(temb))[:, :, None, None]
            h = x + self.conv2(silu(self.gn2(h)))
            return h if chained else self.gn3(h)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp, self.b1, self.mid = nn.Conv2d(3, 16, 3, padding=1), Block(), nn.Conv2d(16, 16, 1)
            self.b2, self.gn, self.out = Block(), nn.GroupNorm(8, 16), nn.Conv2d(16, 3, 1)

        def forward(self, x, temb):
            if chained:
                return self.out(silu(self.gn(self.b2(self.b1(self.inp(x), temb), temb))))
            return self.out(self.b2(self.mid(self.b1(self.inp(x), temb)), temb))

    torch.manual_seed(0)
    net = Net().eval()
    for p in net.parameters():
        p.data.normal_(0, 0.3)
    args = (torch.randn(2, 3, 8, 8), torch.randn(2, 8))
    torch.onnx.export(
        net, args, str(path), opset_version=17, input_names=["x", "temb"], output_names=["y"], dynamo=False
    )
    return {"x": args[0].numpy(), "temb": args[1].numpy()}


UNET_VARIANTS = {
    # id: (FusionOptions fields, float16, the contrib ops written)
    "channels_last": ({}, False, {"GroupNorm", "SkipGroupNorm", "NhwcConv"}),
    # SkipGroupNorm's fusion matches the channels-last form only
    "channels_first": ({"group_norm_channels_last": False, "enable_nhwc_conv": False}, False, {"GroupNorm"}),
    "float16": ({}, True, {"GroupNorm", "SkipGroupNorm", "NhwcConv"}),
    "chained": ({}, False, {"GroupNorm", "SkipGroupNorm", "NhwcConv"}),  # a SkipGroupNorm with S read
}


@pytest.mark.parametrize("variant", sorted(UNET_VARIANTS))
def test_unet_through_the_transformer_optimizer(variant, tmp_path):
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    feeds = _unet_export(tmp_path / "unet.onnx", chained=variant == "chained")
    fields, float16, written = UNET_VARIANTS[variant]
    options = FusionOptions("unet")
    for key, value in fields.items():
        setattr(options, key, value)
    optimized = optimize_model(
        str(tmp_path / "unet.onnx"), model_type="unet", opt_level=0, use_gpu=True, optimization_options=options
    )
    if float16:
        optimized.convert_float_to_float16(keep_io_types=True)
    optimized.save_model_to_file(str(tmp_path / "optimized.onnx"))  # what users run: with its opset imports
    optimized = onnx.load(str(tmp_path / "optimized.onnx"))
    assert set(_ms_nodes(optimized)) == written
    if variant == "chained":
        assert any(n.op_type == "SkipGroupNorm" and len(n.output) == 2 for n in optimized.graph.node)
    _no_cpu_kernel(optimized, feeds)
    lowered, counts = _lower(optimized)
    assert _ms_nodes(lowered) == [], counts
    want = _run(onnx.load(str(tmp_path / "unet.onnx")), feeds)["y"]
    got = _run(lowered, feeds)["y"]
    tol = 2e-2 if float16 else 1e-4  # float16: the optimized model's own rounding
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())
    # What simplify leaves: the lowering's NCHW <-> NHWC Transposes cancel the optimizer's
    # (its own identity Transpose before the output may stay).
    simplified = osg.run(lowered, "simplify")
    transposes = [n.op_type for n in simplified.graph.node].count("Transpose")
    assert transposes <= [n.op_type for n in optimized.graph.node].count("Transpose") <= 2, transposes
    np.testing.assert_allclose(_run(simplified, feeds)["y"], want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("target", ["ort", "coreml"])
def test_target_ort_lowers_them(cli_path, tmp_path, target):
    """onnxruntime's CPU provider lacks these kernels (targets/probes/contrib_ops.txt), and
    the CoreML EP leaves contrib ops to it: `--target` plans lower-contrib-ops for them, and
    the result runs and matches."""
    import subprocess

    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    feeds = _unet_export(tmp_path / "unet.onnx")
    optimize_model(str(tmp_path / "unet.onnx"), model_type="unet", opt_level=0, use_gpu=True).save_model_to_file(
        str(tmp_path / "optimized.onnx")
    )
    out = tmp_path / "ort.onnx"
    proc = subprocess.run(
        [str(cli_path), "--target", target, str(tmp_path / "optimized.onnx"), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lowered = onnx.load(str(out))
    assert _ms_nodes(lowered) == []
    want = _run(onnx.load(str(tmp_path / "unet.onnx")), feeds)["y"]
    np.testing.assert_allclose(_run(lowered, feeds)["y"], want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.mark.parametrize("stack", ["encoder", "decoder"])
def test_t5_through_the_transformer_optimizer(stack, tmp_path):
    """A small random T5 encoder (bidirectional bias) or decoder (unidirectional, with
    encoder states, no cache) exported with dynamic batch and sequence: the optimizer
    (model_type="t5") writes RelativePositionBias (with the RMS norms, Attention in the
    encoder); the lowered model equals the torch export at lengths 1, 9 and 200 (beyond
    max_distance 128: the saturated buckets)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    config = transformers.T5Config(
        vocab_size=100, d_model=32, d_kv=8, num_heads=4, num_layers=2, d_ff=64, dropout_rate=0.0, use_cache=False
    )
    torch.manual_seed(0)
    model = transformers.T5Model(config).eval()

    class Stack(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stack = getattr(model, stack)

        def forward(self, ids, states):
            if stack == "encoder":
                return self.stack(input_ids=ids).last_hidden_state + 0 * states.sum()
            return self.stack(input_ids=ids, encoder_hidden_states=states, use_cache=False).last_hidden_state

    raw = tmp_path / "t5.onnx"
    args = (torch.randint(0, 100, (2, 9)), torch.randn(2, 7, 32))
    torch.onnx.export(
        Stack(), args, str(raw), opset_version=17, input_names=["ids", "states"], output_names=["y"],
        dynamic_axes={"ids": {0: "batch", 1: "sequence"}, "states": {0: "batch", 1: "source"}}, dynamo=False,
    )  # fmt: skip
    optimize_model(str(raw), model_type="t5", opt_level=0, use_gpu=True).save_model_to_file(str(tmp_path / "opt.onnx"))
    optimized = onnx.load(str(tmp_path / "opt.onnx"))
    (rpb,) = [n for n in optimized.graph.node if n.op_type == "RelativePositionBias"]
    assert {a.name: a.i for a in rpb.attribute}["is_bidirectional"] == (stack == "encoder")
    lowered, counts = _lower(optimized)
    assert _ms_nodes(lowered) == [] and counts["lower-relative-position-bias"] == 1, counts
    for length in (1, 9, 200):
        rng = np.random.default_rng(length)
        feeds = {"ids": rng.integers(0, 100, (2, length)), "states": rng.standard_normal((2, 7, 32)).astype(np.float32)}
        want = _run(onnx.load(str(raw)), feeds)["y"]
        np.testing.assert_allclose(_run(lowered, feeds)["y"], want, rtol=1e-5, atol=1e-5)


def test_group_norm_follows_the_definition_where_the_kernel_cancels():
    """A group whose mean is 1000 times its spread: the kernel's one-pass variance
    (E[x^2] - mean^2 in float) loses most digits (numpy emulation: 0.65 off the float64
    result); InstanceNormalization subtracts the mean first, as the op's definition and the
    torch module the optimizer replaced do: within 1e-3 of float64."""
    model = _group_norm_model((2, 8, 8, 32), F32, 8, 1)
    feeds = _feeds(model, np.random.default_rng(0))
    feeds["x"] = feeds["x"] + np.float32(1000)
    x = feeds["x"].astype(np.float64).reshape(2, 64, 8, 4)
    y = (x - x.mean(axis=(1, 3), keepdims=True)) / np.sqrt(x.var(axis=(1, 3), keepdims=True) + 1e-5)
    y = y.reshape(2, 8, 8, 32) * feeds["gamma"] + feeds["beta"]
    truth = y / (1 + np.exp(-y))
    lowered, _ = _lower(model)
    assert np.abs(_run(lowered, feeds)["y"] - truth).max() < 1e-3
    kernel = _group_norm_kernel(feeds["x"], feeds["gamma"], feeds["beta"], 8, 1e-5, True)
    assert np.abs(kernel - truth).max() > 0.1


# ---------------------------------------------------------------- GemmFastGelu


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no_bias"])
def test_gemm_fast_gelu(opset, bias):
    """GemmFastGelu (onnxruntime: a ROCm kernel only) is the MatMul and FastGelu it fused:
    the lowering against onnxruntime's MatMul and its CPU FastGelu kernel."""
    rng = np.random.default_rng(7)
    w = rng.standard_normal((16, 24)).astype(np.float32)
    b = rng.standard_normal(24).astype(np.float32)
    x = (rng.standard_normal((2, 5, 16)) * 2).astype(np.float32)
    consts = {"w": w, "b": b} if bias else {"w": w}
    inputs = {"x": ([2, 5, 16], F32), "w": ([16, 24], F32), **({"b": ([24], F32)} if bias else {})}
    model = _model("GemmFastGelu", inputs, ["y"], {}, opset=opset, consts=consts)
    _no_cpu_kernel(model, {"x": x})
    lowered, counts = _lower(model)
    assert _ms_nodes(lowered) == [] and counts == {"lower-gemm-fast-gelu": 1}, counts
    nodes = [
        oh.make_node("MatMul", ["x", "w"], ["m"]),
        oh.make_node("FastGelu", ["m", *(["b"] if bias else [])], ["y"], domain=MS),
    ]
    reference = oh.make_model(
        oh.make_graph(
            nodes,
            "g",
            [oh.make_tensor_value_info("x", F32, [2, 5, 16])],
            [oh.make_tensor_value_info("y", F32, None)],
            [onnx.numpy_helper.from_array(v, n) for n, v in consts.items()],
        ),
        opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)],
    )
    np.testing.assert_allclose(_run(lowered, {"x": x})["y"], _run(reference, {"x": x})["y"], rtol=1e-5, atol=1e-5)
