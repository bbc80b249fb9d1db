"""`--target ort-1.14` and float16 ops its CPU kernels crash on: onnxruntime 1.14.1's float16
HardSigmoid kills the process (targets/probes/fp16_ops.txt). On a MobileNetV3-style
squeeze-excite block (hardswish, hardsigmoid gate) exported by torch and converted to
float16 by convert-float16, --target ort-1.14 runs compute-in-float32(ops=HardSigmoid): the
result passes its own check, matches onnxruntime on the float16 original within float16's
tolerance, and onnxruntime 1.14 runs it where its venv is installed (the original crashes
it). onnxruntime 1.15 (profile ort-1.15) runs float16 HardSigmoid: nothing to do there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))

from harness import BACKENDS_DIR  # noqa: E402


def _cli(cli_path, *args):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def se_fp16(cli_path, tmp_path_factory):
    import torch

    class SqueezeExcite(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.fc = torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.Conv2d(8, 8, 1)

        def forward(self, x):
            y = torch.nn.functional.hardswish(self.conv(x))
            return y * torch.nn.functional.hardsigmoid(self.fc(y.mean((2, 3), keepdim=True)))

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("se")
    x = torch.randn(1, 3, 16, 16)
    raw, half = folder / "se.onnx", folder / "se_fp16.onnx"
    torch.onnx.export(SqueezeExcite().eval(), (x,), str(raw), opset_version=13, dynamo=False, input_names=["x"])
    proc = _cli(cli_path, "--pass", "convert-float16(keep-io-types=false)", raw, "-o", half)
    assert proc.returncode == 0, proc.stderr
    assert "HardSigmoid" in {n.op_type for n in onnx.load(half).graph.node}
    return half, x.numpy().astype(np.float16)


def _run(path, x):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def test_ort_1_14_computes_float16_hardsigmoid_in_float32(cli_path, se_fp16, tmp_path):
    src, x = se_fp16
    check = _cli(cli_path, "check", "--target", "ort-1.14", src)
    assert check.returncode == 1 and "lacks HardSigmoid when compute-dtype:float16" in check.stdout, check.stdout
    assert "targets/probes/fp16_ops.py" in check.stdout
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", "ort-1.14", src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "compute-in-float32(ops=HardSigmoid)" in proc.stderr
    assert _cli(cli_path, "check", "--target", "ort-1.14", out).returncode == 0
    model = onnx.load(out)
    producer = {o: n for n in model.graph.node for o in n.output}
    gates = [n for n in model.graph.node if n.op_type == "HardSigmoid"]
    assert gates
    for n in gates:  # fed by a Cast to float32
        cast = producer[n.input[0]]
        assert cast.op_type == "Cast" and cast.attribute[0].i == onnx.TensorProto.FLOAT, cast
    want, got = _run(src, x), _run(out, x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-2, atol=1e-2)
    assert _cli(cli_path, "check", "--target", "ort-1.15", src).returncode == 0  # 1.15 runs the form


def test_compute_in_float32_without_ops_changes_nothing_and_leaves_float32_alone(cli_path, se_fp16, tmp_path):
    src, _ = se_fp16
    # Without ops= there is nothing to widen (as set-input-shape without shapes).
    proc = _cli(cli_path, "--pass", "compute-in-float32", src, "-o", tmp_path / "x.onnx")
    assert proc.returncode == 0 and "changed by   no pass" in proc.stderr, proc.stderr
    assert onnx.load(tmp_path / "x.onnx").graph == onnx.load(src).graph
    twice = tmp_path / "twice.onnx"
    once = tmp_path / "once.onnx"
    assert _cli(cli_path, "--pass", "compute-in-float32(ops=HardSigmoid)", src, "-o", once).returncode == 0
    assert _cli(cli_path, "--pass", "compute-in-float32(ops=HardSigmoid)", once, "-o", twice).returncode == 0
    count = [sum(n.op_type == "Cast" for n in onnx.load(p).graph.node) for p in (once, twice)]
    assert count[0] == count[1] > 0  # the float32 HardSigmoid it wrote does not match again


@pytest.mark.skipif(
    not (BACKENDS_DIR / "ort-1.14" / "ready").is_file(),
    reason="the ort-1.14 venv is not installed (make backends-setup)",
)
def test_onnxruntime_1_14_runs_the_result(cli_path, se_fp16, tmp_path):
    src, x = se_fp16
    out = tmp_path / "out.onnx"
    assert _cli(cli_path, "--target", "ort-1.14", src, "-o", out).returncode == 0
    np.save(tmp_path / "x.npy", x)
    script = (
        "import sys, numpy as np, onnxruntime as ort\n"
        "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
        "np.save(sys.argv[3], s.run(None, {'x': np.load(sys.argv[2])})[0])\n"
    )
    old = BACKENDS_DIR / "ort-1.14" / "venv" / "bin" / "python"
    crashed = subprocess.run([str(old), "-c", script, str(src), str(tmp_path / "x.npy"), str(tmp_path / "o.npy")])
    assert crashed.returncode < 0  # the probe's finding, on a whole model: a signal
    ran = subprocess.run([str(old), "-c", script, str(out), str(tmp_path / "x.npy"), str(tmp_path / "r.npy")])
    assert ran.returncode == 0
    got, want = np.load(tmp_path / "r.npy").astype(np.float32), _run(src, x).astype(np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)


def _relu_fp16(path, opset):
    from onnx import TensorProto as T
    from onnx import helper as h

    graph = h.make_graph(
        [h.make_node("Relu", ["x"], ["r"]), h.make_node("Add", ["r", "x"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT16, [2, 4])],
        [h.make_tensor_value_info("y", T.FLOAT16, [2, 4])],
    )
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8), str(path))


def test_ort_1_14_float16_relu_only_from_opset_14(cli_path, tmp_path):
    """onnxruntime 1.14's float16 Relu-14 crashes; Relu-13 runs (targets/probes/quant_kernels.txt)."""
    at13, at14 = tmp_path / "relu13.onnx", tmp_path / "relu14.onnx"
    _relu_fp16(at13, 13)
    _relu_fp16(at14, 14)
    assert _cli(cli_path, "check", "--target", "ort-1.14", at13).returncode == 0
    check = _cli(cli_path, "check", "--target", "ort-1.14", at14)
    assert check.returncode == 1 and "lacks Relu when compute-dtype:float16,opset>=14" in check.stdout, check.stdout
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", "ort-1.14", at14, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert _cli(cli_path, "check", "--target", "ort-1.14", out).returncode == 0
    x = (np.arange(8).reshape(2, 4) - 4).astype(np.float16)
    np.testing.assert_array_equal(_run(out, x), _run(at14, x))
