"""fuse-reshapes' view rules on torch exports, checked in onnxruntime at several
batch sizes: Squeeze/Unsqueeze/Flatten next to a Reshape become one Reshape. With a dynamic
batch the last Reshape's shape, built from the input's batch at run time, stays computed
(resolve-shapes writes no -1). The forms and refusals are pinned by
tests/golden/fuse-reshapes/view_*.txt."""

from __future__ import annotations

import io

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

torch = pytest.importorskip("torch")


class Views(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(48, 48)

    def forward(self, x):  # [B, 1, 8, 6]
        b = x.shape[0]
        a = self.linear(x.squeeze(1).reshape(b, 48))  # Squeeze -> Reshape
        c = torch.relu(a.reshape(b, 6, 8).unsqueeze(1))  # Reshape -> Unsqueeze
        d = torch.flatten(c.reshape(b, 2, 24), 1)  # Reshape -> Flatten
        e = d.reshape(b, 48, 1).squeeze(-1)  # Reshape -> Squeeze
        return e.unsqueeze(0).reshape(b, 4, 12).sigmoid()  # Unsqueeze -> Reshape, b from x


@pytest.mark.parametrize("dynamic", [False, True])
def test_view_chains_become_one_reshape(oracle, dynamic):
    torch.manual_seed(0)
    x = torch.randn(2, 1, 8, 6)
    buffer = io.BytesIO()
    axes = {"x": {0: "b"}} if dynamic else None
    torch.onnx.export(
        Views().eval(), (x,), buffer, input_names=["x"], opset_version=17, dynamic_axes=axes, dynamo=False
    )
    model = onnx.load_from_string(buffer.getvalue())
    out = osg.run(model, "simplify")
    hist = oracle.op_histogram(out)
    for op in ("Squeeze", "Flatten"):
        assert op not in hist, hist
    if not dynamic:
        assert "Unsqueeze" not in hist, hist
        assert hist.get("Reshape") == 3, hist  # into the Gemm, out of it, the final view
    else:  # the last shape's batch, computed: Shape -> Gather -> Unsqueeze -> Concat
        assert hist.get("Unsqueeze") == 1 and hist.get("Reshape") == 4, hist
    for batch in (1, 2, 5) if dynamic else (2,):
        feeds = {"x": np.random.default_rng(batch).standard_normal((batch, 1, 8, 6)).astype(np.float32)}
        (want,) = oracle.run_model(model, feeds).values()
        (got,) = oracle.run_model(out, feeds).values()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
