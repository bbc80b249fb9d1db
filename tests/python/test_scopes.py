"""Every pass, the standard pipelines, opset conversions and every `--target` on models
that reuse value names across scopes (tests/python/scope_models.py): sibling If branches
defining same-named values with different shapes and types, a Loop body and its parent,
an If inside a Loop. Each result is valid and computes what the original computes on
every branch (every combination of the bool inputs), or the run is refused with one line
and nothing written. Before values were keyed by scope, simplify silently folded one
branch's Shape with the other branch's shape, and convert-opset read types across
branches."""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
import scope_models
from test_targets import PROFILES

PASSES = [p["name"] for p in osg.passes() if p["name"] not in ("target",)]
PIPELINES = [
    "fix-layernorm,decompose-layernorm,simplify",
    "fix-layernorm,simplify,strip-identity-cast,extract-constants(to=constant)",
    "simplify,fuse-qkv,simplify",
    "convert-opset=13",
    "convert-opset=15",
    "convert-opset=18",
    "convert-opset=21",
    "infer-shapes,simplify",
]


def _tolerance(pipeline: str) -> tuple[float, float]:
    return (1e-2, 1e-2) if "float16" in pipeline else (1e-5, 1e-6)


def _check_equivalent(oracle, original: onnx.ModelProto, rewritten: onnx.ModelProto, rtol: float, atol: float) -> None:
    oracle.assert_valid(rewritten)
    for feed in scope_models.input_sets(original):
        expected = oracle.run_model(original, feed)
        outputs = oracle.run_model(rewritten, feed)
        oracle.assert_outputs_close(outputs, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("model_name", sorted(scope_models.MODELS))
@pytest.mark.parametrize("pipeline", PASSES + PIPELINES)
def test_pass_keeps_every_scope_apart(model_name, pipeline, oracle):
    original = scope_models.MODELS[model_name]()
    rewritten = osg.run(original, pipeline)  # every pass takes these models
    _check_equivalent(oracle, original, rewritten, *_tolerance(pipeline))


@pytest.mark.parametrize("model_name", sorted(scope_models.MODELS))
@pytest.mark.parametrize("profile", PROFILES)
def test_target_keeps_every_scope_apart(model_name, profile, run_cli, oracle, tmp_path):
    original = scope_models.MODELS[model_name]()
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(original, src)
    proc = run_cli("--target", profile, src, "-o", out, expect_rc=None)
    if proc.returncode != 0:
        assert proc.returncode == 1, proc.stderr
        assert "blocker(s) remain" in proc.stderr, proc.stderr  # a planned refusal (rknn2, nncase: no If)
        assert not out.exists()
        return
    run_cli("check", "--target", profile, out)
    _check_equivalent(oracle, original, onnx.load(out), 1e-5, 1e-6)


def test_branch_for_other_shapes_is_left_as_it_is_once_shapes_are_fixed(oracle):
    """With X fixed at [1, 8], the else branch (only valid for N = 4) fails whenever it runs,
    behind shapes computed at run time. simplify folds the rest and leaves that branch's
    shapes computed: folding them made a model onnx's checker refuses (Silero VAD's 8 kHz
    branch under --input-shapes of a 16 kHz chunk did)."""
    original = scope_models.if_branch_for_other_shapes()
    fixed = osg.run(original, "set-input-shape=X:1,8")
    simplified = osg.run(fixed, "simplify")
    oracle.assert_valid(simplified)
    feed = {"X": np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8), "cond": np.array(True)}
    oracle.assert_outputs_close(oracle.run_model(simplified, feed), oracle.run_model(original, feed), rtol=0, atol=0)


def _branch_reading_a_shape() -> onnx.ModelProto:
    """then: MatMul(Reshape(X, Shape(Y)), W); else: MatMul(Y, W); X [2,3,4], Y [6,4], W [4,5],
    and an input Z [4,6] only the broken rule below reads."""
    from onnx import TensorProto as T
    from onnx import helper as h

    then_g = h.make_graph(
        [
            h.make_node("Shape", ["Y"], ["s"]),
            h.make_node("Reshape", ["X", "s"], ["r"]),
            h.make_node("MatMul", ["r", "W"], ["o"]),
        ],
        "then",
        [],
        [h.make_tensor_value_info("o", T.FLOAT, [None, None])],
    )
    else_g = h.make_graph(
        [h.make_node("MatMul", ["Y", "W"], ["o"])], "else", [], [h.make_tensor_value_info("o", T.FLOAT, [None, None])]
    )
    g = h.make_graph(
        [h.make_node("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g)],
        "branch_reading_a_shape",
        [
            h.make_tensor_value_info("X", T.FLOAT, [2, 3, 4]),
            h.make_tensor_value_info("Y", T.FLOAT, [6, 4]),
            h.make_tensor_value_info("Z", T.FLOAT, [4, 6]),
            h.make_tensor_value_info("cond", T.BOOL, []),
        ],
        [h.make_tensor_value_info("out", T.FLOAT, [None, None])],
        initializer=[onnx.numpy_helper.from_array(np.ones((4, 5), np.float32), "W")],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def test_a_branch_reading_another_values_shape_exits_with_an_error():
    """A deliberately broken rule reads another value's shape in a branch (the class of the
    merged-decoder bug): Reshape(X, Shape(Z)) then MatMul. onnx's checker, without data
    propagation, accepts the result; the final checks propagate computed shapes across
    If bodies and refuse it, so nothing would be written."""
    from onnxsurgeon.rules import Pattern, Rule

    p = Pattern("read-another-shape")
    shape = p.op("Shape", p.any("x"))

    def replace(m, rw):
        return rw.op("Shape", [m.root.graph.value("Z")])

    def check(m):
        return True if m["x"].name == "Y" else "not Y"

    osg.register_rules("read-another-shape", [Rule(p, root=shape, replace=replace, check=check)])
    with pytest.raises(osg.OnnxSurgeonError, match="shapes contradict"):
        osg.run(_branch_reading_a_shape(), "read-another-shape")
