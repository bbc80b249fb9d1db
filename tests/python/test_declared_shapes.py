"""Declared shapes that contradict the computation: inspect reports them
and names the repair; convert-opset refuses instead of writing a model onnx's checker
rejects; fix-declared-shapes repairs them and the conversion is then valid."""

from __future__ import annotations

import json

import onnx
import onnxsurgeon as osg

CONTRADICTION = """<ir_version: 7, opset_import: ["" : 11]>
g (float[2,3,4] x) => (float[6] y) {
  s = Shape(x)
  y = Reshape(x, s)
}"""


def test_inspect_reports_the_contradiction_and_the_fix(run_cli, tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(osg.parse_text(CONTRADICTION).to_proto(), path)
    onnx.checker.check_model(onnx.load(path), full_check=True)  # the checker cannot see it at 11
    report = json.loads(run_cli("inspect", "--json", path).stdout)
    assert report["declared_shape_conflicts"] == [
        {
            "value": "y",
            "where": "graph output",
            "declared": "float[6]",
            "computed": "float[2,3,4]",
            "fix": "fix-declared-shapes",
        }
    ]
    assert "--pass fix-declared-shapes" in run_cli("inspect", path).stdout


def test_convert_repairs_a_declaration_it_makes_refutable(run_cli, tmp_path, oracle):
    """At opset 21 onnx's checker proves the stale declaration wrong: convert-opset replaces
    it by what the graph computes (and says so), as fix-declared-shapes does."""
    path = tmp_path / "m.onnx"
    original = osg.parse_text(CONTRADICTION).to_proto()
    onnx.save(original, path)
    out = tmp_path / "o.onnx"
    proc = run_cli("--pass", "convert-opset=21", "--report", "json", path, "-o", out)
    (report,) = json.loads(proc.stdout)
    assert report["counts"]["graph-output-shapes-repaired"] == 1
    oracle.assert_valid(out)
    assert oracle.run_model(out, {"x": __import__("numpy").ones((2, 3, 4), "float32")})["y"].shape == (2, 3, 4)


def test_no_conflicts_on_a_clean_model(run_cli, corpus):
    report = json.loads(run_cli("inspect", "--json", corpus.model("layernorm_op17").path).stdout)
    assert report["declared_shape_conflicts"] == []
