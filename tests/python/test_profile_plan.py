"""A profile's [plan] simplify_first (nncase-k210 states it, from --search on the batch-1
corpus: targets/probes/search_batch1.txt): simplify runs before the planned steps when
something blocks, and the plan names it only when it changed the model."""

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
