"""--target tflite folds a Pad's computed pads (Pad when dynamic-input:1 -> simplify): torch
writes F.pad's constant pads as ops on constants, which onnx2tf applied to the channels
(targets/probes/tflite_pad_models.py)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F


class PadDepthwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(8, 8, 3, groups=8)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 2, 0, 1)))


def test_tflite_folds_computed_pads(tmp_path, run_cli):
    torch.manual_seed(0)
    x = torch.randn(1, 8, 9, 7)
    src, out = tmp_path / "src.onnx", tmp_path / "out.onnx"
    torch.onnx.export(PadDepthwise().eval(), (x,), str(src), input_names=["x"], opset_version=13, dynamo=False)
    check = run_cli("check", "--target", "tflite", src, expect_rc=None)
    assert "lacks Pad when dynamic-input:1" in check.stdout
    run_cli("--target", "tflite", src, "-o", out)
    pads = [n for n in onnx.load(str(out)).graph.node if n.op_type == "Pad"]
    inits = {i.name for i in onnx.load(str(out)).graph.initializer}
    assert all(p.input[1] in inits for p in pads)
    feeds = {"x": x.numpy()}
    a = ort.InferenceSession(str(src)).run(None, feeds)[0]
    b = ort.InferenceSession(str(out)).run(None, feeds)[0]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
