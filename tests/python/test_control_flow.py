"""if-to-where and unroll-loop (and the `--target` plans that run them) on torch exports with control flow on
data (tests/python/control_flow_models.py): each rewrite is compared with onnxruntime on
the original, on input sets that take every branch; each refusal is pinned by its reason."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import control_flow_models as cfm  # noqa: E402
import model_helpers as mh  # noqa: E402


def assert_same(original: Path, rewritten: Path, sets: list[dict]) -> None:
    for feeds in sets:
        for a, b in zip(mh.ort_outputs(original, feeds), mh.ort_outputs(rewritten, feeds), strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)  # the same ops on the same data: bit-exact


@pytest.mark.parametrize("build", [cfm.if_script_sign, cfm.if_script_nested, cfm.if_cond])
def test_if_to_where_is_exact_on_every_branch(build, tmp_path, run_cli):
    src, sets = build(tmp_path)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "inline-functions,if-to-where", src, "-o", out)
    assert "If" in mh.op_types(src) and "If" not in mh.op_types(out)
    onnx.checker.check_model(str(out), full_check=True)
    assert_same(src, out, sets)


def test_if_with_runtime_index_is_refused(tmp_path, run_cli):
    src, sets = cfm.if_script_gather(tmp_path)
    # The original raises only when it takes the side with the bad index; computing both would raise always.
    with pytest.raises(Exception):
        mh.ort_outputs(src, sets[0] | {"k": np.array(7, np.int64)})
    mh.ort_outputs(src, sets[1])
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "if-to-where", src, "-o", out, "--debug-patterns")
    assert "may raise on its data: its indices are computed at run time" in proc.stderr
    assert "If" in mh.op_types(out)


def test_merged_decoder_if_is_refused_for_its_shapes(tmp_path, run_cli):
    src, sets = cfm.if_merged_decoder(tmp_path)
    for feeds in sets:
        mh.ort_outputs(src, feeds)
    proc = run_cli("check", "--target", "rknn2", src, expect_rc=None)
    assert "if-to-where refuses it: output 0's shapes" in proc.stdout + proc.stderr
    assert "are not proven identical" in proc.stdout + proc.stderr


@pytest.mark.parametrize("target", ["rknn2", "nncase-k210"])
def test_target_plans_if_to_where(target, tmp_path, run_cli):
    src, sets = cfm.if_script_sign(tmp_path)
    check = run_cli("check", "--target", target, src, expect_rc=None)
    assert "-> if-to-where" in check.stdout + check.stderr
    out = tmp_path / "out.onnx"
    shapes = ["--input-shapes", "x:3x8"] if target == "nncase-k210" else []
    run_cli("--target", target, *shapes, src, "-o", out)
    assert "If" not in mh.op_types(out)
    assert_same(src, out, sets)


@pytest.mark.parametrize("build", [cfm.loop_scan, cfm.loop_script_const])
def test_unroll_loop_is_exact(build, tmp_path, run_cli):
    src, sets = build(tmp_path)
    out = tmp_path / "out.onnx"
    run_cli("--pass", "fold-constants,unroll-loop", src, "-o", out)
    assert "Loop" in mh.op_types(src) and "Loop" not in mh.op_types(out)
    onnx.checker.check_model(str(out), full_check=True)
    for feeds in sets:
        for a, b in zip(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds), strict=True):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("target", ["rknn2", "nncase-k210", "tflite"])
def test_target_plans_unroll_loop(target, tmp_path, run_cli):
    src, sets = cfm.loop_scan(tmp_path)
    check = run_cli("check", "--target", target, src, expect_rc=None)
    assert "-> fold-constants,unroll-loop" in check.stdout + check.stderr
    out = tmp_path / "out.onnx"
    run_cli("--target", target, src, "-o", out)
    assert "Loop" not in mh.op_types(out)
    for feeds in sets:
        for a, b in zip(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_loop_with_runtime_trip_count_is_named(tmp_path, run_cli):
    src, _ = cfm.loop_scan(tmp_path)
    m = onnx.load(str(src))
    m.graph.input.append(onnx.helper.make_tensor_value_info("steps", onnx.TensorProto.INT64, []))
    m.graph.node[0].input[0] = "steps"
    onnx.save(m, str(src))
    check = run_cli("check", "--target", "rknn2", src, expect_rc=None)
    assert "unroll-loop refuses it: its trip count is computed at run time" in check.stdout + check.stderr


@pytest.mark.parametrize("target", ["rknn2", "nncase-k210"])
def test_corpus_cond_export_is_exact_on_both_branches(target, repo_root, tmp_path, run_cli):
    # torch.cond (dynamo) export of the corpus: Gemm -> If(sum > 0) with a LayerNorm branch.
    src = repo_root / "tests/models/.generated/control_flow_cond_dynamo18.onnx"
    if not src.exists():
        pytest.skip("corpus not generated")
    out = tmp_path / "out.onnx"
    run_cli("--target", target, src, "-o", out)
    assert "If" not in mh.op_types(out)
    rng = np.random.default_rng(0)
    sets = [{"x": (rng.standard_normal((2, 16)) * s).astype(np.float32)} for s in (1, -1, 5, -5, 0.01)] * 2
    cond = onnx.load(str(src))
    taken = set()
    gemm_w = next(onnx.numpy_helper.to_array(i) for i in cond.graph.initializer if i.name == "proj.weight")
    gemm_b = next(onnx.numpy_helper.to_array(i) for i in cond.graph.initializer if i.name == "proj.bias")
    for feeds in sets:
        taken.add(bool((feeds["x"] @ gemm_w.T + gemm_b).sum() > 0))
        for a, b in zip(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds), strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    assert taken == {True, False}


@pytest.mark.parametrize(
    "starts,ends,steps",
    [([-1], [-(2**63)], [-1]), ([6], [1], [-2]), ([1], [100], [2]), ([-3], [-100], [-3]), ([0], [8], [3])],
)
def test_slice_step_to_gather_is_exact(starts, ends, steps, tmp_path, run_cli):
    h = onnx.helper
    g = h.make_graph(
        [h.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"])],
        "g",
        [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 8, 3])],
        [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)],
        [
            onnx.numpy_helper.from_array(np.array(starts, np.int64), "s"),
            onnx.numpy_helper.from_array(np.array(ends, np.int64), "e"),
            onnx.numpy_helper.from_array(np.array([1], np.int64), "a"),
            onnx.numpy_helper.from_array(np.array(steps, np.int64), "k"),
        ],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    src, out = tmp_path / "s.onnx", tmp_path / "o.onnx"
    onnx.save(m, str(src))
    run_cli("--pass", "slice-step-to-gather", src, "-o", out)
    assert "Slice" not in mh.op_types(out) and "Gather" in mh.op_types(out)
    assert_same(src, out, [{"x": np.random.default_rng(0).standard_normal((2, 8, 3)).astype(np.float32)}])
