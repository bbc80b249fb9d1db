"""`onnxsurgeon diff A B`: nodes, ops, initializers, shapes and opsets that changed, as
text and JSON, on hand-made pairs and on a real before/after pair."""

from __future__ import annotations

import json

import numpy as np
from onnx import TensorProto, helper, numpy_helper
from test_cli import small_model, write


def test_identical_models(run_cli, tmp_path):
    a = write(small_model(), tmp_path / "a.onnx")
    b = write(small_model(), tmp_path / "b.onnx")
    assert "no differences" in run_cli("diff", a, b).stdout
    report = json.loads(run_cli("diff", "--json", a, b).stdout)
    assert report["identical"] is True and report["nodes"]["matched_by_name"] == 3


def test_every_kind_of_change(run_cli, tmp_path):
    before = small_model(opset=17)
    after = small_model(opset=17)
    after.opset_import[0].version = 18
    after.graph.node[2].op_type = "Sigmoid"  # relu: op changed
    after.graph.node[1].attribute.append(helper.make_attribute("note", 1))  # add: attribute
    after.graph.initializer[1].CopyFrom(numpy_helper.from_array(np.full(4, 2, np.float32), "B"))  # data
    after.graph.initializer.append(numpy_helper.from_array(np.zeros(2, np.int64), "extra"))
    after.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1  # X: N -> 1
    after.graph.node.append(helper.make_node("Identity", ["Y"], ["Z"], name="new"))
    after.graph.output[0].name = "Z"
    a, b = write(before, tmp_path / "a.onnx"), write(after, tmp_path / "b.onnx")

    text = run_cli("diff", a, b).stdout
    assert "~ ai.onnx: 17 -> 18" in text
    assert "~ X: float[N,4] -> float[1,4]" in text
    assert "- Y: float[N,4]" in text and "+ Z: float[N,4]" in text
    assert "Relu: 1 -> 0" in text and "Sigmoid: 0 -> 1" in text
    assert "~ B: float[4] 16 B -> float[4] 16 B (data changed)" in text
    assert "+ extra: int64[2] 16 B" in text
    assert "+ new (Identity)" in text
    assert "~ relu (Relu) -> relu (Sigmoid): op" in text
    assert "~ add (Add): attribute note" in text

    j = json.loads(run_cli("diff", "--json", a, b).stdout)
    assert j["identical"] is False
    assert j["opsets"] == [{"name": "ai.onnx", "before": "17", "after": "18"}]
    assert j["op_counts"]["Sigmoid"] == {"before": 0, "after": 1}
    assert {"name": "new", "op": "Identity"} in j["nodes_added"]
    changed = {c["before"]["name"]: c["what"] for c in j["nodes_changed"]}
    assert changed == {"relu": ["op"], "add": ["attribute note"]}


def test_unnamed_nodes_match_by_structure(run_cli, tmp_path):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])

    def model(*nodes):
        return helper.make_model(
            helper.make_graph(list(nodes), "g", [x], [y]), opset_imports=[helper.make_opsetid("", 17)]
        )

    a = write(model(helper.make_node("Relu", ["X"], ["t"]), helper.make_node("Neg", ["t"], ["Y"])), tmp_path / "a.onnx")
    b = write(model(helper.make_node("Relu", ["X"], ["t"]), helper.make_node("Abs", ["t"], ["Y"])), tmp_path / "b.onnx")
    j = json.loads(run_cli("diff", "--json", a, b).stdout)
    assert j["nodes"]["matched_by_structure"] == 1, "Relu matched by op and outputs"
    assert j["nodes_removed"] == [{"name": "", "op": "Neg"}] and j["nodes_added"] == [{"name": "", "op": "Abs"}]


def test_real_before_after_pair(run_cli, corpus, tmp_path):
    model = corpus.model("cnn_clutter_op13")
    out = tmp_path / "simplified.onnx"
    run_cli("-q", "--pass", "simplify", model.path, "-o", out)
    j = json.loads(run_cli("diff", "--json", model.path, out).stdout)
    assert j["nodes"]["before"] > j["nodes"]["after"]
    removed_ops = {r["op"] for r in j["nodes_removed"]}
    assert removed_ops, "simplify removed nodes and diff names them"
    dropped = sum(v["before"] - v["after"] for v in j["op_counts"].values())
    assert dropped == j["nodes"]["before"] - j["nodes"]["after"]
    assert j["outputs"] == [], "simplify keeps the interface"
    text = run_cli("diff", model.path, out).stdout
    assert "nodes removed" in text


def test_diff_bad_input(run_cli, tmp_path):
    a = write(small_model(), tmp_path / "a.onnx")
    proc = run_cli("diff", a, tmp_path / "missing.onnx", expect_rc=1)
    assert "missing.onnx" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "diff" in run_cli("diff", a, expect_rc=2).stderr
