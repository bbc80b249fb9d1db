"""simplify's view and neutral-operand rules on real exports, checked in onnxruntime:
slice-chain (Slices of different axes merged), transpose-view (a bidirectional LSTM's
direction Transpose merged with its Reshape), fuse-convtranspose-bn (BatchNormalization
after ConvTranspose, grouped too; not into float16 weights), flatten-noop and neutral-operand. The rules' forms and
refusals are pinned by the goldens in tests/golden/{resolve-shapes,fuse-reshapes,
fuse-conv-bn,strip-identity-cast}."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper

torch = pytest.importorskip("torch")
nn = torch.nn


def _export(net, x, opset, dynamic=None):
    buffer = io.BytesIO()
    torch.onnx.export(
        net.eval(), (x,), buffer, input_names=["x"], opset_version=opset, dynamic_axes=dynamic, dynamo=False
    )
    return onnx.load_from_string(buffer.getvalue())


def _randomize(net):
    torch.manual_seed(0)
    with torch.no_grad():
        for name, p in net.named_parameters():
            p.copy_(torch.randn(p.shape) * (0.2 if p.dim() <= 1 else 1 / max(1, p[0].numel()) ** 0.5))
        for m in net.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(0.2 * torch.randn(m.running_mean.shape))
                m.running_var.copy_(0.5 + torch.rand(m.running_var.shape))
    return net


def _same(oracle, model, out, feeds, rtol=1e-5, atol=1e-5):
    want = list(oracle.run_model(model, feeds).values())
    got = list(oracle.run_model(out, feeds).values())
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


class Crnn(nn.Module):
    """A CTC recognizer's head: conv collapsing height, two bidirectional LSTMs, a Linear."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU(), nn.MaxPool2d((4, 2)))
        self.rnn = nn.LSTM(8, 6, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(12, 5)

    def forward(self, x):
        f = self.conv(x).squeeze(2).permute(0, 2, 1)
        return self.fc(self.rnn(f)[0]).softmax(-1)


@pytest.mark.parametrize("opset", [13, 17])
def test_lstm_direction_transposes_merge_with_reshapes(oracle, opset):
    x = torch.randn(1, 3, 4, 18)
    model = _export(_randomize(Crnn()), x, opset)
    assert oracle.op_histogram(model).get("Transpose") == 4
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    # The input permute stays (it reorders dims above 1); the LSTMs' and the one before
    # the Linear are views and merged with their Reshapes.
    assert hist.get("Transpose") == 1 and hist.get("Reshape") == 2, hist
    _same(oracle, model, out, {"x": x.numpy()})


def test_lstm_direction_transposes_stay_with_dynamic_batch(oracle):
    x = torch.randn(2, 3, 4, 18)
    model = _export(_randomize(Crnn()), x, 13, {"x": {0: "b"}})
    out = osg.run(model, "simplify")
    for batch in (1, 3):
        feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 3, 4, 18)).astype(np.float32)}
        _same(oracle, model, out, feeds)


class Pose(nn.Module):
    """A heatmap head: ConvTranspose upsamplings each followed by BatchNorm (one grouped)."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 8, 3, 2, 1),
            nn.ReLU(),
            nn.ConvTranspose2d(8, 6, 4, 2, 1),
            nn.BatchNorm2d(6),
            nn.ReLU(),
            nn.ConvTranspose2d(6, 4, 3, 2, 1, output_padding=1, groups=2, bias=False),
            nn.BatchNorm2d(4),
            nn.ReLU(),
            nn.Conv2d(4, 3, 1),
        )

    def forward(self, x):
        return self.body(x)


@pytest.mark.parametrize("opset", [11, 13, 17])
def test_batchnorm_after_convtranspose_folds(oracle, opset):
    x = torch.randn(1, 3, 12, 10)
    model = _export(_randomize(Pose()), x, opset)
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    assert oracle.op_histogram(model).get("BatchNormalization") == 2
    assert "BatchNormalization" not in hist, hist
    assert hist.get("ConvTranspose") == 2, hist
    _same(oracle, model, out, {"x": x.numpy()})


class Crops(nn.Module):
    """Strided crops of two axes (as LeViT's subsampling attention writes them)."""

    def forward(self, x):
        return torch.relu(x[:, ::2][:, :, 1::3] + 1), x[:, 1:5, :, -4:].flatten(1)


@pytest.mark.parametrize("opset", [13, 17])
def test_slices_of_different_axes_merge(oracle, opset):
    x = torch.randn(2, 6, 9, 8)
    model = _export(Crops(), x, opset, {"x": {0: "b"}})
    assert oracle.op_histogram(model).get("Slice", 0) >= 4
    out = osg.run(model, "simplify")
    assert oracle.op_histogram(out).get("Slice") == 2, oracle.op_histogram(out)
    for batch in (1, 3):
        feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 6, 9, 8)).astype(np.float32)}
        _same(oracle, model, out, feeds)


def _ml_like_model():
    """The tail of a converted classifier: probabilities * 1 and a rank-2 Flatten of indices."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 4])
    y = helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["n", 4])
    i = helper.make_tensor_value_info("indices", TensorProto.INT64, ["n", 2])
    nodes = [
        helper.make_node("Softmax", ["x"], ["p"], axis=1),
        helper.make_node("Mul", ["p", "one"], ["probabilities"]),
        helper.make_node("TopK", ["x", "k"], ["v", "idx"]),
        helper.make_node("Flatten", ["idx"], ["flat"], axis=1),
        helper.make_node("Sub", ["flat", "izero"], ["indices"]),
    ]
    inits = [
        helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        helper.make_tensor("k", TensorProto.INT64, [1], [2]),
        helper.make_tensor("izero", TensorProto.INT64, [1], [0]),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y, i], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def test_neutral_operands_and_rank2_flatten_go(oracle):
    model = _ml_like_model()
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    assert hist == {"Softmax": 1, "TopK": 1}, hist
    assert [o.name for o in out.graph.output] == ["probabilities", "indices"]
    feeds = {"x": np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)}
    _same(oracle, model, out, feeds, rtol=0, atol=0)


def _to_float16(model):
    """The model with float16 weights and values, as a float16 conversion writes it."""
    from onnx import numpy_helper

    model = onnx.ModelProto.FromString(model.SerializeToString())
    for i, t in enumerate(model.graph.initializer):
        if t.data_type == TensorProto.FLOAT:
            t16 = numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name)
            model.graph.initializer[i].CopyFrom(t16)
    for v in [*model.graph.input, *model.graph.output]:
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    del model.graph.value_info[:]
    return model


def test_batchnorm_stays_beside_float16_weights(oracle):
    """Folding into float16 weights rounds W * s once where the model rounds twice: left."""
    x = torch.randn(1, 3, 12, 10)
    model = _to_float16(_export(_randomize(Pose()), x, 13))
    out = osg.run(model, "simplify")
    assert oracle.op_histogram(out).get("BatchNormalization") == 2, oracle.op_histogram(out)
    feeds = {"x": x.numpy().astype(np.float16)}
    _same(oracle, model, out, feeds, rtol=0, atol=0)


def test_convtranspose_bias_add_and_batchnorm_fold(oracle):
    """paddle2onnx's form: ConvTranspose without bias, Add(c[1,M,1,1]), BatchNormalization."""
    rng = np.random.default_rng(1)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    m = 6
    inits = [
        onnx.numpy_helper.from_array(f32(4, m // 2, 3, 3), "W"),
        onnx.numpy_helper.from_array(f32(1, m, 1, 1), "c"),
        onnx.numpy_helper.from_array(1 + 0.2 * f32(m), "scale"),
        onnx.numpy_helper.from_array(f32(m), "bias"),
        onnx.numpy_helper.from_array(f32(m), "mean"),
        onnx.numpy_helper.from_array(0.5 + np.abs(f32(m)), "var"),
    ]
    nodes = [
        helper.make_node("ConvTranspose", ["x", "W"], ["t"], group=2, strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["t", "c"], ["a"]),
        helper.make_node("BatchNormalization", ["a", "scale", "bias", "mean", "var"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 7])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)], ir_version=9
    )
    out = osg.run(model, "simplify")
    assert oracle.op_histogram(out) == {"ConvTranspose": 1}, oracle.op_histogram(out)
    _same(oracle, model, out, {"x": f32(1, 4, 5, 7)})
