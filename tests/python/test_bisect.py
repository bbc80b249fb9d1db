"""`onnxsurgeon bisect` and onnxsurgeon.bisect: the first pass, then the first rule
application within it, that changes what a real model computes, and a reproducer of a
few nodes; on an approximating pass (CLI) and on a deliberately broken test-only rule
registered from Python."""

from __future__ import annotations

import json

import onnx
import onnxsurgeon as osg
import pytest
from onnxsurgeon.rules import Pattern, Rule
from test_cli import small_model, write


def test_bisect_names_the_rule_where_an_approximation_enters(run_cli, corpus, tmp_path):
    model = corpus.model("gelu_op20")
    pipeline = "fold-constants,rewrite-gelu(to=sigmoid),simplify"
    # As --check judges it (tolerance widened for rewrite-gelu): nothing to find.
    assert "nothing to find" in run_cli("bisect", "--pass", pipeline, model.path).stdout
    repro = tmp_path / "repro.onnx"
    proc = run_cli("bisect", "--pass", pipeline, "--no-widen", model.path, "-o", repro, expect_rc=1)
    assert "pass 2 'rewrite-gelu(to=sigmoid)' changes the outputs" in proc.stdout
    assert "step: gelu-op at node" in proc.stdout
    reproducer = onnx.load(repro)
    assert [n.op_type for n in reproducer.graph.node] == ["Gelu"]
    onnx.checker.check_model(reproducer, full_check=True)
    # Deterministic: the same answer twice.
    runs = [
        json.loads(run_cli("bisect", "--json", "--pass", pipeline, "--no-widen", model.path, expect_rc=1).stdout)
        for _ in range(2)
    ]
    for r in runs:
        del r["comparison"]["python"]
    assert runs[0] == runs[1]
    assert runs[0]["rule"] == "gelu-op" and runs[0]["reproduces"] is True and runs[0]["step"] == 1


def test_bisect_without_a_difference_exits_0(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("bisect", "--pass", "simplify", src, "-o", tmp_path / "r.onnx")
    assert "nothing to find" in proc.stdout and not (tmp_path / "r.onnx").exists()
    assert "did you mean" in run_cli("bisect", "--pass", "simplfy", src, expect_rc=2).stderr


def broken_relu() -> Rule:
    """Relu(x) -> Abs(x): right for x >= 0 only. A test-only rule, registered from Python."""
    p = Pattern("relu-as-abs")
    relu = p.op("Relu", p.any("x"))
    return Rule(p, root=relu, replace=lambda m, rw: rw.op("Abs", [m["x"]]))


def harmless() -> Rule:
    """Mul(x, 1) -> x: exact."""
    p = Pattern("mul-by-one")
    mul = p.op("Mul", p.any("x"), p.scalar("one", 1.0), commutative=True)
    return Rule(p, root=mul, replace=lambda m, rw: m["x"])


@pytest.fixture(scope="module")
def broken_pass():
    osg.register_rules("test-harmless-rules", [harmless()])
    osg.register_rules("test-broken-rules", [harmless(), broken_relu()])
    return "test-broken-rules"


def test_bisect_finds_a_broken_rule_in_a_real_fpn(corpus, broken_pass):
    model = corpus.model("fpn_dynamic_hw_op13")
    relus = [n.name for n in onnx.load(model.path).graph.node if n.op_type == "Relu"]
    assert len(relus) >= 2
    result = osg.bisect(model.path, ["test-harmless-rules", "fold-constants", broken_pass, "simplify"])
    assert result["differs"] is True
    assert result["pass"] == broken_pass and result["pass_index"] == 2
    assert result["rule"] == "relu-as-abs" and result["root"] in relus
    assert result["reproduces"] is True
    reproducer = result["reproducer"]
    assert reproducer is not None and len(reproducer.graph.nodes) <= 4
    assert "Relu" in [n.op_type for n in reproducer.graph.nodes]
    # The same answer again, and the input model untouched.
    again = osg.bisect(model.path, ["test-harmless-rules", "fold-constants", broken_pass, "simplify"])
    assert (again["root"], again["step"], again["steps"]) == (result["root"], result["step"], result["steps"])


def test_bisect_finds_unnamed_nodes_by_their_outputs(run_cli, tmp_path):
    """Node names are optional in ONNX: the step's nodes are found again by their outputs."""
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [4, 8])
    y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [4, 8])
    nodes = [
        onnx.helper.make_node("Relu", ["x"], ["r"]),
        onnx.helper.make_node("Gelu", ["r"], ["g"]),
        onnx.helper.make_node("Neg", ["g"], ["y"]),
    ]
    model = onnx.helper.make_model(
        onnx.helper.make_graph(nodes, "g", [x], [y]), opset_imports=[onnx.helper.make_opsetid("", 20)]
    )
    src = write(model, tmp_path / "unnamed.onnx")
    repro = tmp_path / "repro.onnx"
    report = json.loads(
        run_cli(
            "bisect", "--json", "--pass", "rewrite-gelu(to=sigmoid)", "--no-widen", src, "-o", repro, expect_rc=1
        ).stdout
    )
    assert report["rule"] == "gelu-op" and report["node_outputs"][0] == "g"
    assert report["reproduces"] is True and report["reproducer"] == str(repro)
    assert [n.op_type for n in onnx.load(repro).graph.node] == ["Gelu"]


def test_bisect_finds_the_node_of_a_pass_without_finer_steps(run_cli, tmp_path):
    """convert-float16 is one step: the node is found by converting prefixes of the model on
    their own. 1e-8 is 0 in float16, so the scaling back by 1e8 gives 0 where the original
    gives R: the difference shows at the second Mul; the nodes before it are exact enough."""
    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (float[4,8] X) => (float[4,8] Y) <float small = {1e-8}, float big = {1e8}> {
  R = Relu(X)
  M = Mul(R, small)
  Y = Mul(M, big)
}""")
    src = write(model, tmp_path / "in.onnx")
    repro = tmp_path / "repro.onnx"
    proc = run_cli("bisect", "--pass", "convert-float16", src, "-o", repro, expect_rc=1)
    assert "pass 1 'convert-float16' changes the outputs" in proc.stdout, proc.stdout
    assert "no finer steps" in proc.stdout
    report = json.loads(run_cli("bisect", "--json", "--pass", "convert-float16", src, expect_rc=1).stdout)
    assert report["found_by_prefixes"] is True and report["reproduces"] is True, report
    assert report["node_outputs"] == ["Y"], report
    assert 1 <= len(onnx.load(repro).graph.node) <= 3
