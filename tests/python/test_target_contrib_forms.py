"""`--target` and the forms of onnxruntime contrib ops an older onnxruntime lacks though it
has the op: onnxruntime's transformer optimizer writes GPT-2's SkipLayerNormalization with
its fourth output (input_skip_bias_sum, the next residual), which onnxruntime 1.10 refuses
at load (targets/probes/contrib_forms.txt, the `output:3` fact of targets/ort-1.10.toml).
On a GPT-2 with past (tests/python/gpt2_past_models.py) through the optimizer: --target
ort-1.10 lowers those nodes, the result passes its own check and matches onnxruntime on the
original; onnxruntime 1.10 itself runs it where its venv is installed. ort-1.14 runs the
form: nothing to do there."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "python"))
sys.path.insert(0, str(TESTS / "backends"))

from gpt2_past_models import H, L, N, V, export_optimized  # noqa: E402
from harness import BACKENDS_DIR  # noqa: E402


def _skip_ln_outputs(model):
    return [len(n.output) for n in model.graph.node if n.op_type == "SkipLayerNormalization"]


@pytest.fixture(scope="module")
def gpt2(tmp_path_factory):
    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    path = export_optimized(str(tmp_path_factory.mktemp("gpt2") / "gpt2"))
    rng = np.random.default_rng(1)
    b, s, past = 2, 3, 4
    feeds = {
        "input_ids": rng.integers(0, V, (b, s)).astype(np.int64),
        "position_ids": np.tile(np.arange(past, past + s), (b, 1)).astype(np.int64),
        "attention_mask": np.ones((b, past + s), np.int64),
    }
    feeds["attention_mask"][0, :2] = 0  # left padding
    for i in range(L):
        feeds[f"past_{i}"] = rng.standard_normal((2, b, N, past, H)).astype(np.float32)
    return Path(path), feeds


def _run(path, feeds):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


def test_ort_1_10_lowers_skip_layernorm_with_its_sum_output(cli_path, gpt2, tmp_path):
    src, feeds = gpt2
    assert 4 in _skip_ln_outputs(onnx.load(src))  # the form the fact is about
    check = subprocess.run([str(cli_path), "check", "--target", "ort-1.10", str(src)], capture_output=True, text=True)
    assert check.returncode == 1
    assert "lacks SkipLayerNormalization when output:3" in check.stdout, check.stdout
    assert "targets/probes/contrib_forms.py" in check.stdout
    out = tmp_path / "out.onnx"
    proc = subprocess.run(
        [str(cli_path), "--target", "ort-1.10", str(src), "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "lower-contrib-ops(ops=SkipLayerNormalization)" in proc.stderr
    assert 4 not in _skip_ln_outputs(onnx.load(out))
    rerun = subprocess.run([str(cli_path), "check", "--target", "ort-1.10", str(out)], capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stdout
    for want, got in zip(_run(src, feeds), _run(out, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_ort_1_14_runs_the_form(cli_path, gpt2):
    src, _ = gpt2
    proc = subprocess.run([str(cli_path), "check", "--target", "ort-1.14", str(src)], capture_output=True, text=True)
    assert "SkipLayerNormalization" not in proc.stdout, proc.stdout


@pytest.mark.skipif(
    not (BACKENDS_DIR / "ort-1.10" / "ready").is_file(),
    reason="the ort-1.10 venv is not installed (make backends-setup)",
)
def test_onnxruntime_1_10_runs_the_result(cli_path, gpt2, tmp_path):
    src, feeds = gpt2
    out = tmp_path / "out.onnx"
    assert subprocess.run([str(cli_path), "--target", "ort-1.10", str(src), "-o", str(out)]).returncode == 0
    np.savez(tmp_path / "feeds.npz", **feeds)
    script = (
        "import sys, numpy as np, onnxruntime as ort\n"
        "f = dict(np.load(sys.argv[2]))\n"
        "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
        "np.savez(sys.argv[3], *s.run(None, {i.name: f[i.name] for i in s.get_inputs()}))\n"
    )
    old = BACKENDS_DIR / "ort-1.10" / "venv" / "bin" / "python"
    for model, result in ((src, "orig.npz"), (out, "out.npz")):
        proc = subprocess.run(
            [str(old), "-c", script, str(model), str(tmp_path / "feeds.npz"), str(tmp_path / result)],
            capture_output=True,
            text=True,
        )
        if model == src:  # the probe's finding, on a whole model
            assert proc.returncode != 0 and "output size 4 not in range" in proc.stderr, proc.stderr[-500:]
        else:
            assert proc.returncode == 0, proc.stderr[-500:]
    with np.load(tmp_path / "out.npz") as got:
        for i, want in enumerate(_run(src, feeds)):
            np.testing.assert_allclose(got[f"arr_{i}"], want, rtol=1e-4, atol=1e-4)
