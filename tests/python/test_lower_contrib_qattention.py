"""lower-contrib-ops on QAttention (onnxruntime's quantizer writes it for Attention) against
onnxruntime's own kernel: uint8 input, int8 and uint8 weights, zero points per tensor and per
column, scales per tensor and per column, masks, unidirectional, past and present, scale;
then quantize_dynamic's output for the transformer optimizer's BERT, lowered end to end."""

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

B, S, D, N, P = 2, 3, 16, 2, 4  # batch, sequence, hidden, heads, past length

QATT = {
    # id: (weight type, per-column scale, per-column weight zero point, attrs, mask, past)
    "int8_per_tensor": (np.int8, False, False, {}, None, False),
    "uint8_weight_zp": (np.uint8, False, False, {}, None, False),
    "per_column_scale": (np.int8, True, False, {}, None, False),
    "per_column_zp": (np.uint8, True, True, {}, None, False),
    "mask_2d": (np.int8, False, False, {}, "2d", False),
    "mask_lengths": (np.int8, False, False, {}, "lengths", False),
    "unidirectional": (np.int8, False, False, {"unidirectional": 1}, None, False),
    "past_unidirectional": (np.int8, False, False, {"unidirectional": 1}, None, True),
    "scale_mask_filter_value": (np.int8, False, False, {"scale": 0.2, "mask_filter_value": -100.0}, "2d", False),
}


def _qattention_model(case, opset=17):
    wtype, col_scale, col_zp, attrs, mask, past = QATT[case]
    rng = np.random.default_rng(5)
    info = np.iinfo(wtype)
    consts = {
        "w": rng.integers(info.min, info.max + 1, (D, 3 * D)).astype(wtype),
        "b": rng.standard_normal(3 * D).astype(np.float32),
        "xs": np.array(0.02, np.float32),
        "ws": (rng.uniform(0.002, 0.01, 3 * D) if col_scale else np.array(0.005)).astype(np.float32),
        "xz": np.array(117, np.uint8),
        "wz": (rng.integers(100, 156, 3 * D) if col_zp else np.array(128 if wtype == np.uint8 else 0)).astype(wtype),
    }
    if mask == "2d":
        consts["m"] = np.array([[1, 1, 0], [1, 1, 1]], np.int32)
    elif mask == "lengths":
        consts["m"] = np.array([2, 3], np.int32)
    names = ["x", "w", "b", "xs", "ws", "m" if mask else "", "xz", "wz"]
    inputs = [oh.make_tensor_value_info("x", TensorProto.UINT8, [B, S, D])]
    outputs = ["y"]
    if past:
        names.append("past")
        inputs.append(oh.make_tensor_value_info("past", TensorProto.FLOAT, [2, B, N, P, D // N]))
        outputs.append("present")
    node = oh.make_node("QAttention", names, outputs, domain=MS, num_heads=N, **attrs)
    graph = oh.make_graph(
        [node],
        "g",
        inputs,
        [onnx.ValueInfoProto(name=o) for o in outputs],
        [nh.from_array(v, k) for k, v in consts.items()],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)], ir_version=10)
    feeds = []
    for seed, kind in enumerate(["random", "zero_point", "saturated"]):
        r = np.random.default_rng(seed)
        x = {
            "random": r.integers(0, 256, (B, S, D)),
            "zero_point": np.full((B, S, D), 117),
            "saturated": np.full((B, S, D), 255),
        }[kind]
        f = {"x": x.astype(np.uint8)}
        if past:
            f["past"] = r.standard_normal((2, B, N, P, D // N)).astype(np.float32)
        feeds.append(f)
    for out, value in _ort(model, feeds[0]).items():  # outputs typed as the quantizer's models have them
        vi = next(o for o in model.graph.output if o.name == out)
        vi.CopyFrom(oh.make_tensor_value_info(out, TensorProto.FLOAT, value.shape))
    return model, feeds


@pytest.mark.parametrize("case", sorted(QATT))
def test_qattention(case):
    model, feeds = _qattention_model(case)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    assert {p.value for n in lowered.graph.node for p in n.metadata_props if p.key == "onnxsurgeon.rule"} == {
        "lower-qattention"
    }
    assert "MatMulInteger" in {n.op_type for n in lowered.graph.node}  # the quantization kept
    for f in feeds:
        want, got = _ort(model, f), _ort(lowered, f)
        for name in want:
            scale = max(1.0, float(np.abs(want[name]).max()))
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5 * scale, err_msg=name)


def test_qattention_do_rotary_refused_and_named():
    model, _ = _qattention_model("int8_per_tensor")
    model.graph.node[0].attribute.extend([oh.make_attribute("do_rotary", 1)])
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["QAttention"]
    assert _counts(report) == {"left: com.microsoft.QAttention: do_rotary=1 is not lowered": 1}


# ---------------------------------------------------------------- QEmbedLayerNormalization

QEMBED = {
    # id: (quantized type, segment embedding, mask, epsilon)
    "uint8_segment_mask": (np.uint8, True, True, None),
    "int8_no_segment": (np.int8, False, True, 1e-5),
    "uint8_no_mask": (np.uint8, True, False, None),
}


def _qembed_model(case, opset=17):
    qtype, segment, mask, epsilon = QEMBED[case]
    rng = np.random.default_rng(9)
    info = np.iinfo(qtype)
    vocab, positions = 20, 8

    def table(name, shape):
        consts[name] = rng.integers(info.min, info.max + 1, shape).astype(qtype)
        consts[name + "_s"] = np.array(rng.uniform(0.001, 0.02), np.float32)
        consts[name + "_z"] = np.array(rng.integers(info.min // 2, info.max // 2 + 1), qtype)

    consts = {}
    for name, shape in [("we", (vocab, D)), ("pe", (positions, D)), ("se", (2, D)), ("g", (D,)), ("bt", (D,))]:
        table(name, shape)
    tables = ["we", "pe", "se" if segment else "", "g", "bt"]
    names = ["ids", "seg" if segment else "", *tables, "mask" if mask else ""]
    names += [t + "_s" if t else "" for t in tables] + [t + "_z" if t else "" for t in tables]
    if not segment:
        del consts["se"], consts["se_s"], consts["se_z"]
    inputs = [oh.make_tensor_value_info(n, TensorProto.INT32, [B, S]) for n in ("ids", "seg", "mask") if n in names]
    attrs = {"epsilon": epsilon} if epsilon else {}
    node = oh.make_node("QEmbedLayerNormalization", names, ["y", "m"], domain=MS, **attrs)
    outputs = [
        oh.make_tensor_value_info("y", TensorProto.FLOAT, [B, S, D]),
        oh.make_tensor_value_info("m", TensorProto.INT32, [B]),
    ]
    graph = oh.make_graph([node], "g", inputs, outputs, [nh.from_array(v, k) for k, v in consts.items()])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)], ir_version=10)
    feeds = []
    for seed in range(3):
        r = np.random.default_rng(seed)
        f = {"ids": r.integers(0, vocab, (B, S)).astype(np.int32)}
        if segment:
            f["seg"] = r.integers(0, 2, (B, S)).astype(np.int32)
        if mask:
            f["mask"] = r.integers(0, 2, (B, S)).astype(np.int32)
        feeds.append(f)
    return model, feeds


@pytest.mark.parametrize("opset", [13, 17])
@pytest.mark.parametrize("case", sorted(QEMBED))
def test_qembed_layernorm(case, opset):
    model, feeds = _qembed_model(case, opset)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == [], _counts(report)
    onnx.checker.check_model(lowered)
    ops = collections.Counter(n.op_type for n in lowered.graph.node)
    assert ops["DequantizeLinear"] == (5 if QEMBED[case][1] else 4), ops  # the quantization kept
    for f in feeds:
        want, got = _ort(model, f), _ort(lowered, f)
        np.testing.assert_allclose(got["y"], want["y"], rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(got["m"], want["m"])


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
def test_quantize_dynamic_bert_output(per_channel, corpus, tmp_path):
    """The transformer optimizer's BERT (Attention, EmbedLayerNormalization...) through
    quantize_dynamic (QOperator: QAttention, DynamicQuantizeMatMul...): every contrib op
    lowered, outputs equal to onnxruntime's on the quantized model."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    entry = corpus.model("bert_op14")
    optimized = optimize_model(str(entry.path), model_type="bert", opt_level=1, use_gpu=False).model
    onnx.save(optimized, tmp_path / "opt.onnx")
    quantize_dynamic(
        tmp_path / "opt.onnx",
        tmp_path / "q.onnx",
        per_channel=per_channel,
        weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": TensorProto.FLOAT},  # the contrib ops' outputs are untyped
    )
    quantized = onnx.load(tmp_path / "q.onnx")
    ops = collections.Counter(n.op_type for n in quantized.graph.node if n.domain == MS)
    assert ops["QAttention"], ops
    lowered, report = _lower(quantized)
    counts = _counts(report)
    assert _contrib_nodes(lowered) == [], counts
    assert counts["lower-qattention"] == ops["QAttention"]
    for feeds in entry.all_inputs:
        want, got = _ort(quantized, feeds), _ort(lowered, feeds)
        for out in want:
            np.testing.assert_allclose(got[out], want[out], rtol=1e-4, atol=1e-4, err_msg=out)
