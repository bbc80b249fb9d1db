"""`--target NAME --backend-check [N]` and `check --target NAME --probe`: the target's real
backend runs the result and is compared with onnxruntime on the original.

The fast tests give the CLI a fake backend: a runner speaking the runners' file protocol
(tests/backends/runners/_protocol.py) through $ONNXSURGEON_BACKEND_RUNNERS, and a "venv"
(this Python) through $ONNXSURGEON_BACKENDS_DIR. The slow ones run every real backend whose
venv `make backends-setup` installed, and are skipped (not passed) where it is missing, as
tests/python/test_backends_smoke.py is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from fake_backend import fake_backend_env  # noqa: E402
from harness import BACKENDS_DIR  # noqa: E402

FAKE_RUNNER = """
import os, sys
import numpy as np
from _protocol import Refused, main

def probe():
    return "fake 1.0"

def run(model, inputs, workdir):
    import onnxruntime as ort
    mode = os.environ.get("FAKE_BACKEND", "ok")
    if mode == "refuse":
        raise Refused("build", "fake backend: op LayerNormalization is not supported")
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    outs = s.run(None, {i.name: inputs[i.name] for i in s.get_inputs()})
    if mode == "wrong":
        outs[0] = outs[0] + np.float32(0.5)
    if mode == "zeros":
        outs[0] = np.zeros_like(outs[0])
    if mode == "noise":
        outs[0] = outs[0] + np.float32(1e-6)
    return outs, ""

if __name__ == "__main__":
    sys.exit(main(probe, run))
"""


def layernorm_model(path: Path, opset: int = 17) -> Path:
    """x [2, 8] -> LayerNormalization (a fake-runner target profile: openvino accepts it as is)."""
    rng = np.random.default_rng(0)
    nodes = [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(
        nodes,
        "ln",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [
            helper.make_tensor("g", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32)),
            helper.make_tensor("b", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32)),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


@pytest.fixture
def fake(tmp_path):
    """Env for a fake openvino backend: its runner and its ready 'venv' (this Python)."""
    return fake_backend_env(tmp_path, FAKE_RUNNER)


def run(cli_path, env, *args, mode="ok"):
    return subprocess.run(
        [str(cli_path), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(env, FAKE_BACKEND=mode),
    )


def test_backend_check_ok_writes(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--backend-check", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert "backend check on openvino (fake 1.0)" in proc.stderr and ": ok, 1 output(s)" in proc.stderr


def test_backend_check_tiny_noise_passes_on_n_input_sets(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--backend-check", "3", m, "-o", out, mode="noise")
    assert proc.returncode == 0, proc.stderr
    assert "on 3 input set(s)" in proc.stderr


@pytest.mark.parametrize("mode", ["wrong", "zeros"])
def test_backend_check_difference_exits_1_writes_nothing(cli_path, fake, tmp_path, mode):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--backend-check", m, "-o", out, mode=mode)
    assert proc.returncode == 1, proc.stderr
    assert not out.exists()
    assert "output 'y' differs" in proc.stderr and "max abs error" in proc.stderr, proc.stderr
    assert "% of elements off" in proc.stderr
    assert proc.stderr.rstrip().endswith("nothing written"), proc.stderr


def test_backend_check_refusal_exits_1_writes_nothing(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--backend-check", m, "-o", out, mode="refuse")
    assert proc.returncode == 1, proc.stderr
    assert not out.exists()
    assert "refused (input set 1): build: fake backend: op LayerNormalization is not supported" in proc.stderr
    assert "openvino refuses the result; nothing written" in proc.stderr


def test_backend_check_not_installed_exits_2(cli_path, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(tmp_path / "none"), ONNXSURGEON_PYTHON=sys.executable)
    # this Python has no nncase: the candidate's probe fails as well
    proc = run(cli_path, env, "--target", "nncase-k210", "--input-shapes", "x:2x8", "--backend-check", m, "-o", out)
    assert proc.returncode == 2, proc.stderr
    assert not out.exists()
    [line] = [l for l in proc.stderr.splitlines() if "error" in l]
    assert "no nncase-k210 backend installed" in line and "make backends-setup BACKENDS=nncase-k210" in line


def test_backend_check_target_without_backend_exits_2(cli_path, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, os.environ, "--target", "trt-10", "--backend-check", m, "-o", out)
    assert proc.returncode == 2 and not out.exists(), proc.stderr
    assert "no real backend runs target trt-10" in proc.stderr


def test_backend_check_needs_target(cli_path, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, os.environ, "--backend-check", m, "-o", out)
    assert proc.returncode == 2 and "--backend-check needs --target" in proc.stderr
    assert not out.exists()


def test_check_keeps_its_meaning_beside_backend_check(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--check", "2", "--backend-check", "2", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "backend check on openvino" in proc.stderr and "onnxruntime" in proc.stderr


def test_check_probe(cli_path, fake, tmp_path):
    m = layernorm_model(tmp_path / "m.onnx")
    ok = run(cli_path, fake, "check", "--target", "openvino", "--probe", m)
    assert ok.returncode == 0 and "target openvino (probed): accepted" in ok.stdout, ok.stdout + ok.stderr
    refused = run(cli_path, fake, "check", "--target", "openvino", "--probe", m, mode="refuse")
    assert refused.returncode == 1 and "(probed): refused" in refused.stdout
    assert "not supported" in refused.stdout
    wrong = run(cli_path, fake, "check", "--target", "openvino", "--probe", m, mode="wrong")
    assert wrong.returncode == 1 and "(probed): runs, but differs" in wrong.stdout
    assert "output 'y' differs" in wrong.stdout
    js = run(cli_path, fake, "check", "--target", "openvino", "--probe", "--json", m, mode="wrong")
    import json

    report = json.loads(js.stdout)
    assert report["accepted"] is False and report["outputs"][0]["name"] == "y"
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(tmp_path / "none"), ONNXSURGEON_PYTHON=sys.executable)
    missing = run(cli_path, env, "check", "--target", "rknn2", "--probe", m)
    assert missing.returncode == 2 and "make backends-setup BACKENDS=rknn2" in missing.stderr


def test_check_probe_needs_target(cli_path, tmp_path):
    proc = run(cli_path, os.environ, "check", "--probe", layernorm_model(tmp_path / "m.onnx"))
    assert proc.returncode == 2


def test_check_target_groups_blockers(cli_path, tmp_path):
    """check --target: one header per fact with its count and source, one line per place."""
    nodes = [helper.make_node("Shape", ["x"], [f"s{i}"], name=f"shape{i}") for i in range(3)]
    nodes.append(helper.make_node("Concat", ["s0", "s1", "s2"], ["y"], axis=0, name="cat"))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [6])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    proc = run(cli_path, os.environ, "check", "--target", "nncase-k210", tmp_path / "m.onnx")
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    [header] = [l for l in lines if "lacks Shape" in l]
    assert header.startswith("  nncase-k210: lacks Shape: 3 places -> "), header
    i = lines.index(header)
    assert lines[i + 1].startswith("      source: ") and "#" not in lines[i + 1]
    assert [l.strip() for l in lines[i + 2 : i + 5]] == [f"Shape 'shape{k}' in main graph: Shape" for k in range(3)]


# ----------------------------------------------------------------- the real backends


REAL = ["ort-1.10", "ort-1.14", "ort-1.15", "ort-1.16", "openvino", "nncase-k210", "tflite", "rknn2", "ncnn"]
VENV: dict[str, str] = {}


@pytest.mark.parametrize("target", REAL)
def test_backend_check_real_backend(cli_path, tmp_path, target):
    venv = VENV.get(target, target)
    if not (BACKENDS_DIR / venv / "ready").is_file():
        pytest.skip(f"{venv} venv not installed (make backends-setup BACKENDS={venv})")
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    m, out = layernorm_model(tmp_path / "m.onnx", opset=17), tmp_path / "o.onnx"
    proc = run(cli_path, env, "--target", target, "--input-shapes", "x:2x8", "--backend-check", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file() and f"backend check on {target}" in proc.stderr
    probe = run(cli_path, env, "check", "--target", target, "--probe", out)
    assert probe.returncode == 0 and "(probed): accepted" in probe.stdout, probe.stdout + probe.stderr


def test_rknn2_scalar_input(cli_path, tmp_path):
    """rknn has no rank-0 tensor: its runner gives a scalar input as shape [1] (an empty
    shape in input_size_list made inference fail with an IndexError)."""
    if not (BACKENDS_DIR / "rknn2" / "ready").is_file():
        pytest.skip("rknn2 venv not installed (make backends-setup BACKENDS=rknn2)")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "s"], ["y"])],
        "scalar",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
            helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp_path / "m.onnx")
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    proc = run(cli_path, env, "check", "--target", "rknn2", "--probe", tmp_path / "m.onnx")
    assert proc.returncode == 0 and "(probed): accepted" in proc.stdout, proc.stdout + proc.stderr
