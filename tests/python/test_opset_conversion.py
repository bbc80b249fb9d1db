"""Opset conversion on real models (the torch/transformers corpus) and through the CLI.

Every corpus model above the target (exported at opset 14, 16, 17, 18 and 20) is
downgraded to 15 and to 13, and every one below it upgraded to 18, 21 and the newest
opset onnxruntime loads: the result is valid (onnx's full checker), claims the target
opset, holds only nodes the target defines, and computes what the original computes
(onnxruntime on the same inputs, and the torch reference outputs)."""

from __future__ import annotations

import json

import onnx
import onnxsurgeon as osg
import pytest


def default_opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def assert_defined_at(model: onnx.ModelProto, opset: int) -> None:
    """Every default-domain node (subgraphs and functions too) has a schema at `opset`."""

    def nodes(graph):
        for n in graph.node:
            yield n
            for a in n.attribute:
                if a.HasField("g"):
                    yield from nodes(a.g)
                for g in a.graphs:
                    yield from nodes(g)

    everything = list(nodes(model.graph)) + [n for f in model.functions for n in f.node]
    for n in everything:
        if n.domain in ("", "ai.onnx"):
            schema = onnx.defs.get_schema(n.op_type, opset, "")
            assert not schema.deprecated, f"{n.op_type} is deprecated at opset {opset}"


@pytest.mark.parametrize("target", [15, 13, 11])
def test_corpus_model_downgrades_equivalently(corpus_model, target, oracle):
    original = onnx.load(corpus_model.path)
    source = default_opset(original)
    converted = osg.run(original, f"downgrade-opset={target}")
    oracle.assert_valid(converted)
    if source <= target:
        assert default_opset(converted) == source  # already low enough: left alone
        return
    assert default_opset(converted) == target
    assert_defined_at(converted, target)
    if not corpus_model.runnable:
        return
    oracle.assert_equivalent(
        original, converted, inputs=corpus_model.inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
    )
    outputs = oracle.run_model(converted, corpus_model.inputs)
    oracle.assert_outputs_close(outputs, corpus_model.expected, rtol=corpus_model.rtol, atol=corpus_model.atol)


# 18: Split's num_outputs, Reduce*'s axes inputs; 21; the newest opset onnx defines and
# onnxruntime loads (28 with onnx 1.23.2 and onnxruntime 1.32).
@pytest.mark.parametrize("target", [18, 21, "newest"])
def test_corpus_model_upgrades_equivalently(corpus_model, target, oracle):
    if target == "newest":
        import opset_backend

        target = opset_backend.highest()
    original = onnx.load(corpus_model.path)
    if default_opset(original) >= target:
        pytest.skip(f"already at opset {default_opset(original)}")
    converted = osg.run(original, f"upgrade-opset={target}")
    oracle.assert_valid(converted)
    assert default_opset(converted) == target
    assert_defined_at(converted, target)
    if corpus_model.runnable:
        oracle.assert_equivalent(
            original, converted, inputs=corpus_model.inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
        )


def test_round_trip_down_and_up(corpus, oracle):
    m = corpus.model("bert_dynamo18")
    original = onnx.load(m.path)
    down = osg.run(original, "convert-opset=11")
    up = osg.run(down, "convert-opset=18")
    oracle.assert_valid(up)
    assert default_opset(up) == 18
    oracle.assert_equivalent(original, up, inputs=m.inputs, rtol=m.rtol, atol=m.atol)


def test_refusal_names_node_op_versions_and_why(corpus):
    model = onnx.load(corpus.model("bert_dynamo18").path)
    with pytest.raises(Exception) as error:
        osg.run(model, "downgrade-opset=7")
    message = str(error.value)
    assert "cannot convert to opset 7" in message
    assert "(Erf)" in message and "opset 18 -> 7" in message and "does not exist before opset 9" in message
    # Two nodes block this conversion; the error stays one line.
    assert "\n" not in message


def test_allow_partial_stops_at_the_nearest_reachable_opset(corpus, oracle):
    m = corpus.model("bert_dynamo18")
    original = onnx.load(m.path)
    report: list = []
    converted = osg.run(original, "downgrade-opset(opset=7, allow-partial=true)", report=report)
    # Erf exists from 9 on: the model goes to 9, never claims 7 with an Erf inside.
    assert default_opset(converted) == 9
    assert_defined_at(converted, 9)
    oracle.assert_valid(converted)
    oracle.assert_equivalent(original, converted, inputs=m.inputs, rtol=m.rtol, atol=m.atol)
    counts = report[0]["counts"] if isinstance(report[0], dict) else report[0].counts
    assert any(k.startswith("partial: opset 7 not reached, stopped at 9") for k in counts)
    assert any("blocked:" in k and "Erf" in k for k in counts)


def test_cli_check_lists_blockers(run_cli, corpus):
    path = corpus.model("bert_dynamo18").path
    proc = run_cli("check", "--opset", "7", "--json", path, expect_rc=1)
    report = json.loads(proc.stdout)
    assert report["opset"] == 18 and report["target"] == 7 and not report["convertible"]
    assert {b["op"] for b in report["blockers"]} == {"Erf"}
    assert all(b["from"] == 18 and b["to"] == 7 and "opset 9" in b["why"] for b in report["blockers"])
    text = run_cli("check", "--opset", "13", path).stdout
    assert "convertible" in text
    run_cli("check", path, expect_rc=2)  # --opset is required


def test_check_writes_nothing_and_changes_nothing(run_cli, corpus, tmp_path):
    path = corpus.model("layernorm_op20").path
    before = path.read_bytes()
    run_cli("check", "--opset", "13", path)
    assert path.read_bytes() == before
    out = tmp_path / "m13.onnx"
    run_cli("--pass", "downgrade-opset=13", path, "-o", out)
    assert default_opset(onnx.load(out)) == 13
    onnx.checker.check_model(onnx.load(out), full_check=True)


def test_bad_targets_are_usage_errors(corpus):
    model = onnx.load(corpus.model("layernorm_op20").path)
    for pipeline in ["convert-opset=3", "convert-opset=999", "downgrade-opset=abc"]:
        with pytest.raises(Exception):
            osg.run(model, pipeline)
