"""Every mutation goes through a Rewriter (core/ir/mutation_key.h).

The C++ side is pinned by the negative-compile ctests (tests/cpp/negative): a pass-like
file calling a raw IR mutator does not compile. Here: what Python can reach mutates
only through a Rewriter, and what the passes routed through one now do: nodes they
create carry their provenance, use lists stay consistent, results stay equivalent.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper

PROVENANCE = "onnxsurgeon.rule"

# The raw IR mutators (Graph/Node/Value in core/ir), in the bindings' snake_case. The
# bindings expose none of them: Python mutates through Node.set_input,
# Value.replace_all_uses_with and a rule's Rewriter, all of which wrap a Rewriter.
RAW_MUTATORS = {
    "create_node",
    "erase_node",
    "move_before",
    "add_input",
    "remove_input",
    "add_output",
    "set_output",
    "remove_output",
    "add_initializer",
    "remove_initializer",
    "erase_value",
    "set_attribute",
    "remove_attribute",
    "add_omitted_output",
}


def rule_of(node: onnx.NodeProto) -> str | None:
    for entry in node.metadata_props:
        if entry.key == PROVENANCE:
            return entry.value
    return None


def assert_uses_consistent(model: osg.Model) -> None:
    """Each value's use list is exactly the (node, slot) pairs that read it (no subgraphs here)."""
    graph = model.graph
    expected: dict[str, list[tuple[str, int]]] = {}
    for node in graph.nodes:
        for i, v in enumerate(node.inputs):
            if v is not None:
                expected.setdefault(v.name, []).append((node.name, i))
    seen = set()
    for node in graph.nodes:
        for v in list(node.inputs) + list(node.outputs):
            if v is None or v.name in seen:
                continue
            seen.add(v.name)
            got = sorted((n.name, i) for n, i in v.uses())
            assert got == sorted(expected.get(v.name, [])), v.name


@pytest.mark.parametrize("cls", [osg._core.Graph, osg._core.Node, osg._core.Value, osg._core.Model])
def test_bindings_expose_no_raw_mutator(cls):
    exposed = {name for name in dir(cls) if not name.startswith("__")}
    assert not exposed & RAW_MUTATORS, f"{cls.__name__} binds a raw IR mutator: {sorted(exposed & RAW_MUTATORS)}"


def test_node_set_input_keeps_both_use_lists_and_the_model_valid(oracle):
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y, float[N] Z) { [neg] n = Neg(X)  [relu] Y = Relu(n)  [sig] Z = Sigmoid(n) }""")
    sigmoid = [n for n in model.graph.nodes if n.op_type == "Sigmoid"][0]
    sigmoid.set_input(0, model.graph.value("X"))
    assert sorted(n.name for n, _ in model.graph.value("X").uses()) == ["neg", "sig"]
    assert [n.name for n, _ in model.graph.value("n").uses()] == ["relu"]
    assert_uses_consistent(model)
    proto = model.to_proto()
    onnx.checker.check_model(proto, full_check=True)
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    out = oracle.run_model(proto, {"X": x})
    np.testing.assert_allclose(out["Z"], 1 / (1 + np.exp(-x)), rtol=1e-6)
    np.testing.assert_allclose(out["Y"], np.maximum(-x, 0), rtol=1e-6)


def test_value_replace_all_uses_with_moves_every_use():
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { [a] A = Abs(X)  [b] B = Neg(A)  [c] Y = Add(A, B) }""")
    g = model.graph
    g.value("A").replace_all_uses_with(g.value("X"))
    assert g.value("A").uses() == []
    assert sorted((n.name, i) for n, i in g.value("X").uses()) == [("a", 0), ("b", 0), ("c", 0)]
    assert_uses_consistent(model)


def test_python_rule_nodes_carry_the_rule_and_rewired_inputs_stay_consistent(oracle):
    from onnxsurgeon.rules import Pattern, Rule, apply_rules

    p = Pattern("neg-neg")
    inner = p.op("Neg", p.any("x"), capture="inner")
    root = p.op("Neg", inner)

    def replace(m, rw):
        # Rewire through the rule's Rewriter, then build the replacement with it.
        rw.set_input(m.root, 0, m["x"])
        return rw.op("Identity", [m["x"]])

    text = """<ir_version: 10, opset_import: ["" : 18]>
g (float[N] X) => (float[N] Y) { [n1] a = Neg(X)  [n2] b = Neg(a)  [r] Y = Relu(b) }"""
    model = osg.parse_text(text)
    assert apply_rules(model, [Rule(p, root=root, replace=replace)]) == {"neg-neg": 1}
    assert_uses_consistent(model)
    proto = model.to_proto()
    made = [n for n in proto.graph.node if n.op_type == "Identity"]
    assert len(made) == 1 and rule_of(made[0]) == "neg-neg"
    assert all(n.op_type != "Neg" for n in proto.graph.node), "the rewired Negs were left dead and erased"
    oracle.assert_equivalent(osg.parse_text(text).to_proto(), proto)


def float_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    w = numpy_helper.from_array(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=np.float32), "W")
    nodes = [
        helper.make_node("Mul", ["X", "W"], ["m"], name="mul"),
        helper.make_node("Relu", ["m"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_convert_float16_casts_carry_the_pass(oracle):
    original = float_model()
    model = osg.Model.from_proto(original)
    osg.run(model, "convert-float16")
    assert_uses_consistent(model)
    proto = model.to_proto()
    casts = [n for n in proto.graph.node if n.op_type == "Cast"]
    assert casts, "float32 I/O needs a Cast at each boundary"
    assert {rule_of(n) for n in casts} == {"convert-float16"}
    # The other nodes are the model's own: no provenance stamped on them.
    assert all(rule_of(n) is None for n in proto.graph.node if n.op_type != "Cast")
    oracle.assert_equivalent(original, proto, rtol=1e-2, atol=1e-2)


def test_extract_constants_to_constant_nodes_carry_the_pass(oracle):
    original = float_model()
    model = osg.Model.from_proto(original)
    osg.run(model, "extract-constants=constant")
    assert_uses_consistent(model)
    proto = model.to_proto()
    constants = [n for n in proto.graph.node if n.op_type == "Constant"]
    assert [c.output[0] for c in constants] == ["W"], "the initializer's name is kept"
    assert rule_of(constants[0]) == "extract-constants"
    assert not proto.graph.initializer
    oracle.assert_equivalent(original, proto)
    # And back: the initializer has the name again, no node is left.
    osg.run(model, "extract-constants")
    back = model.to_proto()
    assert [i.name for i in back.graph.initializer] == ["W"] and all(n.op_type != "Constant" for n in back.graph.node)
    oracle.assert_equivalent(original, back)


def test_opset_adapter_nodes_carry_their_step(oracle):
    # Softmax-13 -> 11 changes its semantics (axis: one dim vs the flattened tail): the
    # adapter rebuilds it with helper nodes, each stamped opset/<Op>-<from>-to-<to>.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3, 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3, 4])
    graph = helper.make_graph([helper.make_node("Softmax", ["X"], ["Y"], axis=1, name="sm")], "g", [x], [y])
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model = osg.Model.from_proto(original)
    osg.run(model, "convert-opset=11")
    assert_uses_consistent(model)
    proto = model.to_proto()
    made = [n for n in proto.graph.node if n.name != "sm"]
    assert made, "Softmax(axis=1) at opset 11 needs a Transpose around it"
    assert all((rule_of(n) or "").startswith("opset/Softmax-13-to-") for n in made), [
        (n.op_type, rule_of(n)) for n in made
    ]
    oracle.assert_equivalent(original, proto)


def test_inlined_function_nodes_keep_the_bodys_metadata(oracle):
    # A clone is the function's node, not a rule's: it keeps what the body had.
    body = helper.make_node("Neg", ["x"], ["y"], name="inner")
    body.metadata_props.add(key="origin", value="body")
    f = helper.make_function("local", "F", ["x"], ["y"], [body], [helper.make_opsetid("", 18)])
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3])
    graph = helper.make_graph([helper.make_node("F", ["X"], ["Y"], domain="local", name="call")], "g", [x], [y])
    original = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)], functions=[f]
    )
    model = osg.Model.from_proto(original)
    osg.run(model, "inline-functions")
    assert_uses_consistent(model)
    proto = model.to_proto()
    assert [n.op_type for n in proto.graph.node] == ["Neg"]
    assert {(e.key, e.value) for e in proto.graph.node[0].metadata_props} == {("origin", "body")}
    oracle.assert_equivalent(original, proto)
