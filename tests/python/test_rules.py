"""Rules written in Python run on the C++ matcher and driver, from a notebook, without
recompiling: a pattern, a replacement, a check that can refuse and say why."""

from __future__ import annotations

import onnx
import onnxsurgeon as osg
import pytest
from onnxsurgeon.rules import Pattern, Rule, apply_rules

MODEL = """<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X) => (float[N,4] Y, float[N,4] Z) <float one = {1.0}, float two = {2.0}> {
  a = Mul(X, one)
  b = Mul(one, a)
  Y = Relu(b)
  c = Mul(X, two)
  Z = Neg(c)
}"""


def mul_by_one() -> Rule:
    p = Pattern("mul-by-one")
    x = p.any("x")
    mul = p.op("Mul", x, p.scalar("one", 1.0), commutative=True)
    return Rule(p, root=mul, replace=lambda m, rw: m["x"])


def test_python_rule_rewrites_to_fixed_point(oracle):
    model = osg.parse_text(MODEL)
    original = model.to_proto()
    assert apply_rules(model, [mul_by_one()]) == {"mul-by-one": 2}
    ops = [n.op_type for n in model.graph.nodes]
    assert ops == ["Relu", "Mul", "Neg"]
    assert model.graph.nodes[0].inputs[0].name == "X"
    oracle.assert_equivalent(original, model.to_proto())


def test_replacement_builds_nodes_with_provenance(oracle):
    # x * 2 -> x + x
    p = Pattern("double-to-add")
    x = p.any("x")
    mul = p.op("Mul", x, p.scalar("two", 2.0), commutative=True)
    rule = Rule(p, root=mul, replace=lambda m, rw: rw.op("Add", [m["x"], m["x"]]))
    model = osg.parse_text(MODEL)
    original = model.to_proto()
    assert apply_rules(model, [rule]) == {"double-to-add": 1}
    proto = model.to_proto()
    add = [n for n in proto.graph.node if n.op_type == "Add"][0]
    # The rule that made it, and the value it replaced (compare matches tensors by it).
    assert {(e.key, e.value) for e in add.metadata_props} == {
        ("onnxsurgeon.rule", "double-to-add"),
        ("onnxsurgeon.replaced", "0:c"),
    }
    assert add.name.startswith("double-to-add/")
    oracle.assert_equivalent(original, proto)


def test_match_lookups_by_capture_name():
    seen = {}

    def check(m):
        seen["x"], seen["root"], seen["one"] = m["x"].name, m.node("mul").op_type, m.scalar("one")
        for lookup in (m.__getitem__, m.node, m.scalar):
            with pytest.raises(KeyError, match="nosuch"):
                lookup("nosuch")
        return False

    p = Pattern("lookups")
    mul = p.op("Mul", p.any("x"), p.scalar("one", 1.0), capture="mul")
    apply_rules(osg.parse_text(MODEL), [Rule(p, root=mul, replace=lambda m, rw: m["x"], check=check)])
    assert seen == {"x": "X", "root": "Mul", "one": 1.0}


def test_node_set_input_goes_through_a_rewriter():
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[N] Z) { n = Neg(X)  Y = Relu(n)  Z = Sigmoid(n) }""")
    # Outside a rule: Node.set_input rewires through a Rewriter of its own; both use
    # lists follow.
    sigmoid = [n for n in model.graph.nodes if n.op_type == "Sigmoid"][0]
    sigmoid.set_input(0, model.graph.value("X"))
    assert [n.op_type for n, _ in model.graph.value("X").uses()] == ["Neg", "Sigmoid"]
    assert [n.op_type for n, _ in model.graph.value("n").uses()] == ["Relu"]
    onnx.checker.check_model(model.to_proto(), full_check=True)


def test_rewriter_replace_all_uses_with_states_what_graph_outputs_do():
    p = Pattern("neg")
    root = p.op("Neg", p.any("x"))
    seen = []

    def replace(m, rw):
        with pytest.raises(osg.OnnxSurgeonError, match="graph output"):
            rw.replace_all_uses_with(m.root.outputs[0], m["x"])
        with pytest.raises(ValueError):
            rw.replace_all_uses_with(m.root.outputs[0], m["x"], graph_outputs="whatever")
        rw.set_input(m.root, 0, m["x"])  # inside a rule: through its rewriter (a no-op here)
        seen.append(True)
        return rw.op("Abs", [m["x"]])

    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { Y = Neg(X) }""")
    assert apply_rules(model, [Rule(p, root=root, replace=replace)]) == {"neg": 1}
    assert seen == [True]
    assert model.graph.outputs[0].name == "Y" and model.graph.outputs[0].producer().op_type == "Abs"


def test_check_refuses_with_reason_and_explain_reports_it():
    p = Pattern("neg-relu")
    inner = p.op("Relu", p.any("x"), capture="relu")
    root = p.op("Neg", inner)
    rule = Rule(p, root=root, replace=lambda m, rw: rw.op("Abs", [m["x"]]), check=lambda m: "not today")
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { r = Relu(X)  Y = Neg(r) }""")
    misses = []
    assert apply_rules(model, [rule], explain=lambda r, n, why: misses.append((r, why))) == {}
    assert misses == [("neg-relu", "not today")]


def test_pattern_alternatives_and_attrs():
    p = Pattern("square")
    x = p.any("x")
    sq = p.either(p.op("Mul", x, x), p.op("Pow", x, p.scalar("two", 2.0)))
    root = p.op("ReduceMean", sq, attrs={"keepdims": 1})
    seen = []

    def replace(m, rw):
        seen.append(m["x"].name)
        return rw.op("ReduceSumSquare", [m["x"]], attrs={"axes": [-1], "keepdims": 1})

    rule = Rule(p, root=root, replace=replace)
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 17]>
g (float[N,4] X) => (float[N,1] A, float[N,1] B) <float two = {2.0}> {
  m = Mul(X, X)
  A = ReduceMean <axes = [-1], keepdims: int = 1> (m)
  p = Pow(X, two)
  B = ReduceMean <axes = [-1], keepdims: int = 1> (p)
}""")
    assert apply_rules(model, [rule]) == {"square": 2}
    assert seen == ["X", "X"]


def test_errors_in_python_replacements_surface():
    p = Pattern("boom")
    root = p.op("Relu", p.any("x"))

    def replace(m, rw):
        raise RuntimeError("boom inside the rule")

    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { Y = Relu(X) }""")
    with pytest.raises(osg.OnnxSurgeonError, match="boom inside the rule"):
        apply_rules(model, [Rule(p, root=root, replace=replace)])
    with pytest.raises(TypeError):
        Rule(Pattern("other"), root=root, replace=replace)
