"""The Python package: load/save, onnx.ModelProto interop, the IR views, run(), errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper

TEXT = """
<ir_version: 10, opset_import: ["" : 18]>
g (float[N,4] X) => (float[N,4] Y) {
  [a] A = Relu(X)
  [b] B = Neg(A)
  [c] Y = Add(A, B)
}
"""


def proto_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])
    w = numpy_helper.from_array(np.full((2, 3), 0.5, dtype=np.float32), "W")
    graph = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"], name="mul")], "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_from_proto_to_proto_is_lossless():
    p = proto_model()
    m = osg.Model.from_proto(p)
    assert m.to_proto() == p
    assert osg.load(p.SerializeToString()).to_proto() == p


def test_load_save_paths(tmp_path):
    p = proto_model()
    onnx.save(p, tmp_path / "m.onnx")
    m = osg.load(tmp_path / "m.onnx")
    osg.save(m, tmp_path / "o.onnx")
    assert onnx.load(tmp_path / "o.onnx") == p
    m.save(str(tmp_path / "e.onnx"), external_data="all", size_threshold=0)
    assert (tmp_path / "e.onnx.data").exists()
    assert onnx.load(tmp_path / "e.onnx").graph.initializer[0].raw_data == p.graph.initializer[0].raw_data


def test_ir_views_and_use_lists():
    m = osg.parse_text(TEXT)
    g = m.graph
    assert [n.name for n in g.nodes] == ["a", "b", "c"]
    a = g.value("A")
    assert a.producer().name == "a"
    assert [(n.name, i) for n, i in a.uses()] == [("b", 0), ("c", 0)]
    assert g.value("Y").is_graph_output and g.value("X").is_graph_input
    assert g.value("X").type == "float[N,4]"
    assert m.opset_version("") == 18


def test_replace_all_uses_with_refuses_graph_outputs_unless_asked():
    m = osg.parse_text(TEXT)
    g = m.graph
    with pytest.raises(osg.OnnxSurgeonError, match="graph output"):
        g.value("Y").replace_all_uses_with(g.value("B"))
    g.value("A").replace_all_uses_with(g.value("X"))
    assert [n.name for n, _ in g.value("X").uses()] == ["a", "b", "c"]
    assert g.value("A").uses() == []
    g.value("Y").replace_all_uses_with(g.value("B"), allow_graph_outputs=True)
    assert g.outputs[0].name == "Y" and g.outputs[0].producer().name == "b"


def test_attributes():
    m = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[2,3] X) => (float[3,2] Y) { [t] Y = Transpose <perm = [1, 0]> (X) }""")
    node = m.graph.nodes[0]
    assert node.attribute_names == ["perm"]
    assert node.attribute("perm") == [1, 0]
    with pytest.raises(KeyError):
        node.attribute("nope")


def test_inspect_dict():
    report = osg.inspect(proto_model())
    assert report["op_histogram"] == {"Mul": 1}
    assert report["opsets"] == {"ai.onnx": 17}


def test_run_accepts_model_proto_and_path(tmp_path):
    p = proto_model()
    out = osg.run(p, "nop")
    assert isinstance(out, onnx.ModelProto) and out == p
    onnx.save(p, tmp_path / "m.onnx")
    report = []
    path = osg.run(tmp_path / "m.onnx", "nop", output=tmp_path / "o.onnx", report=report)
    assert path == str(tmp_path / "o.onnx") and onnx.load(path) == p
    assert report[0]["pass"] == "nop"
    m = osg.load(tmp_path / "m.onnx")
    assert osg.run(m, "nop") is m
    assert [p["name"] for p in osg.passes()][0] == "nop"


def test_errors_are_onnxsurgeon_errors(tmp_path):
    with pytest.raises(osg.OnnxSurgeonError, match="column 1"):
        osg.run(proto_model(), "bogus")
    (tmp_path / "bad.onnx").write_bytes(b"\x0a\xff")
    with pytest.raises(osg.OnnxSurgeonError, match="bad.onnx"):
        osg.load(tmp_path / "bad.onnx")
    with pytest.raises(ValueError):  # OnnxSurgeonError is a ValueError
        osg.parse_text("not onnx text")
    with pytest.raises(TypeError):
        osg.run(42, "nop")


def test_checker_and_shape_inference_through_onnx_cpp():
    m = osg.parse_text(TEXT)
    m.check()
    assert m.infer_shapes() == 2  # A and B gain types
    assert m.graph.value("A").type == "float[N,4]"
    bad = osg.parse_text("""<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { Y = NoSuchOp(X) }""")
    with pytest.raises(osg.OnnxSurgeonError, match="NoSuchOp"):
        bad.check()


@pytest.mark.parametrize("order", ["onnx-first", "onnxsurgeon-first"])
def test_onnx_and_onnxsurgeon_coexist_in_one_process(order):
    """Both carry protobuf and onnx's C++ code; neither may clash with the other."""
    imports = ["import onnx", "import onnxsurgeon as osg"]
    if order == "onnxsurgeon-first":
        imports.reverse()
    code = "\n".join(imports) + textwrap.dedent("""
        from onnx import helper, TensorProto
        x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])
        m = helper.make_model(helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "g", [x],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])]))
        onnx.checker.check_model(m, full_check=True)
        assert osg.Model.from_proto(m).to_proto() == m
        onnx.shape_inference.infer_shapes(m)
        osg.Model.from_proto(m).check()
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def test_run_right_after_a_dynamo_export(oracle):
    """The cleanup step users put after torch.onnx.export(dynamo=True): the ONNXProgram or
    its model_proto goes in, a ModelProto comes out, computing what torch computes."""
    torch = pytest.importorskip("torch")

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = torch.nn.Linear(16, 16)
            self.norm = torch.nn.LayerNorm(16)

        def forward(self, x):
            h = self.proj(x)
            mean = h.mean(-1, keepdim=True)  # a hand-written LayerNorm beside the module one
            h = (h - mean) / torch.sqrt(((h - mean) ** 2).mean(-1, keepdim=True) + 1e-5)
            return self.norm(torch.nn.functional.gelu(h))

    torch.manual_seed(0)
    module = Block().eval()
    x = torch.randn(2, 5, 16)
    program = torch.onnx.export(module, (x,), dynamo=True, opset_version=18)
    for given in (program, program.model_proto):
        fixed = osg.run(given, "fix-layernorm,simplify")
        assert isinstance(fixed, onnx.ModelProto)
        assert oracle.op_histogram(fixed).get("LayerNormalization") == 2
        (y,) = oracle.run_model(fixed, {fixed.graph.input[0].name: x.numpy()}).values()
        np.testing.assert_allclose(y, module(x).detach().numpy(), rtol=1e-4, atol=1e-4)
