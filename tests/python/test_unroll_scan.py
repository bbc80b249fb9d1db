"""unroll-scan (and the `--target` plans that run it) against onnxruntime: every scan input and
output axis/direction combination, opset 8's batched form, and tf2onnx's custom-cell RNN
exports of the corpus (tf1 dynamic_rnn: a Scan); each refusal pinned by its reason."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_helpers as mh  # noqa: E402
import scan_models as sm  # noqa: E402


def assert_same(src: Path, out: Path, feeds: dict) -> None:
    for a, b in zip(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds), strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(
    "in_axis,in_reverse,out_axis,out_reverse", list(itertools.product([0, 1, 2, -1], [0, 1], [0, 1, 2, -2], [0, 1]))
)
def test_every_axis_and_direction(in_axis, in_reverse, out_axis, out_reverse, tmp_path, run_cli):
    src, feeds = sm.scan_rnn(tmp_path, in_axis, in_reverse, out_axis, out_reverse)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "unroll-scan", src, "-o", out)
    assert "Scan" in mh.op_types(src) and "Scan" not in mh.op_types(out)
    onnx.checker.check_model(str(out), full_check=True)
    assert_same(src, out, feeds)


@pytest.mark.parametrize("opset", [9, 11, 13])
def test_older_opsets(opset, tmp_path, run_cli):
    src, feeds = sm.scan_rnn(tmp_path, 1, 1, 1, 1, opset=opset)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "unroll-scan", src, "-o", out)
    assert "Scan" not in mh.op_types(out)
    assert_same(src, out, feeds)


@pytest.mark.parametrize("reverse,batch,lens", [(0, 2, None), (1, 2, None), (1, 1, None), (0, 2, [3, 3])])
def test_opset8_batched_form(reverse, batch, lens, tmp_path, run_cli):
    src, feeds = sm.scan_batched(tmp_path, reverse, batch, lens)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "unroll-scan", src, "-o", out)
    assert "Scan" not in mh.op_types(out)
    onnx.checker.check_model(str(out), full_check=True)
    assert_same(src, out, feeds)


def test_opset8_partial_sequence_lens_is_refused(tmp_path, run_cli):
    src, _ = sm.scan_batched(tmp_path, 0, 2, [3, 2])
    out = tmp_path / "out.onnx"
    r = run_cli("--pass", "unroll-scan", "--debug-patterns", src, "-o", out)
    assert "its sequence_lens holds 2, not the sequence length 3" in r.stdout + r.stderr
    assert "Scan" in mh.op_types(out)


def test_dynamic_length_is_named_and_static_shapes_unroll(tmp_path, run_cli):
    src, feeds = sm.scan_rnn(tmp_path, 0, 0, 0, 0)
    m = onnx.load(str(src))
    m.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "T"
    m.graph.input[2].type.tensor_type.shape.dim[0].dim_param = "T"
    onnx.save(m, str(src))
    check = run_cli("check", "--target", "nncase-k210", src, expect_rc=None)
    assert "give --input-shapes: with static inputs, its sequence length is known" in check.stdout + check.stderr
    out = tmp_path / "out.onnx"
    run_cli("--target", "nncase-k210", "--input-shapes", "x:3,2,4;z:3,4", src, "-o", out)
    assert "Scan" not in mh.op_types(out)
    assert_same(src, out, feeds)


def test_max_steps_is_named(tmp_path, run_cli):
    src, _ = sm.scan_rnn(tmp_path, 0, 0, 0, 0)
    out = tmp_path / "out.onnx"
    r = run_cli("--pass", "unroll-scan(max-steps=2)", "--debug-patterns", src, "-o", out)
    assert "its sequence length 3 is above max-steps=2" in r.stdout + r.stderr
    assert "Scan" in mh.op_types(out)


@pytest.mark.parametrize("target", ["nncase-k210", "nncase-k230", "rknn2", "tflite"])
def test_target_plans_unroll_scan(target, tmp_path, run_cli):
    src, feeds = sm.scan_rnn(tmp_path, 1, 1, 2, 1)
    check = run_cli("check", "--target", target, src, expect_rc=None)
    assert "-> unroll-scan" in check.stdout + check.stderr
    out = tmp_path / "out.onnx"
    run_cli("--target", target, src, "-o", out)
    assert "Scan" not in mh.op_types(out)
    assert_same(src, out, feeds)


TF_SCANS = [
    "tf_custom_rnn_op8",
    "tf_custom_rnn_b2_op8",
    "tf_custom_rnn_op9",
    "tf_custom_rnn_op13",
    "tf_custom_rnn_timemajor_op13",
    "tf_custom_birnn_op13",
]


@pytest.mark.parametrize("name", TF_SCANS)
def test_tf2onnx_custom_rnn_exports(name, repo_root, tmp_path, run_cli):
    src = repo_root / f"tests/models/.generated/{name}.onnx"
    if not src.exists():
        pytest.skip("corpus not generated (the tf exporter venv)")
    feeds = dict(np.load(src.with_suffix(".inputs.npz")))
    expected = list(np.load(src.with_suffix(".expected.npz")).values())
    out = tmp_path / "out.onnx"
    run_cli("--pass", "unroll-scan", src, "-o", out)
    assert "Scan" in mh.op_types(src) and "Scan" not in mh.op_types(out)
    assert_same(src, out, feeds)
    for a, b in zip(mh.ort_outputs(out, feeds), expected, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)  # against TensorFlow itself


def test_body_returning_its_inputs(tmp_path, run_cli):
    # A state and a scan output that are the body's own inputs: onnxruntime 1.32 returns zeros
    # for both on the Scan (its bug), so onnx's reference evaluator is the oracle here.
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx.reference import ReferenceEvaluator

    V = h.make_tensor_value_info
    body = h.make_graph(
        [h.make_node("Add", ["a", "x"], ["a2"])],
        "b",
        [V("a", T.FLOAT, [3]), V("w", T.FLOAT, [3]), V("x", T.FLOAT, [3])],
        [V("a2", T.FLOAT, [3]), V("w", T.FLOAT, [3]), V("x", T.FLOAT, [3])],
    )
    scan = h.make_node("Scan", ["a0", "w0", "xs"], ["aN", "wN", "ys"], body=body, num_scan_inputs=1)
    g = h.make_graph(
        [scan],
        "g",
        [V("a0", T.FLOAT, [3]), V("w0", T.FLOAT, [3]), V("xs", T.FLOAT, [2, 3])],
        [V("aN", T.FLOAT, [3]), V("wN", T.FLOAT, [3]), V("ys", T.FLOAT, [2, 3])],
    )
    src, out = tmp_path / "pass.onnx", tmp_path / "out.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), str(src))
    run_cli("--pass", "unroll-scan", src, "-o", out)
    feeds = {
        "a0": np.arange(3, dtype=np.float32),
        "w0": np.full(3, 5, np.float32),
        "xs": np.random.rand(2, 3).astype(np.float32),
    }
    expected = ReferenceEvaluator(onnx.load(str(src))).run(None, feeds)
    for a, b in zip(expected, mh.ort_outputs(out, feeds), strict=True):
        np.testing.assert_array_equal(a, b)
