"""gather-scalar-to-reshape (and --target tflite, which plans it for Gather when
drops-leading-axis) against onnxruntime on torch exports: x[t] of time-major sequences
(targets/probes/tflite_layout_models.py, where onnx2tf got the scalar Gather's result
transposed) and tf2onnx's time-major Scan as unroll-scan writes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
import torch.nn as nn


def run(path: Path, feeds: dict) -> list[np.ndarray]:
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    return sess.run(None, {k: v for k, v in feeds.items() if k in names})


def op_types(path: Path) -> list[str]:
    return [n.op_type for n in onnx.load(str(path)).graph.node]


class TimeMajorRnn(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.x_in, self.h_in = nn.Linear(features, 4), nn.Linear(4, 4)

    def forward(self, x):
        h, ys = torch.zeros(x.shape[1], 4), []
        for t in range(x.shape[0]):
            h = torch.tanh(self.x_in(x[t]) + self.h_in(h))
            ys.append(h)
        return torch.stack(ys), h


class LastStep(nn.Module):
    def forward(self, x):
        return x[-1] * 2


def export(module: nn.Module, shape: tuple, path: Path) -> dict:
    torch.manual_seed(0)
    x = torch.randn(*shape)
    torch.onnx.export(module, (x,), str(path), input_names=["x"], opset_version=13, dynamo=False)
    return {"x": x.numpy()}


CASES = {
    "rnn_time_major": (lambda: TimeMajorRnn(3), (5, 2, 3)),
    "rnn_square": (lambda: TimeMajorRnn(4), (5, 4, 4)),
    "last_step_rank4": (LastStep, (3, 2, 4, 5)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rewrite_is_exact(name, tmp_path, run_cli):
    make, shape = CASES[name]
    src = tmp_path / "src.onnx"
    feeds = export(make(), shape, src)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "extract-constants,gather-scalar-to-reshape", src, "-o", out)
    assert "Reshape" in op_types(out)
    for a, b in zip(run(src, feeds), run(out, feeds), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CASES))
def test_tflite_target_plans_it(name, tmp_path, run_cli):
    make, shape = CASES[name]
    src = tmp_path / "src.onnx"
    feeds = export(make(), shape, src)
    check = run_cli("check", "--target", "tflite", src, expect_rc=None)
    assert "lacks Gather when drops-leading-axis" in check.stdout
    assert "-> gather-scalar-to-reshape" in check.stdout
    out = tmp_path / "out.onnx"
    if name == "rnn_square":
        # Its Reshapes [1,4,4] -> [4,4] are a square-ncw-input form: named, nothing written.
        r = run_cli("--target", "tflite", src, "-o", out, expect_rc=None)
        assert r.returncode != 0 and "square-ncw-input" in r.stderr and not out.exists()
        return
    run_cli("--target", "tflite", src, "-o", out)
    after = run_cli("check", "--target", "tflite", out, expect_rc=None)
    assert "drops-leading-axis" not in after.stdout
    for a, b in zip(run(src, feeds), run(out, feeds), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_tf2onnx_time_major_scan(repo_root, tmp_path, run_cli):
    src = repo_root / "tests/models/.generated/tf_custom_rnn_timemajor_op13.onnx"
    if not src.exists():
        pytest.skip("corpus not generated (the tf exporter venv)")
    feeds = dict(np.load(src.with_suffix(".inputs.npz")))
    out = tmp_path / "out.onnx"
    r = run_cli("--target", "tflite", src, "-o", out)
    assert "unroll-scan" in r.stderr and "gather-scalar-to-reshape" in r.stderr
    assert "Scan" not in op_types(out)
    for a, b in zip(run(src, feeds), run(out, feeds), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


class LstmState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 8, batch_first=True)

    def forward(self, x, h, c):
        return self.lstm(x, (h, c))[0]


def test_tflite_names_lstm_with_initial_state_inputs(tmp_path, run_cli):
    """onnx2tf dropped axis 0 of a rank-3 initial state held channels-last: a state that is a
    graph input stays named; unrolled by hand (unroll-rnn, then --target) it is exact."""
    torch.manual_seed(0)
    x, h, c = torch.randn(1, 5, 6), torch.randn(1, 1, 8), torch.randn(1, 1, 8)
    src, out = tmp_path / "src.onnx", tmp_path / "out.onnx"
    torch.onnx.export(LstmState(), (x, h, c), str(src), input_names=["x", "h", "c"], opset_version=13, dynamo=False)
    r = run_cli("--target", "tflite", src, "-o", out, expect_rc=None)
    assert r.returncode != 0 and "lacks LSTM when dynamic-input:5" in r.stderr and not out.exists()
    run_cli("--pass", "unroll-rnn", "--target", "tflite", src, "-o", out)
    assert "LSTM" not in op_types(out)
    feeds = {"x": x.numpy(), "h": h.numpy(), "c": c.numpy()}
    for a, b in zip(run(src, feeds), run(out, feeds), strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
