"""A profile's [plan] simplify_first (nncase-k210 states it, from --search on the batch-1
corpus: targets/probes/search_batch1.txt): simplify runs before the planned steps when
something blocks or a node computes from constants only, and the plan names it only when it
changed the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

REPO = Path(__file__).resolve().parents[2]


def _profile(tmp_path: Path, plan: str) -> Path:
    text = (REPO / "targets/ort-1.10.toml").read_text().replace('name = "ort-1.10"', 'name = "my-ort"')
    path = tmp_path / "my.toml"
    path.write_text(text + "\n[plan]\n" + plan + 'source = "a test"\n')
    return path


def _model(tmp_path: Path, foldable: bool) -> Path:
    V = h.make_tensor_value_info
    nodes = [h.make_node("Relu", ["x"], ["r" if foldable else "y"])]
    inits = []
    if foldable:  # r * Cast(Shape(x)[1]): static, so simplify folds it to r * 4
        inits = [numpy_helper.from_array(np.array(1, np.int64), "i")]
        nodes += [
            h.make_node("Shape", ["x"], ["s"]),
            h.make_node("Gather", ["s", "i"], ["d"]),
            h.make_node("Cast", ["d"], ["f"], to=T.FLOAT),
            h.make_node("Mul", ["r", "f"], ["y"]),
        ]
    g = h.make_graph(nodes, "g", [V("x", T.FLOAT, [2, 4])], [V("y", T.FLOAT, [2, 4])], initializer=inits)
    path = tmp_path / f"m{int(foldable)}.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8), str(path))
    return path


def test_simplify_first_is_named_when_it_changes_the_model(tmp_path, run_cli):
    profile = _profile(tmp_path, "simplify_first = true\n")
    r = run_cli("--target", profile, _model(tmp_path, True), "-o", tmp_path / "a.onnx")
    assert "ran simplify,convert-opset" in r.stderr
    r = run_cli("--target", profile, _model(tmp_path, False), "-o", tmp_path / "b.onnx")
    assert "ran convert-opset" in r.stderr and "simplify" not in r.stderr.splitlines()[0]


def test_unknown_plan_key_is_an_error(tmp_path, run_cli):
    profile = _profile(tmp_path, "simplify_frist = true\n")
    r = run_cli("check", "--target", profile, _model(tmp_path, False), expect_rc=None)
    assert r.returncode != 0 and "simplify_frist" in r.stdout + r.stderr


def test_nncase_k210_states_it(run_cli):
    r = run_cli("targets", "--sources", "nncase-k210")
    assert "plan: simplify first: measured here" in r.stdout


def test_simplify_first_runs_for_computation_on_constants(tmp_path, run_cli):
    # Nothing blocks (opset 13, no op the profile lacks), but y = x + Abs(c) computes from a
    # constant: a simplify-first profile folds it (nncase refuses such arithmetic: T5's
    # position buckets, targets/probes/nncase_constant_compute.txt); others leave the model.
    V = h.make_tensor_value_info
    c = numpy_helper.from_array(np.array([-1.0, 2.0, -3.0, 4.0], np.float32), "c")
    nodes = [h.make_node("Abs", ["c"], ["a"]), h.make_node("Add", ["x", "a"], ["y"])]
    g = h.make_graph(nodes, "g", [V("x", T.FLOAT, [2, 4])], [V("y", T.FLOAT, [2, 4])], initializer=[c])
    src = tmp_path / "c.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7), str(src))
    r = run_cli("--target", _profile(tmp_path, "simplify_first = true\n"), src, "-o", tmp_path / "a.onnx")
    assert "ran simplify" in r.stderr, r.stderr
    assert [n.op_type for n in onnx.load(str(tmp_path / "a.onnx")).graph.node] == ["Add"]
    r = run_cli("--target", _profile(tmp_path, "simplify_first = false\n"), src, "-o", tmp_path / "b.onnx")
    assert "nothing to do" in r.stdout + r.stderr, r.stderr


def test_a_step_that_fails_leaves_named_blockers(tmp_path, run_cli):
    # nncase-k210 takes ReduceSum's axes as an attribute only, which the plan gets by
    # converting to opset 12; Col2Im exists from opset 18 only, so that conversion would
    # fail: the ReduceSum is named with why (as Col2Im is), not planned into a pass error;
    # nothing is written.
    V = h.make_tensor_value_info
    inits = [
        numpy_helper.from_array(np.array([4, 4], np.int64), "image_shape"),
        numpy_helper.from_array(np.array([2, 2], np.int64), "block_shape"),
    ]
    inits.append(numpy_helper.from_array(np.array([2], np.int64), "axes"))
    nodes = [
        h.make_node("Col2Im", ["x", "image_shape", "block_shape"], ["c"]),
        h.make_node("ReduceSum", ["c", "axes"], ["y"], keepdims=1),
    ]
    g = h.make_graph(nodes, "g", [V("x", T.FLOAT, [1, 4, 9])], [V("y", T.FLOAT, [1, 1, 1, 4])], initializer=inits)
    src = tmp_path / "col2im.onnx"
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8), str(src))
    out = tmp_path / "out.onnx"
    r = run_cli("--target", "nncase-k210", src, "-o", out, expect_rc=None)
    assert r.returncode == 1, r.stderr
    assert "blocker(s) remain after the plan" in r.stderr, r.stderr
    assert "converting to opset 12 for this form fails: Col2Im" in r.stderr, r.stderr
    assert "Col2Im" in r.stderr and not out.exists()
