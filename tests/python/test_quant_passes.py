"""Quantized models through every pass and convert-opset.

The corpus is built by the real tools (tests/python/quant_models.py: onnxruntime's
quantize_static QDQ per-channel/per-tensor/int16/int4, QOperator, quantize_dynamic and
MatMulNBits, on a torch CNN, encoder block, decoder block and LSTM). Every registered pass (those that need
an argument are skipped) must give a model onnx's full checker accepts, that matches
onnxruntime on the original within the form's tolerance, and that keeps its Q/DQ and
QOperator node counts (except the passes whose job is to dequantize). The run summary and
--report json carry the counts and quantized weight bytes, before and after.
"""

from __future__ import annotations

import collections
import json

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
import quant_models as qm

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")
pytest.importorskip("torch")

# Needs a profile (test_targets.py), or float16 tolerances (test_convert_float16.py), or
# outputs to cut at (extract), or shapes (set-input-shape).
SKIP = {"target", "convert-float16", "extract", "set-input-shape"}
# Their job is to dequantize or lower quantized ops (DynamicQuantizeLinear into QuantizeLinear
# or float arithmetic): counts may change.
DEQUANTIZING = {"fold-qdq", "lower-contrib-ops", "decompose-dynamic-quantize"}
OPSET_DOWN = {"convert-opset", "downgrade-opset"}
PASSES = [p["name"] for p in osg.passes() if p["name"] not in SKIP]
MODELS = [(a, f) for a in qm.ARCHS for f in qm.FORMS if f not in qm.MATMUL_ONLY or a in qm.MATMUL_ARCHS]
QDQ = ("QuantizeLinear", "DequantizeLinear")
QOPERATOR = (
    "QLinearConv",
    "QLinearMatMul",
    "QLinearAdd",
    "QLinearMul",
    "QLinearSoftmax",
    "QLinearGlobalAveragePool",
    "ConvInteger",
    "MatMulInteger",
    "DynamicQuantizeLinear",
    "MatMulNBits",
)


@pytest.fixture(scope="session")
def quant_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("quant")


@pytest.fixture(scope="session")
def quant_model(quant_dir):
    cache = {}

    def get(arch, form):
        if (arch, form) not in cache:
            cache[arch, form] = qm.build(arch, form, quant_dir)
        return cache[arch, form]

    return get


def _counts(model: onnx.ModelProto) -> dict[str, int]:
    c = collections.Counter()
    graphs = [model.graph]
    while graphs:
        g = graphs.pop()
        for n in g.node:
            if n.op_type in QDQ or n.op_type in QOPERATOR:
                c[n.op_type] += 1
            graphs.extend(a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
    return dict(c)


def _tolerance(form: str, reference: np.ndarray) -> float:
    # A rewrite may move a value across a rounding boundary: allow a few quantization steps
    # of the output's range at the form's narrowest type.
    bits = qm.BITS.get(form, 8)
    span = float(np.max(np.abs(reference))) or 1.0
    return span * {16: 2e-3, 8: 3e-2, 4: 3e-2}[bits]


def _run(model, feeds):
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def _check(original, rewritten, arch, form, what, oracle, counts=True):
    oracle.assert_valid(rewritten)
    feeds = qm.inputs(arch)[0]
    want, got = _run(original, feeds), _run(rewritten, feeds)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=0, atol=_tolerance(form, w), err_msg=f"{what} on {arch}/{form}")
    if counts:
        assert _counts(rewritten) == _counts(original), what


@pytest.mark.parametrize("arch,form", MODELS, ids=[f"{a}-{f}" for a, f in MODELS])
@pytest.mark.parametrize("pipeline", PASSES)
def test_pass_keeps_quantized_model(pipeline, arch, form, quant_model, oracle):
    original = onnx.load(str(quant_model(arch, form)))
    try:
        rewritten = osg.run(original, pipeline, verify_each=False)
    except osg.OnnxSurgeonError as exc:
        # convert-opset (to 17) and downgrade-opset (to 13) below the opset a form needs
        # refuse, naming it.
        if pipeline in OPSET_DOWN and form in qm.MIN_OPSET:
            assert f"needs opset {qm.MIN_OPSET[form]}" in str(exc), str(exc)
            return
        raise
    _check(original, rewritten, arch, form, pipeline, oracle, counts=pipeline not in DEQUANTIZING)


# The lowest opset each form exists at (13 for the opset-17 exports: LayerNormalization is
# decomposed there, per-axis Q/DQ begins there), and the refusal one below. Stored int4
# weights (per axis) widen to int8 with the same integers below 21: bit-identical.
LOWEST = {"qdq-int16": 21, "qdq-int4-blocked": 21}
BELOW = {
    "qdq-per-channel": (12, "per-axis quantization"),
    "qdq-int16": (20, "int16 quantization"),
    "qdq-int4": (12, "per-axis quantization"),
    "qdq-int4-blocked": (20, "blocked quantization"),
}


@pytest.mark.parametrize("arch,form", MODELS, ids=[f"{a}-{f}" for a, f in MODELS])
def test_convert_opset_to_lowest_and_refusal_below(arch, form, quant_model, oracle):
    original = onnx.load(str(quant_model(arch, form)))
    lowest = LOWEST.get(form, 13)
    rewritten = osg.run(original, f"convert-opset(opset={lowest})", verify_each=False)
    assert {o.version for o in rewritten.opset_import if o.domain in ("", "ai.onnx")} == {lowest}
    _check(original, rewritten, arch, form, f"convert-opset to {lowest}", oracle)
    if form not in BELOW:
        return
    below, why = BELOW[form]
    with pytest.raises(osg.OnnxSurgeonError, match=f"{why}.* needs opset {lowest}"):
        osg.run(original, f"convert-opset(opset={below})", verify_each=False)


def test_run_summary_and_report_carry_quantization(quant_model, run_cli, tmp_path):
    src = quant_model("cnn", "qdq-per-channel")
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "fold-qdq(weights=true)", "--report", "json", src, "-o", out)
    report = json.loads(proc.stdout)
    q = report[0]["quantization"]
    assert q["before"]["dequantize_linear"] > q["after"]["dequantize_linear"]
    assert q["before"]["quantized_weight_bytes"] > q["after"]["quantized_weight_bytes"]
    assert "Q/DQ nodes" in proc.stderr and "quantized weights" in proc.stderr, proc.stderr
    # A float model's summary has no quantization rows.
    float_out = tmp_path / "float.onnx"
    proc = run_cli("--pass", "simplify", qm.export_float("cnn", src.parent), "-o", float_out)
    assert "Q/DQ nodes" not in proc.stderr


@pytest.mark.parametrize("arch", qm.ARCHS)
def test_int4_weights_widen_to_int8_below_opset_21(arch, quant_model, oracle):
    """The same integers, scales and zero points as int8: bit-identical in onnxruntime, the
    Q/DQ counts kept, no 4-bit tensor left."""
    original = onnx.load(str(quant_model(arch, "qdq-int4")))
    four_bit = (onnx.TensorProto.INT4, onnx.TensorProto.UINT4)
    assert any(t.data_type in four_bit for t in original.graph.initializer)
    for opset in (20, 19, 13):
        rewritten = osg.run(original, f"convert-opset(opset={opset})")
        oracle.assert_valid(rewritten)
        assert not any(t.data_type in four_bit for t in rewritten.graph.initializer)
        assert _counts(rewritten) == _counts(original)
        feeds = qm.inputs(arch)[0]
        for want, got in zip(_run(original, feeds), _run(rewritten, feeds)):
            np.testing.assert_array_equal(got, want)
