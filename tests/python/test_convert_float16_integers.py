"""convert-float16 on models that compute integers in float: dynamically quantized models.

Two ways float16 breaks them, both measured on models exported from torch and quantized by
onnxruntime's quantize_dynamic:
  - MatMulInteger/ConvInteger sum products of 8-bit integers; past 65504 the Cast of that
    sum to float16 is infinite (a 64-wide MLP layer reaches 72198). The Cast and the Mul by
    the scales after it keep float32.
  - A chain that computes an integer for a Cast to int32 (onnxruntime's early dynamic
    quantizer wrote the bias as Cast<int32>(Floor(bias / (x_scale * w_scale)))): in float16
    the integer changes past 2048 and the product of two small scales is subnormal. The
    chain keeps float32 unless its bound is within 2048.
Evaluated in true float16 arithmetic (onnx's reference evaluator) and in onnxruntime with
its graph optimizations off (its fused MatMulIntegerToFloat hides the overflow), with
keep-io-types both ways."""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")
torch = pytest.importorskip("torch")

RTOL = 2e-2  # relative to the output's largest magnitude; measured at most 7.4e-3


def _ort(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def _reference(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, feeds)


def _relative_error(got: np.ndarray, want: np.ndarray) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def _mlp(directory) -> onnx.ModelProto:
    """A torch MLP (64 -> 128 -> 32), quantize_dynamic'ed: MatMulInteger sums 64 products."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).eval()
    src, out = directory / "mlp.onnx", directory / "mlp.dynamic.onnx"
    torch.onnx.export(module, (torch.randn(4, 64),), str(src), opset_version=13, input_names=["x"], dynamo=False)
    quantize_dynamic(str(src), str(out), weight_type=QuantType.QUInt8)
    return onnx.load(str(out))


def _conv_with_runtime_bias(directory) -> onnx.ModelProto:
    """A torch Conv2d(16, 32, 3) quantized as onnxruntime's early dynamic quantizer wrote it:
    the input's scale and zero point computed at run time, uint8 weights, the bias quantized
    at run time as Cast<int32>(Floor(bias / (x_scale * w_scale))) and added to ConvInteger's
    sum, the sum scaled back by x_scale * w_scale."""
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(16, 32, 3, padding=1)
    weight, bias = conv.weight.detach().numpy(), conv.bias.detach().numpy()
    lo, hi = float(weight.min()), float(weight.max())
    w_scale = np.float32((hi - lo) / 255)
    w_zp = np.uint8(round(-lo / w_scale))
    wq = np.clip(np.round(weight / w_scale) + w_zp, 0, 255).astype(np.uint8)
    inits = [
        nh.from_array(wq, "wq"),
        nh.from_array(np.array(w_zp), "w_zp"),
        nh.from_array(np.array(w_scale), "w_scale"),
        nh.from_array(bias.reshape(1, 32, 1, 1).astype(np.float32), "bias"),
        nh.from_array(np.array(255, np.float32), "qrange"),
        nh.from_array(np.array(0, np.float32), "zero"),
    ]
    node = h.make_node
    nodes = [
        node("ReduceMin", ["x"], ["mn"], keepdims=0),
        node("ReduceMax", ["x"], ["mx"], keepdims=0),
        node("Sub", ["mx", "mn"], ["span"]),
        node("Div", ["span", "qrange"], ["x_scale"]),
        node("Sub", ["zero", "mn"], ["neg_mn"]),
        node("Div", ["neg_mn", "x_scale"], ["zp_f"]),
        node("Floor", ["zp_f"], ["zp_fl"]),
        node("Cast", ["zp_fl"], ["x_zp"], to=T.UINT8),
        node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        node("ConvInteger", ["xq", "wq", "x_zp", "w_zp"], ["acc"], pads=[1, 1, 1, 1]),
        node("Mul", ["x_scale", "w_scale"], ["b_scale"]),
        node("Div", ["bias", "b_scale"], ["bq_f"]),
        node("Floor", ["bq_f"], ["bq_fl"]),
        node("Cast", ["bq_fl"], ["bq"], to=T.INT32),
        node("Add", ["acc", "bq"], ["acc_b"]),
        node("Cast", ["acc_b"], ["acc_f"], to=T.FLOAT),
        node("Mul", ["acc_f", "b_scale"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "conv_runtime_bias",
        [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 16, 16])],
        [h.make_tensor_value_info("y", T.FLOAT, [1, 32, 16, 16])],
        inits,
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 10)], ir_version=6)
    onnx.checker.check_model(model, full_check=True)
    return model


MODELS = {
    # name: (builder, the reason the pass must report)
    "mlp-matmulinteger": (_mlp, "casts an integer sum beyond float16"),
    "conv-runtime-bias": (_conv_with_runtime_bias, "computes an integer not bounded by 2048 for a Cast to INT32"),
}


@pytest.mark.parametrize("keep_io", [True, False], ids=["keep-io", "fp16-io"])
@pytest.mark.parametrize("name", MODELS, ids=list(MODELS))
def test_integer_computations_stay_exact_in_true_float16(name, keep_io, tmp_path, oracle):
    build, reason = MODELS[name]
    model = build(tmp_path)
    x = np.random.default_rng(0).standard_normal([d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim])
    want = _ort(model, {"x": x.astype(np.float32)})[0]
    report = []
    half = osg.run(model, f"convert-float16(keep-io-types={str(keep_io).lower()})", report=report)
    oracle.assert_valid(half)
    counts = report[0]["counts"]
    assert any(reason in key for key in counts if key.startswith("kept-fp32-range: ")), counts
    assert counts.get("nodes-fp16", 0) > 0, counts
    feeds = {"x": x.astype(np.float32 if keep_io else np.float16)}
    for run in (_reference, _ort):
        assert _relative_error(run(half, feeds)[0], want) < RTOL, run.__name__


def test_the_integers_a_cast_makes_are_the_float32_ones(tmp_path):
    """The runtime-quantized bias (about 4000 here, past float16's exact 2048, from a scale
    product of 1.8e-5, subnormal in float16) comes out identical to float32's."""
    model = _conv_with_runtime_bias(tmp_path)
    model.graph.output.append(h.make_tensor_value_info("bq", T.INT32, None))
    x = np.random.default_rng(0).standard_normal((1, 16, 16, 16)).astype(np.float32)
    want = _ort(model, {"x": x})[1]
    assert np.abs(want).max() > 2048
    half = osg.run(model, "convert-float16")
    for run in (_reference, _ort):
        np.testing.assert_array_equal(run(half, {"x": x})[1], want, err_msg=run.__name__)


def test_an_integer_bounded_by_2048_computes_in_float16():
    """Floor(x * 8) of a Tanh is within [-8, 8]: its chain converts."""
    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (float[6] X) => (int32[6] Q) <float eight = {8.0}> {
  t = Tanh(X)
  s = Mul(t, eight)
  f = Floor(s)
  Q = Cast<to = 6>(f)
}""")
    report = []
    osg.run(model, "convert-float16", report=report)
    assert "kept-fp32-range" not in report[0]["counts"], report[0]["counts"]
    assert report[0]["counts"]["nodes-fp16"] == 3, report[0]["counts"]
