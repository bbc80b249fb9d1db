"""lower-contrib-ops on DynamicQuantizeLSTM (quantize_dynamic's LSTM) against onnxruntime's
kernel, on torch LSTMs exported and quantized by onnxruntime (forward and bidirectional,
initial states, weights per tensor and per channel). onnxruntime quantizes X and each hidden
state to 8 bits on the fly; the lowering is the float LSTM on the dequantized weights, hence
opt-in (inexact=true), within the measured bound below; without it the node stays, named."""

from __future__ import annotations

import logging

import numpy as np
import onnx
import pytest
import torch
from test_lower_contrib_ops import _contrib_nodes, _counts, _lower, _ort

# The largest difference measured (outputs in (-1, 1)): 0.0031, onnxruntime's per-step
# activation quantization against float activations (8 steps of 8 inputs, hidden 16).
BOUND = 0.005


class _Lstm(torch.nn.Module):
    def __init__(self, bidirectional, states):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, bidirectional=bidirectional)
        self.states = states

    def forward(self, x, h0=None, c0=None):
        out, (h, c) = self.lstm(x, (h0, c0)) if self.states else self.lstm(x)
        return out, h, c


def _quantized(tmp_path, bidirectional, states, per_channel):
    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    torch.manual_seed(0)
    d = 2 if bidirectional else 1
    args = (torch.randn(8, 2, 8),) + ((torch.zeros(d, 2, 16), torch.zeros(d, 2, 16)) if states else ())
    names = ["x", "h0", "c0"][: len(args)]
    torch.onnx.export(
        _Lstm(bidirectional, states).eval(),
        args,
        tmp_path / "lstm.onnx",
        opset_version=17,
        input_names=names,
        output_names=["y", "yh", "yc"],
        dynamo=False,
    )
    quantize_dynamic(
        tmp_path / "lstm.onnx",
        tmp_path / "q.onnx",
        per_channel=per_channel,
        weight_type=QuantType.QInt8,
        op_types_to_quantize=["LSTM"],
    )
    model = onnx.load(tmp_path / "q.onnx")
    rng = np.random.default_rng(1)
    feeds = [
        {
            n: (rng.standard_normal((8, 2, 8)) if n == "x" else rng.standard_normal((d, 2, 16)) * 0.5).astype(
                np.float32
            )
            for n in names
        }
        for _ in range(3)
    ]
    return model, feeds


@pytest.mark.parametrize("per_channel", [False, True], ids=["per_tensor", "per_channel"])
@pytest.mark.parametrize("states", [False, True], ids=["zero_states", "initial_states"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["forward", "bidirectional"])
def test_dynamic_quantize_lstm(tmp_path, bidirectional, states, per_channel):
    model, feeds = _quantized(tmp_path, bidirectional, states, per_channel)
    assert "DynamicQuantizeLSTM" in {n.op_type for n in model.graph.node}
    lowered, report = _lower(model, "lower-contrib-ops(inexact=true)")
    assert _contrib_nodes(lowered) == [], _counts(report)
    assert _counts(report)["lower-dynamic-quantize-lstm"] == 1
    weights = {t.data_type for t in lowered.graph.initializer if len(t.dims) == 3}
    assert weights == {onnx.TensorProto.INT8}  # the quantized weights kept
    for f in feeds:
        want, got = _ort(model, f), _ort(lowered, f)
        for name in want:
            assert want[name].shape == got[name].shape
            assert np.abs(want[name] - got[name]).max() <= BOUND, (name, np.abs(want[name] - got[name]).max())


def test_dynamic_quantize_lstm_scale_of_unknown_rank_refused(tmp_path):
    model, _ = _quantized(tmp_path, False, False, False)
    node = next(n for n in model.graph.node if n.op_type == "DynamicQuantizeLSTM")
    scale = next(t for t in model.graph.initializer if t.name == node.input[8])
    model.graph.initializer.remove(scale)
    model.graph.input.append(onnx.helper.make_tensor_value_info(scale.name, onnx.TensorProto.FLOAT, None))
    lowered, report = _lower(model, "lower-contrib-ops(inexact=true)")
    assert _contrib_nodes(lowered) == ["DynamicQuantizeLSTM"]
    assert _counts(report) == {
        "left: com.microsoft.DynamicQuantizeLSTM: a scale of unknown rank or not [D] / [D, 4H]": 1
    }


def test_dynamic_quantize_lstm_needs_inexact(tmp_path):
    model, _ = _quantized(tmp_path, False, False, False)
    lowered, report = _lower(model)
    assert _contrib_nodes(lowered) == ["DynamicQuantizeLSTM"]
    assert _counts(report) == {
        "left: com.microsoft.DynamicQuantizeLSTM: onnxruntime quantizes X and each hidden state per step: the float "
        "LSTM differs within its quantization (inexact=true lowers it)": 1
    }
