"""lower-contrib-ops on onnxruntime's block-quantized weight ops, GatherBlockQuantized and
MatMulBnb4, against onnxruntime's own kernels: int4, uint4 and uint8 (4 and 8 bits) tables,
with and without zero points, every gather/quantize axis pair, padded last blocks, float and
float16 scales; FP4 and NF4 codes, padded blocks, both opsets' code storage; dequantize=true;
the refusals named; then onnxruntime's own quantizers' output on corpus models.

GatherBlockQuantized is compared on in-range indices only: onnxruntime's kernel writes zeros
for an index outside the table, where Gather fails."""

from __future__ import annotations

import collections
import logging

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh
from test_lower_contrib_ops import MS, _contrib_nodes, _counts, _lower, _ort

F32, F16 = TensorProto.FLOAT, TensorProto.FLOAT16
NP = {F32: np.float32, F16: np.float16}
INT4, UINT4, UINT8 = TensorProto.INT4, TensorProto.UINT4, TensorProto.UINT8


def _pack4(values):
    """4-bit values (a flat array, 0..15) two a byte, the low nibble first."""
    v = np.asarray(values, np.uint8).reshape(-1) & 0xF
    if v.size % 2:
        v = np.append(v, 0)
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def _model(op, nodes_inputs, inits, graph_inputs, attrs, opset):
    node = oh.make_node(op, nodes_inputs, ["y"], domain=MS, **attrs)
    graph = oh.make_graph([node], "g", graph_inputs, [onnx.ValueInfoProto(name="y")], inits)
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)], ir_version=10)


def _typed(model, feeds):
    """The output typed as the optimizer's models have it (from onnxruntime's result)."""
    y = _ort(model, feeds)["y"]
    model.graph.output[0].CopyFrom(oh.make_tensor_value_info("y", oh.np_dtype_to_tensor_dtype(y.dtype), y.shape))
    return model


def _assert_close(lowered, model, feeds, dtype, tol=None):
    want, got = _ort(model, feeds)["y"], _ort(lowered, feeds)["y"]
    assert want.dtype == got.dtype and want.shape == got.shape, (want.dtype, got.dtype, want.shape, got.shape)
    rtol, atol = tol or ((0, 0) if dtype == F32 else (1e-3, 1e-3))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)


def _rules(model):
    return {p.value for n in model.graph.node for p in n.metadata_props if p.key == "onnxsurgeon.rule"}


# ---------------------------------------------------------------- GatherBlockQuantized

GBQ = {
    # id: (data type, bits, data shape (logical), gather_axis, quantize_axis, block, zero points)
    "int4_rows": (INT4, 4, (10, 64), 0, 1, 32, False),
    "int4_rows_zp": (INT4, 4, (10, 64), 0, 1, 16, True),
    "uint4_rows_zp": (UINT4, 4, (10, 64), 0, 1, 16, True),
    "uint4_padded_block": (UINT4, 4, (10, 40), 0, 1, 16, True),  # 3 blocks, the last one short
    "int4_gather_cols_quantize_rows": (INT4, 4, (48, 7), 1, 0, 16, True),
    "int4_same_axis": (INT4, 4, (32, 5), 0, 0, 16, True),  # blocks along the gathered axis
    "uint4_rank3_negative_axes": (UINT4, 4, (3, 6, 32), -2, -1, 16, True),
    "uint4_rank3_quantize_first": (UINT4, 4, (32, 6, 3), 2, 0, 16, False),
    "uint8_bits4": (UINT8, 4, (10, 64), 0, 1, 32, False),
    "uint8_bits4_zp_odd_blocks": (UINT8, 4, (10, 48), 0, 1, 16, True),  # each row's zero points padded
    "uint8_bits8": (UINT8, 8, (10, 64), 0, 1, 32, False),
    "uint8_bits8_zp": (UINT8, 8, (10, 32), 0, 1, 16, True),
}


def _gbq_model(case, dtype=F32, opset=21, index_type=TensorProto.INT64, indices_shape=(2, 3)):
    data_type, bits, shape, gather_axis, quantize_axis, block, with_zp = GBQ[case]
    rng = np.random.default_rng(7)
    rank = len(shape)
    q = quantize_axis % rank
    scale_shape = list(shape)
    scale_shape[q] = -(-shape[q] // block)
    levels = 16 if bits == 4 else 256
    values = rng.integers(0, levels, shape)
    inits = [nh.from_array(rng.uniform(0.01, 0.2, scale_shape).astype(NP[dtype]), "s")]
    zp_values = rng.integers(0, levels, scale_shape)
    if data_type == UINT8:
        stored = _pack4(values).reshape(*shape[:-1], shape[-1] // 2) if bits == 4 else values.astype(np.uint8)
        inits.insert(0, nh.from_array(stored, "d"))
        if with_zp:
            # each row's zero points packed on their own (a byte per two blocks)
            zp = np.stack([_pack4(row) for row in zp_values.reshape(-1, scale_shape[-1])]) if bits == 4 else zp_values
            inits.append(nh.from_array(zp.astype(np.uint8), "z"))
    else:
        inits.insert(0, oh.make_tensor("d", data_type, shape, _pack4(values).tobytes(), raw=True))
        if with_zp:
            inits.append(oh.make_tensor("z", data_type, scale_shape, _pack4(zp_values).tobytes(), raw=True))
    attrs = {"gather_axis": gather_axis, "quantize_axis": quantize_axis, "block_size": block, "bits": bits}
    inputs = ["d", "i", "s"] + (["z"] if with_zp else [])
    indices = oh.make_tensor_value_info("i", index_type, list(indices_shape))
    model = _model("GatherBlockQuantized", inputs, inits, [indices], attrs, opset)
    axis_dim = shape[gather_axis % rank]
    feeds = []
    for seed in range(3):
        idx = np.array(np.random.default_rng(seed).integers(-axis_dim, axis_dim, indices_shape))
        edges = [axis_dim - 1, -axis_dim][seed % 2 :]  # the table's edges, from both ends
        idx.reshape(-1)[: min(len(edges), idx.size)] = edges[: idx.size]
        feeds.append({"i": idx.astype(np.int64 if index_type == TensorProto.INT64 else np.int32)})
    return _typed(model, feeds[0]), feeds


@pytest.mark.parametrize("dtype", [pytest.param(F32, id="f32"), pytest.param(F16, id="f16")])
@pytest.mark.parametrize("case", sorted(GBQ))
def test_gather_block_quantized_blocked_dequantize(case, dtype):
    model, feeds = _gbq_model(case, dtype)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    assert _rules(lowered) == {"lower-gather-block-quantized"}
    assert [n.op_type for n in lowered.graph.node] == ["DequantizeLinear", "Gather"]
    table = next(t for t in lowered.graph.initializer if t.name.startswith("d") or "data" in t.name)
    assert table.data_type in (INT4, UINT4, UINT8)  # the quantization kept
    for f in feeds:
        _assert_close(lowered, model, f, dtype)


@pytest.mark.parametrize("index_type", [TensorProto.INT32, TensorProto.INT64], ids=["i32", "i64"])
def test_gather_block_quantized_index_types_and_scalar(index_type):
    for shape in [(), (4,)]:
        model, feeds = _gbq_model("int4_rows_zp", index_type=index_type, indices_shape=shape)
        lowered, _ = _lower(model)
        assert _contrib_nodes(lowered) == []
        for f in feeds:
            _assert_close(lowered, model, f, F32)


@pytest.mark.parametrize("opset", [17, 21])
@pytest.mark.parametrize("case", sorted(GBQ))
def test_gather_block_quantized_dequantize_true(case, opset):
    """dequantize=true: a float table computed by the pass, at any opset."""
    model, feeds = _gbq_model(case, F32, opset=opset)
    lowered, _ = _lower(model, "lower-contrib-ops(ops=GatherBlockQuantized,dequantize=true)")
    assert [n.op_type for n in lowered.graph.node] == ["Gather"]
    for f in feeds:
        _assert_close(lowered, model, f, F32)


def test_gather_block_quantized_below_opset_21_refused_and_named():
    model, _ = _gbq_model("int4_rows_zp", opset=20)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["GatherBlockQuantized"]
    assert _counts(report) == {
        "left: com.microsoft.GatherBlockQuantized: opset < 21: blocked DequantizeLinear needs opset 21 "
        "(dequantize=true: float table)": 1
    }


def test_gather_block_quantized_uint8_other_axes_refused():
    model, _ = _gbq_model("uint8_bits8")
    next(a for a in model.graph.node[0].attribute if a.name == "quantize_axis").i = 0
    _, report = _lower(model)
    assert _counts(report) == {
        "left: com.microsoft.GatherBlockQuantized: uint8 data needs gather_axis 0 and quantize_axis last "
        "(onnxruntime refuses it otherwise)": 1
    }


def test_gather_block_quantized_bits2_refused():
    model, _ = _gbq_model("uint8_bits8")
    next(a for a in model.graph.node[0].attribute if a.name == "bits").i = 2
    _, report = _lower(model)
    assert _counts(report) == {"left: com.microsoft.GatherBlockQuantized: bits=2 is not lowered": 1}


# ---------------------------------------------------------------- MatMulBnb4

BNB4 = {
    # id: (N, K, block_size, quant_type, A's shape before K)
    "nf4_k40_block16": (6, 40, 16, 1, (3,)),
    "fp4_k64_block64_batched": (32, 64, 64, 0, (2, 3)),
    "nf4_odd_elements_padded": (5, 21, 16, 1, (4,)),  # 105 weights: the last byte half used, the last block short
    "fp4_block_over_weight": (4, 8, 256, 0, (2,)),  # one block, mostly padding
    "nf4_block128": (16, 48, 128, 1, (1, 2, 3)),
}


def _bnb4_model(case, opset=17):
    n, k, block, quant_type, lead = BNB4[case]
    rng = np.random.default_rng(11)
    numel = n * k
    inits = [
        nh.from_array(rng.integers(0, 256, (numel + 1) // 2).astype(np.uint8), "b"),
        nh.from_array(rng.uniform(0.2, 3.0, -(-numel // block)).astype(np.float32), "m"),
    ]
    a = oh.make_tensor_value_info("a", F32, [*lead, k])
    attrs = {"K": k, "N": n, "block_size": block, "quant_type": quant_type}
    model = _model("MatMulBnb4", ["a", "b", "m"], inits, [a], attrs, opset)
    feeds = [{"a": np.random.default_rng(s).standard_normal((*lead, k)).astype(np.float32)} for s in range(2)]
    feeds.append({"a": np.zeros((*lead, k), np.float32)})
    return _typed(model, feeds[0]), feeds


@pytest.mark.parametrize("opset", [17, 21])
@pytest.mark.parametrize("case", sorted(BNB4))
def test_matmul_bnb4(case, opset):
    """The codes kept (uint8 below opset 21, uint4 at 21), the weight exact: only the
    MatMul's accumulation order differs from onnxruntime's."""
    model, feeds = _bnb4_model(case, opset)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    assert _rules(lowered) == {"lower-matmul-bnb4"}
    codes = next(t for t in lowered.graph.initializer if "codes" in t.name)
    assert codes.data_type == (UINT4 if opset >= 21 else UINT8)
    for f in feeds:
        _assert_close(lowered, model, f, F32, tol=(1e-5, 1e-5))


@pytest.mark.parametrize("case", sorted(BNB4))
def test_matmul_bnb4_dequantize_true(case):
    model, feeds = _bnb4_model(case)
    lowered, _ = _lower(model, "lower-contrib-ops(dequantize=true)")
    assert [n.op_type for n in lowered.graph.node] == ["MatMul"]
    for f in feeds:
        _assert_close(lowered, model, f, F32, tol=(1e-5, 1e-5))


@pytest.mark.parametrize(
    ("attr", "value", "reason"),
    [
        ("transB", 0, "transB=0 is not lowered (onnxruntime's kernel multiplies by W^T regardless)"),
        ("block_size", 48, "block_size=48 (onnxruntime's kernel has 16, 32, 64, 128, 256)"),
        ("quant_type", 2, "quant_type=2 is not FP4 or NF4"),
    ],
)
def test_matmul_bnb4_refused_and_named(attr, value, reason):
    model, _ = _bnb4_model("nf4_k40_block16")
    node = model.graph.node[0]
    kept = [a for a in node.attribute if a.name != attr]
    del node.attribute[:]
    node.attribute.extend([*kept, oh.make_attribute(attr, value)])
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["MatMulBnb4"]
    assert _counts(report) == {f"left: com.microsoft.MatMulBnb4: {reason}": 1}


# ---------------------------------------------------------------- onnxruntime's quantizers


@pytest.mark.parametrize("quant_type", [0, 1], ids=["fp4", "nf4"])
@pytest.mark.parametrize("name", ["bert_dynamo18", "gpt2_dynamo18"])
def test_bnb4_quantizer_output(name, quant_type, corpus):
    """onnxruntime's MatMulBnb4Quantizer (block 64) on corpus models: every MatMulBnb4
    lowered, outputs equal."""
    from onnxruntime.quantization.matmul_bnb4_quantizer import MatMulBnb4Quantizer

    entry = corpus.model(name)
    quantizer = MatMulBnb4Quantizer(onnx.load(entry.path), quant_type, 64)
    quantizer.process()
    quantized = quantizer.model.model
    count = sum(n.op_type == "MatMulBnb4" for n in quantized.graph.node)
    assert count
    lowered, report = _lower(quantized)
    assert _contrib_nodes(lowered) == [] and _counts(report)["lower-matmul-bnb4"] == count
    for feeds in entry.all_inputs:
        want, got = _ort(quantized, feeds), _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-4, atol=1e-4, err_msg=f"{name}: {out}")


@pytest.mark.parametrize("symmetric", [True, False], ids=["int4", "uint4_zero_points"])
@pytest.mark.parametrize("name", ["gpt2_dynamo18", "llama_dynamo18"])
def test_int4_gather_quantizer_output(name, symmetric, corpus):
    """onnxruntime's int4 quantizer with Gather among its ops (the embedding tables become
    GatherBlockQuantized, the MatMuls MatMulNBits) on corpus models converted to opset 21:
    both lowered with blocked DequantizeLinear, outputs equal."""
    import onnx.version_converter
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    entry = corpus.model(name)
    quantizer = MatMulNBitsQuantizer(
        onnx.version_converter.convert_version(onnx.load(entry.path), 21),
        block_size=32,
        is_symmetric=symmetric,
        op_types_to_quantize=("MatMul", "Gather"),
    )
    quantizer.process()
    quantized = quantizer.model.model
    ops = collections.Counter(n.op_type for n in quantized.graph.node)
    assert ops["GatherBlockQuantized"] and ops["MatMulNBits"], ops
    lowered, report = _lower(quantized)
    counts = _counts(report)
    assert _contrib_nodes(lowered) == [], counts
    assert counts["lower-gather-block-quantized"] == ops["GatherBlockQuantized"]
    for feeds in entry.all_inputs:
        want, got = _ort(quantized, feeds), _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-5, atol=1e-5, err_msg=f"{name}: {out}")
