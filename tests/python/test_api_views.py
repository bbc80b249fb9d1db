"""The Python package's surface: __version__, typed stubs, reprs, structured
types, attributes of every kind both ways, pipelines as lists, path inputs never written
unless output= names them, zero-copy ModelProto interop, rule sets named in pipelines."""

from __future__ import annotations

import ast
import pathlib
import re
import sys

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxsurgeon.rules import Pattern, Rule

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "onnxsurgeon"

TEXT = """
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X, seq(float[2]) S) => (float[N,4] Y) {
  [a] A = Relu(X)
  [b] Y = Neg(A)
}
"""


def test_version_matches_pyproject():
    toml = (ROOT / "pyproject.toml").read_text()
    assert re.search(r'^version = "([^"]+)"', toml, re.M).group(1) == osg.__version__


def test_stubs_and_py_typed_ship_with_the_package():
    assert (PKG / "py.typed").exists()
    stub = ast.parse((PKG / "_core.pyi").read_text())
    classes = {
        n.name: {m.name for m in n.body if isinstance(m, ast.FunctionDef)}
        for n in stub.body
        if isinstance(n, ast.ClassDef)
    }
    # Every public method of the extension's classes is declared in the stub.
    for cls in (osg.Model, osg.Graph, osg.Node, osg.Value):
        public = {name for name in dir(cls) if not name.startswith(("__", "_pybind11"))}
        missing = public - classes[cls.__name__] - {"from_proto", "to_proto", "inspect", "type", "attrs"}
        declared_props = {
            a.target.id
            for n in stub.body
            if isinstance(n, ast.ClassDef) and n.name == cls.__name__
            for a in n.body
            if isinstance(a, ast.AnnAssign)
        }
        assert missing - declared_props == set(), cls.__name__


def test_reprs_name_what_they_show():
    m = osg.parse_text(TEXT)
    assert repr(m) == "<Model ir_version=10 opsets={ai.onnx:18} graph 'g' with 2 nodes>"
    assert repr(m.graph) == "<Graph 'g' with 2 nodes>"
    assert repr(m.graph.nodes[0]) == "<Node 'a' Relu(X) -> (A)>"
    assert repr(m.graph.value("X")) == "<Value 'X' float[N,4]>"


def test_value_type_is_structured_and_compares_with_its_text():
    m = osg.parse_text(TEXT)
    t = m.graph.value("X").type
    assert isinstance(t, osg.ValueType)
    assert (t.kind, t.dtype, t.elem_type, t.shape, t.rank) == ("tensor", "float", TensorProto.FLOAT, ("N", 4), 2)
    assert t == "float[N,4]" and str(t) == "float[N,4]"
    s = m.graph.value("S").type
    assert s.kind == "sequence" and s.element.shape == (2,) and s.element.dtype == "float"
    assert m.graph.value("A").type is None  # intermediate value without annotation
    m.infer_shapes()
    assert m.graph.value("A").type == m.graph.value("X").type


def test_producer_and_uses_are_both_methods():
    m = osg.parse_text(TEXT)
    a = m.graph.value("A")
    assert a.producer().name == "a"
    assert [(n.name, i) for n, i in a.uses()] == [("b", 0)]
    assert m.graph.value("X").producer() is None


def attr_model():
    t = numpy_helper.from_array(np.arange(6, dtype=np.int32).reshape(2, 3))
    node = helper.make_node(
        "Custom",
        ["X"],
        ["Y"],
        domain="custom",
        name="n",
        i=3,
        f=0.5,
        s="héllo",
        ints=[1, 2],
        floats=[0.5, 1.5],
        strings=["a", "b"],
        t=t,
        tensors=[t],
        tp=helper.make_tensor_type_proto(TensorProto.FLOAT, [2]),
    )
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("custom", 1)])


def test_attributes_read_as_python_values():
    node = osg.Model.from_proto(attr_model()).graph.nodes[0]
    a = node.attrs
    assert a["i"] == 3 and a["f"] == 0.5 and a["ints"] == [1, 2] and a["floats"] == [0.5, 1.5]
    assert a["s"] == "héllo" and a["strings"] == ["a", "b"]  # STRING attributes are str
    np.testing.assert_array_equal(a["t"], np.arange(6, dtype=np.int32).reshape(2, 3))
    assert a["t"].dtype == np.int32 and len(a["tensors"]) == 1
    assert isinstance(a["tp"], onnx.TypeProto) and a["tp"].tensor_type.elem_type == TensorProto.FLOAT


def test_attrs_written_by_a_rule_take_every_kind_back():
    """What Node.attrs returns, Rewriter.op(attrs=...) takes: a rule copies every attribute."""
    model = osg.Model.from_proto(attr_model())
    p = Pattern("copy-custom")
    x = p.any("x")
    root = p.op("Custom", x, domain="custom", capture="n")
    seen = {}

    def replace(m, rw):
        attrs = m.node("n").attrs
        seen.update(attrs)
        return rw.op("Custom2", [m["x"]], attrs=attrs, domain="custom")

    assert osg.apply_rules(model, [Rule(p, root, replace)]) == {"copy-custom": 1}
    got = osg.Model.from_proto(model.to_proto()).graph.nodes[0]
    assert got.op_type == "Custom2"
    before = {a.name: a for a in attr_model().graph.node[0].attribute}
    after = {a.name: a for a in model.to_proto().graph.node[0].attribute}
    for name, attr in before.items():
        assert after[name].type == attr.type, name
    assert after["t"].t.data_type == TensorProto.INT32 and list(after["t"].t.dims) == [2, 3]
    assert after["s"].s == "héllo".encode()


def test_attrs_refuse_what_has_no_attribute_type():
    model = osg.parse_text(TEXT)
    p = Pattern("bad-attr")
    root = p.op("Relu", p.any("x"))

    def replace(m, rw):
        return rw.op("Relu", [m["x"]], attrs={"bad": object()})

    # The replacement's TypeError surfaces as the rule's failure, naming the attribute.
    with pytest.raises(osg.OnnxSurgeonError, match="attribute 'bad': object is no attribute type"):
        osg.apply_rules(model, [Rule(p, root, replace)])


def test_run_takes_a_list_of_pass_strings():
    m = osg.parse_text(TEXT)
    report = []
    osg.run(m, ["nop", "dce", "set-input-shape(shapes=X:2x4)"], report=report)
    assert [r["pass"] for r in report] == ["nop", "dce", "set-input-shape"]
    assert m.graph.value("X").type == "float[2,4]"
    with pytest.raises(TypeError):
        osg.run(m, ["nop", 3])


def test_a_path_input_is_never_written_without_output(tmp_path):
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Identity", ["X"], ["A"]), helper.make_node("Relu", ["A"], ["Y"])],
            "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
        ),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    before = src.read_bytes()
    result = osg.run(src, "strip-identity-cast")
    assert isinstance(result, osg.Model) and len(result.graph) == 1
    assert src.read_bytes() == before  # untouched
    out = osg.run(str(src), "strip-identity-cast", output=tmp_path / "o.onnx")
    assert out == str(tmp_path / "o.onnx") and len(onnx.load(out).graph.node) == 1
    assert src.read_bytes() == before
    # output= naming the input is refused (as the CLI's -o is); replacing it in place is
    # asked for explicitly on save.
    with pytest.raises(osg.OnnxSurgeonError, match="is the input model"):
        osg.run(src, "strip-identity-cast", output=src)
    assert src.read_bytes() == before
    result.save(str(src), replace_source=True)
    assert len(onnx.load(src).graph.node) == 1


def test_model_proto_path_shares_bytes_and_leaves_the_proto_alone():
    w = numpy_helper.from_array(np.arange(1 << 16, dtype=np.float32), "W")
    model = helper.make_model(
        helper.make_graph(
            [helper.make_node("Add", ["X", "W"], ["Y"])],
            "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1 << 16])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1 << 16])],
            [w],
        ),
        opset_imports=[helper.make_opsetid("", 18)],
    )
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    out = osg.run(model, "simplify")
    assert model == copy and out == model
    # The buffer the weights view stays alive after the proto and its bytes are gone.
    m = osg.Model.from_proto(model)
    del model
    assert numpy_helper.to_array(m.to_proto().graph.initializer[0])[-1] == (1 << 16) - 1
    slim, parts = m._to_parts(16 * 1024)
    mv = memoryview(slim)
    assert mv.readonly and [i for i, _ in parts] == [0] and len(parts[0][1]) == 4 << 16


def test_rule_set_registered_from_python_runs_in_a_pipeline():
    p = Pattern("neg-neg")
    x = p.any("x")
    root = p.op("Neg", p.op("Neg", x))
    osg.register_rules("py-strip-double-neg", [Rule(p, root, lambda m, rw: m["x"])], summary="Neg(Neg(x)) -> x")
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { a = Neg(X)  b = Neg(a)  Y = Relu(b) }""")
    report = []
    osg.run(model, "py-strip-double-neg(max-rewrites=5),dce", report=report)
    assert [n.op_type for n in model.graph.nodes] == ["Relu"]
    assert report[0]["counts"] == {"neg-neg": 1}
    assert any(p["name"] == "py-strip-double-neg" for p in osg.passes())
    # A module with a RULES list registers too; built-in names and bad names are refused.
    module = type(sys)("my_rules")
    module.RULES = [Rule(p, root, lambda m, rw: m["x"])]
    osg.register_rules("py-module-rules", module)
    with pytest.raises(osg.OnnxSurgeonError, match="built-in"):
        osg.register_rules("simplify", module)
    with pytest.raises(osg.OnnxSurgeonError, match="kebab-case"):
        osg.register_rules("Bad_Name", module)
    with pytest.raises(osg.OnnxSurgeonError, match="unknown pass 'py-not-registered'"):
        osg.run(model, "py-not-registered")


def test_docs_python_worked_example_runs_and_computes_the_same(oracle):
    """docs/python.md's rule, verbatim: x * sigmoid(x) -> com.microsoft.QuickGelu."""
    text = (ROOT / "docs" / "python.md").read_text()
    example = text.split("```python\nimport onnxsurgeon as osg\nfrom onnxsurgeon.rules")[1].split("```")[0]
    example = "import onnxsurgeon as osg\nfrom onnxsurgeon.rules" + example
    example = example.replace('model = osg.load("model.onnx")\n', "")
    model = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[2,8] X) => (float[2,8] Y) { s = Sigmoid(X)  a = Mul(s, X)  t = Sigmoid(a)  Y = Mul(a, t) }""")
    original = model.to_proto()
    scope = {"model": model}
    exec(compile(example, "docs/python.md", "exec"), scope)
    assert scope["counts"] == {"silu-to-quickgelu": 2}
    fused = model.to_proto()
    assert [n.op_type for n in fused.graph.node] == ["QuickGelu", "QuickGelu"]
    oracle.assert_equivalent(
        original, fused, inputs={"X": np.linspace(-4, 4, 16, dtype=np.float32).reshape(2, 8)}, rtol=1e-5, atol=1e-6
    )
