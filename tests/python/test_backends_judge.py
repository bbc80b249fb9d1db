"""The real-backend harness's judge (tests/backends/harness.py compare): element-wise, per
output, per element type. No backend needed: these are the comparisons alone."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

import report  # noqa: E402
from backends import BACKENDS  # noqa: E402
from harness import CorpusModel, compare, tolerances, verdict  # noqa: E402

FP32 = (1e-4, 1e-4)  # the default float32 (rtol, atol) of tests/backends/backends.py


def judge(outputs, refs, backend="openvino"):
    b = BACKENDS[backend]
    return compare(outputs, refs, b.rtol, b.atol, (b.fp16_rtol, b.fp16_atol))


def detection_map(rng):
    """A [1, 84, 8400]-like head: box coordinates in pixels, class scores mostly near 0
    with a few confident detections."""
    boxes = rng.uniform(0, 640, size=(1, 4, 400)).astype(np.float32)
    scores = (rng.uniform(0, 1, size=(1, 80, 400)) ** 8).astype(np.float32)
    scores[0, 3, 17] = 0.93
    scores[0, 0, 250] = 0.88
    return np.concatenate([boxes, scores], axis=1)


def test_all_zero_detection_map_fails():
    ref = detection_map(np.random.default_rng(0))
    got = judge([np.zeros_like(ref)], [ref])
    assert not got["match"]
    [out] = got["per_output"]
    assert out["share_off"] > 0.5 and out["max_abs"] > 100
    assert "output 0" in got["why"]


def test_class_scores_replaced_by_noise_fail():
    rng = np.random.default_rng(1)
    ref = detection_map(rng)
    noisy = ref.copy()
    noisy[:, 4:] = rng.uniform(0, 0.3, size=noisy[:, 4:].shape).astype(np.float32)
    got = judge([noisy], [ref])
    assert not got["match"]
    # Against the output's largest value (640 pixels) 0.3 was within 1e-3 * 640; per
    # element it is not.
    assert got["per_output"][0]["share_off"] > 0.5


def test_scores_output_with_noise_fails_beside_a_good_boxes_output():
    rng = np.random.default_rng(2)
    boxes = rng.uniform(0, 640, size=(1, 100, 4)).astype(np.float32)
    scores = rng.uniform(0, 1, size=(1, 100, 80)).astype(np.float32)
    noise = rng.uniform(0, 0.3, size=scores.shape).astype(np.float32)
    got = judge([boxes.copy(), noise], [boxes, scores])
    assert not got["match"]
    assert [o["ok"] for o in got["per_output"]] == [True, False]
    assert got["why"].startswith("output 1:")


def test_tiny_float_noise_passes():
    rng = np.random.default_rng(3)
    ref = rng.standard_normal((2, 64, 32)).astype(np.float32)
    out = ref + rng.uniform(-3e-6, 3e-6, size=ref.shape).astype(np.float32)
    got = judge([out], [ref])
    assert got["match"], got
    assert 0 < got["max_abs_err"] < 1e-5
    assert got["per_output"][0]["share_off"] == 0


def test_relative_error_on_large_values_passes_absolute_on_small_fails():
    ref = np.array([1000.0, 1e-3], np.float32)
    assert judge([ref * (1 + 5e-5)], [ref])["match"]  # 5e-5 relative: within rtol 1e-4
    assert not judge([ref + np.float32(1e-3)], [ref])["match"]  # 1e-3 on 1e-3: 100% off


def test_int_outputs_must_be_exact():
    ref = np.array([[3, 1, 4, 1, 5]], np.int64)
    assert judge([ref.copy()], [ref])["match"]
    assert judge([ref.astype(np.int32)], [ref])["match"]  # a backend's int32 for int64, same values
    off = ref.copy()
    off[0, 2] = 5
    got = judge([off], [ref])
    assert not got["match"]
    assert got["per_output"][0]["share_off"] == pytest.approx(0.2)


def test_bool_outputs_must_be_exact():
    ref = np.array([True, False, True])
    assert judge([ref.copy()], [ref])["match"]
    assert not judge([~ref], [ref])["match"]


def test_float16_outputs_get_float16_tolerance():
    ref = np.linspace(-4, 4, 64).astype(np.float16)
    out = (ref.astype(np.float32) * (1 + 4e-3)).astype(np.float16)
    assert judge([out], [ref])["match"]  # float16's 1e-2
    assert not judge([out.astype(np.float32)], [ref.astype(np.float32)])["match"]  # float32's 1e-4


def test_nan_only_against_nan():
    ref = np.array([1.0, np.nan], np.float32)
    assert judge([ref.copy()], [ref])["match"]
    assert not judge([np.array([1.0, 0.0], np.float32)], [ref])["match"]


def test_channels_last_output_is_judged_in_reference_layout():
    ref = np.random.default_rng(4).standard_normal((1, 3, 4, 5)).astype(np.float32)
    got = judge([ref.transpose(0, 2, 3, 1).copy()], [ref], backend="tflite")
    assert got["match"] and "channels-last" in got["why"]


def test_shape_and_count_mismatches_fail():
    ref = np.zeros((2, 3), np.float32)
    assert not judge([np.zeros((4, 5), np.float32)], [ref])["match"]
    assert not judge([ref, ref], [ref])["match"]


def test_no_float32_backend_has_a_loose_floor():
    """Only rknn2 (an fp16 simulator) is looser than --check's float32 bound."""
    for name, b in BACKENDS.items():
        if name != "rknn2":
            assert (b.rtol, b.atol) == FP32, name


def named_row(probe: dict | None = None) -> dict:
    rw = {"exit": 1, "message": "onnxsurgeon: error: 1 blocker(s) remain", "mode": "--target x"}
    row = {
        "model": "m",
        "verdict": verdict({"status": "refused", "stage": "load", "message": "no"}, rw, None)[0],
        "why": "",
        "original": {"status": "refused", "stage": "load", "message": "no"},
        "rewrite": rw,
    }
    if probe is not None:
        row["probe"] = probe
        row["verdict"] = "named (probed)" if probe["proven"] else "named (unproven)"
    return row


def test_named_verdicts_render():
    assert named_row()["verdict"] == "named by --target"
    assert "probe confirms" in report._after(named_row({"proven": True, "says": "refuses"}))
    assert "unproven" in report._after(named_row({"proven": False, "says": "matches"}))
    slim = report.slim(named_row({"proven": False, "says": "runs /work/x/y.onnx"}))
    assert slim["probe"]["says"] == "runs <abs>/y.onnx"


def test_unproven_is_a_failure():
    import harness

    assert "named (unproven)" in harness.FAILURES
    assert "named (probed)" not in harness.FAILURES and "named by --target" not in harness.FAILURES


def test_rewrite_records_the_blocked_ops():
    """--target's grouped "still blocks" lines give the op types a probe looks for in the
    backend's refusal."""
    import harness

    stderr = (
        "target nncase-k210: still blocks (2):\n"
        "  nncase-k210: no If: 1 place -> none\n"
        "      source: kendryte/nncase opcode.def\n"
        "      If '/If' in main graph: If whose condition is computed at run time\n"
        "      LSTM '/rnn/LSTM' in main graph: LSTM\n"
    )
    rw = harness.rewrite(["sh", "-c", f"printf '%s' \"{stderr}\" >&2"])
    assert rw["blocked_ops"] == ["If", "LSTM"]


def test_sequence_of_maps_outputs():
    """ai.onnx.ml's ZipMap: a list of {label: probability}, numbers within tolerance."""
    ref = np.empty(2, dtype=object)
    ref[:] = [{0: 0.25, 1: 0.75}, {0: 0.5, 1: 0.5}]
    close = np.empty(2, dtype=object)
    close[:] = [{0: 0.25 + 1e-7, 1: 0.75}, {0: 0.5, 1: 0.5}]
    far = np.empty(2, dtype=object)
    far[:] = [{0: 0.75, 1: 0.25}, {0: 0.5, 1: 0.5}]
    assert judge([close], [ref])["match"]
    assert not judge([far], [ref])["match"]


def test_a_model_computing_in_float16_gets_float16s_bound_on_every_output(tmp_path):
    """A float16 conversion that keeps float32 inputs and outputs: its float32 outputs carry
    float16 rounding (in the reference too), so they are judged with float16's bound."""
    for name, tags in (("half_keep_io", ["fp16", "keep-io-types"]), ("plain", ["encoder"])):
        (tmp_path / f"{name}.onnx").write_bytes(b"")
        (tmp_path / f"{name}.json").write_text(f'{{"tags": {tags!r}, "rtol": 0.01, "atol": 0.001}}'.replace("'", '"'))
    half, plain = CorpusModel(tmp_path / "half_keep_io.onnx"), CorpusModel(tmp_path / "plain.onnx")
    b = BACKENDS["openvino"]
    assert tolerances(b, half) == (b.fp16_rtol, b.fp16_atol, (b.fp16_rtol, b.fp16_atol))
    assert tolerances(b, plain)[:2] == (0.01, 0.001)  # the model's own, larger than the backend's
