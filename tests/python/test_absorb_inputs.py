"""absorb-inputs on torch exports, checked in onnxruntime: Pads go into the
Conv/AveragePool/MaxPool pads they mean, a zero LSTM/GRU initial state built from the batch
size is dropped, and what the op's padding would not reproduce stays. The rules' forms and
refusals are pinned by tests/golden/absorb-inputs/."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional


class PadNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, stride=2)
        self.c2 = torch.nn.Conv1d(8, 8, 3)
        self.c3 = torch.nn.Conv2d(8, 8, 3, padding=1)

    def forward(self, x):
        y = self.c1(F.pad(x, (1, 2, 0, 1)))  # zero Pad -> Conv, asymmetric: absorbed
        y = F.max_pool2d(F.pad(y, (1, 1, 1, 1), value=float("-inf")), 3, 1)  # -inf -> MaxPool: absorbed
        y = F.avg_pool2d(F.pad(torch.relu(y), (1, 1, 1, 1)), 3, 1)  # zero -> AveragePool: absorbed
        z = F.max_pool2d(F.pad(y, (1, 1, 1, 1)), 3, 2)  # zero -> MaxPool: stays
        w = self.c3(F.pad(y, (1, 1, 1, 1), mode="reflect"))  # reflect: stays
        v = self.c3(F.pad(y, (1, 1, 1, 1), value=0.5))  # value 0.5: stays
        q = self.c2(F.pad(y.mean(2), (2, 0)))  # causal 1-D pad: absorbed
        return z.sum() + w.mean((2, 3)) + v.mean((2, 3)) + q.mean(2)


class RnnNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(6, 16, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(32, 8, batch_first=True)

    def forward(self, x):
        h0 = torch.zeros(4, x.size(0), 16)
        c0 = torch.zeros(4, x.size(0), 16)
        y, _ = self.lstm(x, (h0, c0))
        y, h = self.gru(y, torch.zeros(1, x.size(0), 8))
        return y, h


def _export(net, x, opset, dynamic=None):
    torch.manual_seed(0)
    buffer = io.BytesIO()
    torch.onnx.export(
        net.eval(), (x,), buffer, input_names=["x"], opset_version=opset, dynamic_axes=dynamic, dynamo=False
    )
    return onnx.load_from_string(buffer.getvalue())


@pytest.mark.parametrize("opset", [13, 18])
def test_pads_absorbed_where_exact(oracle, opset):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 20, 20)
    model = _export(PadNet(), x, opset)
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    assert hist.get("Pad") == 3, hist  # zero->MaxPool, reflect, 0.5 stay
    feeds = {"x": x.numpy()}
    (want,) = oracle.run_model(model, feeds).values()
    (got,) = oracle.run_model(out, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


class NonNegativePadNet(torch.nn.Module):
    """A DB text detector's stem: ReLU (or ReLU6), a zero Pad, MaxPool."""

    def __init__(self):
        super().__init__()
        self.c = torch.nn.Conv2d(3, 8, 3, stride=2)

    def forward(self, x):
        y = F.max_pool2d(F.pad(torch.relu(self.c(x)), (1, 1, 1, 1)), 3, 2)  # absorbed
        z = F.max_pool2d(F.pad(F.relu6(y), (0, 1, 0, 1)), 2, 2)  # Clip(0, 6): absorbed
        w = F.max_pool2d(F.pad(y - 1, (1, 1, 1, 1)), 3, 1)  # may be negative: stays
        return z.mean((2, 3)) + w.mean((2, 3))


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_zero_pad_of_nonnegative_values_absorbed_into_maxpool(oracle, opset):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 21, 21)
    model = _export(NonNegativePadNet(), x, opset)
    out = osg.run(model, "simplify")
    assert oracle.op_histogram(out).get("Pad") == 1, oracle.op_histogram(out)
    feeds = {"x": x.numpy()}
    (want,) = oracle.run_model(model, feeds).values()
    (got,) = oracle.run_model(out, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [13, 18])
def test_zero_rnn_state_dropped(oracle, opset):
    torch.manual_seed(0)
    x = torch.randn(3, 7, 6)
    model = _export(RnnNet(), x, opset, {"x": {0: "b", 1: "t"}})
    assert oracle.op_histogram(model).get("ConstantOfShape")
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    for op in ("ConstantOfShape", "Shape", "Concat", "Expand"):
        assert op not in hist, hist
    for n in out.graph.node:
        if n.op_type in ("LSTM", "GRU"):
            assert len(n.input) <= 5, n
    for batch in (1, 3):
        feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 5, 6)).astype(np.float32)}
        want = list(oracle.run_model(model, feeds).values())
        got = list(oracle.run_model(out, feeds).values())
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
