"""convert-float16 on dynamically quantized models: what a dynamic quantizer reads stays float32.

DynamicQuantizeLinear (and com.microsoft's DynamicQuantizeLSTM and DynamicQuantizeMatMul)
quantize a float value from its own range at run time. A rounding anywhere upstream (a
bias, a scale, an activation stored in float16) moves elements across quantization levels:
a 2^-11 relative change becomes a full step, 1/255 of the range, and the next layers carry
it. On a torch CRNN (Conv-ReLU-MaxPool blocks, a bidirectional 2-layer LSTM, a Linear whose
logits reach about 10, as a trained OCR's do) quantized by onnxruntime's quantize_dynamic
(ConvInteger, DynamicQuantizeLSTM, MatMulInteger), converting everything but the quantizers
puts 10% of the logits off by up to 0.19 (rtol 5e-2, atol 1e-2); keeping the nodes upstream
of each dynamic quantizer float32 leaves 1.2e-4 of the logits' range.

The LSTM model runs in onnxruntime only (the reference evaluator has no com.microsoft ops);
the same CNN with a Linear head, quantized without the LSTM, is also evaluated in true
float16 arithmetic (onnx's reference evaluator)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

ort = pytest.importorskip("onnxruntime")
pytest.importorskip("onnxruntime.quantization")
torch = pytest.importorskip("torch")

BOUND = 1e-3  # relative to the logits' largest magnitude; measured at most 1.3e-4
GAIN = 10.0  # the naive conversion is at least 10x worse
REASON = "computes a value a dynamic quantizer reads"


def _crnn(directory, lstm: bool) -> onnx.ModelProto:
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from torch import nn

    torch.manual_seed(0)

    class Crnn(nn.Module):
        def __init__(self):
            super().__init__()
            layers, width = [], 1
            for out, pool in ((16, 2), (32, 2), (64, (2, 1)), (64, (2, 1))):
                layers += [nn.Conv2d(width, out, 3, padding=1), nn.BatchNorm2d(out, momentum=None), nn.ReLU()]
                layers.append(nn.MaxPool2d(pool))
                width = out
            self.cnn = nn.Sequential(*layers)
            self.rnn = nn.LSTM(128, 48, num_layers=2, bidirectional=True) if lstm else nn.Linear(128, 96)
            self.fc = nn.Linear(96, 40)
            with torch.no_grad():
                self.fc.weight *= 60  # logits of a trained classifier (about 10), not of a random one

        def forward(self, x):
            f = self.cnn(x)
            b, c, h, w = f.shape
            f = f.permute(3, 0, 1, 2).reshape(w, b, c * h)
            y = self.rnn(f)[0] if lstm else torch.tanh(self.rnn(f))
            return self.fc(y)

    module = Crnn().train()
    with torch.no_grad():
        for _ in range(3):
            module(torch.rand(4, 1, 32, 128))
    module.eval()
    src, out = directory / "crnn.onnx", directory / "crnn.dynamic.onnx"
    torch.onnx.export(
        module,
        (torch.rand(1, 1, 32, 128),),
        str(src),
        opset_version=13,
        input_names=["input1"],
        output_names=["out"],
        dynamic_axes={"input1": {3: "w"}, "out": {0: "t"}},
        dynamo=False,
    )
    ops = ["Conv", "MatMul", "LSTM"] if lstm else ["Conv", "MatMul"]
    quantize_dynamic(str(src), str(out), weight_type=QuantType.QInt8, op_types_to_quantize=ops)
    return onnx.load(str(out))


def _ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"input1": x})[0].astype(np.float64)


def _reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    from onnx.reference import ReferenceEvaluator

    with np.errstate(all="ignore"):
        return ReferenceEvaluator(model).run(None, {"input1": x})[0].astype(np.float64)


def _relative(got: np.ndarray, want: np.ndarray) -> float:
    if not np.isfinite(got).all():
        return float("inf")  # the naive form overflows: an integer sum past 65504
    return float(np.abs(got - want).max() / np.abs(want).max())


def _errors(model: onnx.ModelProto, run, seeds: int) -> tuple[float, float]:
    report = []
    kept = osg.run(model, "convert-float16", report=report)
    counts = report[0]["counts"]
    assert counts.get(f"kept-fp32-precision: {REASON}: float16 rounding moves its quantized levels by a full step")
    assert counts.get("nodes-fp16", 0) > 0, counts  # the head after the last quantizer converts
    naive = osg.run(model, "convert-float16(range-analysis=false)")
    worst_kept = worst_naive = 0.0
    for seed in range(seeds):
        x = np.random.default_rng(seed).uniform(0, 1, (1, 1, 32, 128)).astype(np.float32)
        want = run(model, x)
        worst_kept = max(worst_kept, _relative(run(kept, x), want))
        worst_naive = max(worst_naive, _relative(run(naive, x), want))
    return worst_kept, worst_naive


def test_dynamic_quantizer_inputs_stay_float32_lstm(tmp_path):
    model = _crnn(tmp_path, lstm=True)
    ops = {n.op_type for n in model.graph.node}
    assert {"DynamicQuantizeLSTM", "ConvInteger", "MatMulInteger", "DynamicQuantizeLinear"} <= ops, ops
    kept, naive = _errors(model, _ort, seeds=3)
    assert kept <= BOUND, (kept, naive)
    assert naive >= GAIN * kept, (kept, naive)


def test_dynamic_quantizer_inputs_stay_float32_in_true_float16(tmp_path):
    model = _crnn(tmp_path, lstm=False)
    kept, naive = _errors(model, _reference, seeds=2)
    assert kept <= BOUND, (kept, naive)
    assert naive >= GAIN * kept, (kept, naive)
