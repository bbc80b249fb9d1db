"""`onnxsurgeon compare --backend NAME` on the real backends (scripts/backends/setup.sh):
each installed backend runs a small corpus model made for it by --target and agrees with
onnxruntime tensor by tensor (onnxruntime of another version and OpenVINO expose
intermediates; nncase, TFLite and rknn2 run models cut at candidate tensors), and on a
model nncase computes wrong before --target, compare names the first tensor it gets wrong.

A backend whose venv is not installed is skipped with that reason (make backends-setup
BACKENDS=NAME installs it); one whose install failed fails with the recorded error, as
test_backends_smoke.py does."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from backends import BACKENDS  # noqa: E402
from harness import BACKENDS_DIR  # noqa: E402

COMPARE_BACKENDS = ["ort-1.10", "ort-1.14", "ort-1.15", "openvino", "nncase-k210", "tflite", "rknn2"]


def installed(backend: str) -> None:
    d = BACKENDS_DIR / backend
    if (d / "install-error").is_file():
        pytest.fail(f"{backend} failed to install: {(d / 'install-error').read_text().splitlines()[0]}")
    if not (d / "ready").is_file():
        pytest.skip(f"{backend} venv not installed (make backends-setup BACKENDS={backend})")


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv("ONNXSURGEON_BACKENDS_DIR", str(BACKENDS_DIR))


def shapes_of(inputs: Path) -> list[str]:
    with np.load(inputs) as data:
        return [f"{k}:{','.join(str(d) for d in data[k].shape)}" for k in data.files]


@pytest.mark.parametrize("backend", COMPARE_BACKENDS)
def test_compare_on_backend_after_target(backend, run_cli, corpus, tmp_path, env):
    installed(backend)
    model = corpus.model(BACKENDS[backend].smoke_model)
    inputs = model.directory / model.manifest["inputs"]
    target = tmp_path / "target.onnx"
    for profile in BACKENDS[backend].targets:  # the first profile that exists, as the harness picks
        args = ("--target", profile, "-q", "--input-shapes", *shapes_of(inputs), model.path, "-o", target)
        if run_cli(*args, expect_rc=None).returncode == 0:
            break
    assert target.is_file()
    proc = run_cli("compare", "--json", target, "--backend", backend, "--inputs", inputs, timeout=1200)
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["first_divergence"] is None
    assert report["b_runtime"], report
    compared = [r for r in report["tensors"] if r["computed"]]
    assert compared and any(r["matched_by"] == "output" for r in compared)
    if backend in ("ort-1.10", "ort-1.14", "ort-1.15", "openvino"):
        assert len(compared) > 1, "a backend that exposes intermediates compares them"


def test_compare_names_the_first_tensor_nncase_gets_wrong(run_cli, corpus, tmp_path, env):
    """ln_noaffine_op18 runs wrong on nncase 1.9 (docs/results/nncase-k210.md: off by 1.4); compare
    finds where: the centring Sub after the ReduceMean nncase mis-shapes. After --target
    nncase-k210 the same model agrees."""
    installed("nncase-k210")
    model = corpus.model("ln_noaffine_op18")
    inputs = model.directory / model.manifest["inputs"]
    proc = run_cli("compare", "--json", model.path, "--backend", "nncase-k210", "--inputs", inputs, expect_rc=1)
    report = json.loads(proc.stdout)
    first = report["first_divergence"]
    assert first["a_op"] == "Sub" and first["a"] == "/norm/Sub_output_0", first
    assert any("ReduceMean" in note for note in report["notes"]), report["notes"]
    text = run_cli("compare", model.path, "--backend", "nncase-k210", "--inputs", inputs, expect_rc=1).stdout
    assert "first divergence: '/norm/Sub_output_0', made by node '/norm/Sub' (Sub)" in text
    fixed = tmp_path / "fixed.onnx"
    run_cli("--target", "nncase-k210", "-q", "--input-shapes", *shapes_of(inputs), model.path, "-o", fixed)
    report = json.loads(run_cli("compare", "--json", fixed, "--backend", "nncase-k210", "--inputs", inputs).stdout)
    assert report["ok"] is True


def test_a_backend_that_is_not_installed_says_how_to_install(run_cli, tmp_path, monkeypatch):
    from test_cli import small_model, write

    monkeypatch.setenv("ONNXSURGEON_BACKENDS_DIR", str(tmp_path / "none"))
    src = write(small_model(), tmp_path / "a.onnx")
    proc = run_cli("compare", src, "--backend", "openvino", expect_rc=1)
    assert "scripts/backends/setup.sh openvino" in proc.stderr and proc.stderr.count("\n") == 1
    assert os.path.exists(src)


def test_compare_names_the_scatternd_reduction_tflite_gets_wrong(run_cli, corpus, env):
    """onnx2tf never reads ScatterND's `reduction` (docs/results/tflite.md: index_put_dynamo18 off
    by 4.3): of the model's two ScatterNDs, compare names the one with reduction=add."""
    installed("tflite")
    model = corpus.model("index_put_dynamo18")
    inputs = model.directory / model.manifest["inputs"]
    proc = run_cli(
        "compare", "--json", model.path, "--backend", "tflite", "--inputs", inputs, expect_rc=1, timeout=1200
    )
    first = json.loads(proc.stdout)["first_divergence"]
    scatters = {n.name: n for n in onnx.load(model.path).graph.node if n.op_type == "ScatterND"}
    assert first["a_op"] == "ScatterND" and len(scatters) == 2
    reduction = {a.name: a.s for a in scatters[first["a_node"]].attribute}.get("reduction", b"none")
    assert reduction == b"add", first
