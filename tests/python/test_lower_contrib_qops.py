"""lower-contrib-ops on the quantizer's remaining com.microsoft ops (QGemm, QLinearAveragePool,
QLinearWhere, QLinearSoftmax, QLinearConv) against onnxruntime's own kernels: int8 and
uint8, with and without zero points, per tensor and per column, on random and saturating
inputs. Each bound is the measured one: exact where onnxruntime computes the same float
steps, one quantization step where it rounds in another order (QGemm's int32 accumulation,
QLinearSoftmax's lookup table)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh
from test_lower_contrib_ops import MS, _contrib_nodes, _counts, _lower, _ort

QTYPES = [pytest.param(np.uint8, id="u8"), pytest.param(np.int8, id="i8")]


def _build(op, names, arrays, attrs=None, opset=17):
    """One com.microsoft `op` node, its inputs `names` ("" omitted); `arrays` name -> array:
    the names starting with "x" graph inputs (returned as feeds), the rest initializers."""
    feeds = {n: v for n, v in arrays.items() if n.startswith("x")}
    consts = {n: v for n, v in arrays.items() if not n.startswith("x")}
    graph_inputs = [
        oh.make_tensor_value_info(n, oh.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()
    ]
    node = oh.make_node(op, names, ["y"], domain=MS, **(attrs or {}))
    graph = oh.make_graph(
        [node], "g", graph_inputs, [onnx.ValueInfoProto(name="y")], [nh.from_array(v, n) for n, v in consts.items()]
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)], ir_version=10)
    return model, feeds


def _compare(model, feeds, *, max_steps=0, max_mismatch=0.0, inexact=False):
    """Lowers `model` (no contrib op left, QDQ kept), runs both: quantized outputs within
    `max_steps` steps, on at most `max_mismatch` of the elements; float ones to 1e-5."""
    want = _ort(model, feeds)["y"]
    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("y", oh.np_dtype_to_tensor_dtype(want.dtype), want.shape))
    lowered, report = _lower(model, "lower-contrib-ops(inexact=true)" if inexact else "lower-contrib-ops")
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    got = _ort(lowered, feeds)["y"]
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * max(1.0, float(np.abs(want).max())))
        return lowered, 0, 0.0
    diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
    assert diff.max() <= max_steps and np.mean(diff > 0) <= max_mismatch, (diff.max(), np.mean(diff > 0))
    return lowered, int(diff.max()), float(np.mean(diff > 0))


def _q(rng, qtype, shape, spread=1.0):
    info = np.iinfo(qtype)
    lo, hi = int(info.min * spread), int(info.max * spread)
    return rng.integers(lo, hi + 1, shape).astype(qtype)


def _zp(rng, qtype, zero_points):
    info = np.iinfo(qtype)
    return np.array(rng.integers(info.min // 2, info.max // 2) if zero_points else 0, qtype)


# ---------------------------------------------------------------- QLinearWhere: exact


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("zero_points", [True, False], ids=["zp", "zp0"])
def test_qlinear_where_exact(qtype, zero_points):
    rng = np.random.default_rng(1)
    arrays = {
        "xc": rng.random((2, 1, 6)) > 0.5,  # broadcast against X and Y
        "xa": _q(rng, qtype, (2, 3, 6)),
        "sa": np.array(0.05, np.float32),
        "za": _zp(rng, qtype, zero_points),
        "xb": _q(rng, qtype, (3, 6)),
        "sb": np.array(0.11, np.float32),
        "zb": _zp(rng, qtype, zero_points),
        "sz": np.array(0.07, np.float32),  # requantizes both: some saturate
        "zz": _zp(rng, qtype, zero_points),
    }
    model, feeds = _build("QLinearWhere", ["xc", "xa", "sa", "za", "xb", "sb", "zb", "sz", "zz"], arrays)
    lowered, _, _ = _compare(model, feeds, max_steps=0)
    assert [n.op_type for n in lowered.graph.node].count("DequantizeLinear") == 2


# ---------------------------------------------------------------- QLinearAveragePool

POOL = {
    "k2": {"kernel_shape": [2, 2]},
    "k3_s2_pads": {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
    "pads_count_include_pad": {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1},
    "ceil_mode": {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1},
    "same_upper": {"kernel_shape": [3, 2], "auto_pad": "SAME_UPPER"},
    "1d": {"kernel_shape": [3], "strides": [2]},
}


@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("case", sorted(POOL))
def test_qlinear_average_pool(case, qtype):
    """onnxruntime pools the dequantized values in float too: measured equal (360 runs of
    these cases, 20 seeds); one step allowed as for the other float-rounding lowerings."""
    rng = np.random.default_rng(2)
    shape = (2, 3, 9) if case == "1d" else (2, 3, 7, 9)
    arrays = {
        "x": _q(rng, qtype, shape),
        "sx": np.array(0.04, np.float32),
        "zx": _zp(rng, qtype, True),
        "sy": np.array(0.03, np.float32),
        "zy": _zp(rng, qtype, True),
    }
    model, feeds = _build("QLinearAveragePool", ["x", "sx", "zx", "sy", "zy"], arrays, POOL[case])
    _compare(model, feeds, max_steps=1, max_mismatch=0.01)


def test_qlinear_average_pool_channels_last_refused():
    rng = np.random.default_rng(3)
    arrays = {"x": _q(rng, np.uint8, (1, 5, 5, 2)), "sx": np.array(0.1, np.float32), "sy": np.array(0.1, np.float32)}
    model, _ = _build("QLinearAveragePool", ["x", "sx", "", "sy"], arrays, {"kernel_shape": [2, 2], "channels_last": 1})
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["QLinearAveragePool"]
    assert any("channels_last=1 is not lowered" in k for k in _counts(report)), _counts(report)


# ---------------------------------------------------------------- QGemm

QGEMM = {
    # id: (M, K, N, attrs, with C, quantized output, B per column)
    "plain": (4, 16, 5, {}, False, True, False),
    "float_output": (4, 16, 5, {}, False, False, False),
    "bias": (4, 16, 5, {}, True, True, False),
    "alpha_bias_float": (4, 16, 5, {"alpha": 0.5}, True, False, False),
    "alpha_bias": (4, 16, 5, {"alpha": 2.0}, True, True, False),
    "trans_a_b": (3, 8, 6, {"transA": 1, "transB": 1}, True, True, False),
    "per_column": (4, 16, 5, {}, True, True, True),
    "per_column_trans_b": (4, 16, 5, {"transB": 1}, True, False, True),
}


@pytest.mark.parametrize("b_type", QTYPES)
@pytest.mark.parametrize("a_type", QTYPES)
@pytest.mark.parametrize("case", sorted(QGEMM))
def test_qgemm(case, a_type, b_type):
    """onnxruntime accumulates in int32 and requantizes by one multiplier: float output within
    float rounding, quantized output one step off on 1 of 19,200 elements (40 seeds of these
    cases), equal elsewhere."""
    if a_type == np.int8 and b_type == np.uint8:
        pytest.skip("onnxruntime has no QGemm kernel for int8 A with uint8 B")
    m, k, n, attrs, with_c, quantized, per_column = QGEMM[case]
    rng = np.random.default_rng(4)
    a_shape = (k, m) if attrs.get("transA") else (m, k)
    b_shape = (n, k) if attrs.get("transB") else (k, n)
    arrays = {
        "x": _q(rng, a_type, a_shape),
        "sa": np.array(0.02, np.float32),
        "za": _zp(rng, a_type, True),
        "b": _q(rng, b_type, b_shape),
        "sb": rng.uniform(0.01, 0.03, n).astype(np.float32) if per_column else np.array(0.02, np.float32),
        "zb": np.array([_zp(rng, b_type, True) for _ in range(n)], b_type) if per_column else _zp(rng, b_type, True),
    }
    names = ["x", "sa", "za", "b", "sb", "zb"]
    if with_c or quantized:
        names.append("c" if with_c else "")
    if with_c:
        arrays["c"] = rng.integers(-3000, 3000, (n,)).astype(np.int32)
    if quantized:
        arrays["sy"] = np.array(0.6, np.float32)
        arrays["zy"] = _zp(rng, a_type, True)  # onnxruntime: Y's type is A's
        names += ["sy", "zy"]
    model, feeds = _build("QGemm", names, arrays, attrs)
    _compare(model, feeds, max_steps=1, max_mismatch=0.02)


def test_qgemm_y_scale_without_zero_point_refused():
    """Y's type would be unknown: onnxruntime's schema leaves it open."""
    rng = np.random.default_rng(5)
    arrays = {
        "x": _q(rng, np.uint8, (3, 8)),
        "sa": np.array(0.02, np.float32),
        "za": np.array(128, np.uint8),
        "b": _q(rng, np.int8, (8, 4)),
        "sb": np.array(0.05, np.float32),
        "zb": np.array(0, np.int8),
        "sy": np.array(0.1, np.float32),
    }
    model, _ = _build("QGemm", ["x", "sa", "za", "b", "sb", "zb", "", "sy"], arrays)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["QGemm"]
    assert any("y_scale without y_zero_point" in k for k in _counts(report)), _counts(report)


def test_qgemm_per_column_below_opset_13_refused():
    rng = np.random.default_rng(6)
    arrays = {
        "x": _q(rng, np.uint8, (3, 8)),
        "sa": np.array(0.02, np.float32),
        "za": np.array(128, np.uint8),
        "b": _q(rng, np.int8, (8, 4)),
        "sb": np.full(4, 0.05, np.float32),
        "zb": np.zeros(4, np.int8),
    }
    model, _ = _build("QGemm", ["x", "sa", "za", "b", "sb", "zb"], arrays, opset=12)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["QGemm"]
    assert any("per column below opset 13" in k for k in _counts(report)), _counts(report)


# ---------------------------------------------------------------- QLinearConv (com.microsoft)


@pytest.mark.parametrize("channels_last", [0, 1])
@pytest.mark.parametrize("qtype", QTYPES)
def test_qlinear_conv_ms_domain_exact(qtype, channels_last):
    """onnxruntime runs its NHWC QLinearConv with the standard one's kernel: exact."""
    rng = np.random.default_rng(7)
    x_shape = (2, 7, 6, 3) if channels_last else (2, 3, 7, 6)
    arrays = {
        "x": _q(rng, qtype, x_shape),
        "sx": np.array(0.03, np.float32),
        "zx": _zp(rng, qtype, True),
        "w": _q(rng, np.int8, (4, 3, 3, 3)),
        "sw": rng.uniform(0.01, 0.03, 4).astype(np.float32),  # per output channel
        "zw": np.zeros(4, np.int8),
        "sy": np.array(0.5, np.float32),
        "zy": _zp(rng, qtype, True),
        "bias": rng.integers(-500, 500, 4).astype(np.int32),
    }
    attrs = {"pads": [1, 1, 1, 1], "strides": [1, 2], "channels_last": channels_last}
    model, feeds = _build("QLinearConv", ["x", "sx", "zx", "w", "sw", "zw", "sy", "zy", "bias"], arrays, attrs)
    lowered, _, _ = _compare(model, feeds, max_steps=0)
    assert "QLinearConv" in [n.op_type for n in lowered.graph.node if n.domain == ""]


# ---------------------------------------------------------------- QLinearSoftmax (opt-in)

SOFTMAX = {
    # id: (input shape, attrs, model opset)
    "opset13_last": ((4, 3, 24), {"opset": 13, "axis": -1}, 17),
    "opset13_middle": ((4, 24, 3), {"opset": 13, "axis": 1}, 17),
    "opset12_flatten": ((4, 3, 8), {"opset": 12, "axis": 1}, 17),
    "opset12_on_opset12": ((4, 3, 8), {"opset": 12, "axis": 1}, 12),
    "opset13_last_on_opset12": ((4, 3, 24), {"opset": 13, "axis": -1}, 12),
}


@pytest.mark.parametrize("y_scale", [1 / 256, 0.003, 0.0123], ids=["y1_256", "y0_003", "y0_0123"])
@pytest.mark.parametrize("qtype", QTYPES)
@pytest.mark.parametrize("case", sorted(SOFTMAX))
def test_qlinear_softmax_inexact(case, qtype, y_scale):
    """onnxruntime reads exp from a table and scales by Floor(1 / y_scale): the QDQ form with
    scale 1 / Floor(1 / y_scale) is measured one step off on 3 of 5.3 million elements (rows
    of 64 and 512), equal elsewhere. Zero point at the type's low end, as the quantizer writes."""
    shape, attrs, opset = SOFTMAX[case]
    rng = np.random.default_rng(8)
    info = np.iinfo(qtype)
    arrays = {
        "x": _q(rng, qtype, shape),
        "sx": np.array(0.08, np.float32),
        "zx": _zp(rng, qtype, True),
        "sy": np.array(y_scale, np.float32),
        "zy": np.array(info.min, qtype),
    }
    model, feeds = _build("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], arrays, attrs, opset=opset)
    _compare(model, feeds, max_steps=1, max_mismatch=0.01, inexact=True)


@pytest.mark.parametrize("qtype", QTYPES)
def test_qlinear_softmax_saturating_rows(qtype):
    """One-hot, uniform and two-hot rows: the largest outputs saturate as in onnxruntime."""
    info = np.iinfo(qtype)
    x = np.full((3, 8), info.min, qtype)
    x[0, 2], x[1], x[2, :2] = info.max, info.max, info.max
    for y_scale in (1 / 256, 0.003):
        arrays = {
            "x": x,
            "sx": np.array(0.08, np.float32),
            "zx": np.array(0, qtype),
            "sy": np.array(y_scale, np.float32),
            "zy": np.array(info.min, qtype),
        }
        model, feeds = _build("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], arrays, {"opset": 13})
        _compare(model, feeds, max_steps=0, inexact=True)


def test_qlinear_softmax_refused_unless_inexact():
    rng = np.random.default_rng(9)
    arrays = {
        "x": _q(rng, np.uint8, (2, 8)),
        "sx": np.array(0.08, np.float32),
        "zx": np.array(0, np.uint8),
        "sy": np.array(1 / 256, np.float32),
        "zy": np.array(0, np.uint8),
    }
    model, _ = _build("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], arrays, {"opset": 13})
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["QLinearSoftmax"]
    assert any("lookup table" in k and "inexact=true" in k for k in _counts(report)), _counts(report)


def test_qlinear_softmax_middle_axis_below_opset_13_refused():
    rng = np.random.default_rng(10)
    arrays = {
        "x": _q(rng, np.uint8, (2, 8, 3)),
        "sx": np.array(0.08, np.float32),
        "zx": np.array(0, np.uint8),
        "sy": np.array(1 / 256, np.float32),
        "zy": np.array(0, np.uint8),
    }
    model, _ = _build("QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], arrays, {"opset": 13, "axis": 1}, opset=12)
    lowered, report = _lower(model, "lower-contrib-ops(inexact=true)")
    assert _contrib_nodes(lowered) == ["QLinearSoftmax"]
    assert any("not over the last axis" in k for k in _counts(report)), _counts(report)


# ---------------------------------------------------------------- named, not lowered


@pytest.mark.parametrize(
    ("op", "why"),
    [
        # CUDA-only kernels (cublasLt orders): onnxruntime's CPU provider has none to test against
        ("QOrderedMatMul", "no lowering"),
        ("QLinearReduceMean", "no lowering"),
    ],
)
def test_not_lowerable_named(op, why):
    graph = oh.make_graph(
        [oh.make_node(op, ["x", "s", "s"], ["y"], domain=MS)],
        "g",
        [oh.make_tensor_value_info("x", TensorProto.INT8, (1, 2, 2))],
        [oh.make_tensor_value_info("y", TensorProto.INT8, (1, 2, 2))],
        [nh.from_array(np.array(0.1, np.float32), "s")],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)], ir_version=10)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [op]
    assert f"left: com.microsoft.{op}: {why}" in _counts(report), _counts(report)
