"""`onnxsurgeon compare` and onnxsurgeon.compare: the first tensor where two models part,
on real exports (a perturbed weight, a rewrite that keeps the outputs, reference outputs
from torch), in bounded batches, with the HTML error plot checked in headless Chromium."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import numpy_helper
from test_cli import small_model, write
from test_cli_report import browse, chromium


def perturb_one_weight(model: onnx.ModelProto) -> tuple[onnx.ModelProto, str]:
    """A copy with one float weight (read by exactly one node, from the middle of the graph)
    changed by 1.0 in one element, and the node that reads it."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    weights = {i.name: i for i in model.graph.initializer}
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in model.graph.node:
        for name in node.input:
            if name in weights:
                readers.setdefault(name, []).append(node)
    candidates = [
        name
        for name, nodes in readers.items()
        if len(nodes) == 1 and weights[name].data_type == onnx.TensorProto.FLOAT and np.prod(weights[name].dims) > 16
    ]
    name = candidates[len(candidates) // 2]
    array = numpy_helper.to_array(weights[name]).copy()
    array.flat[0] += 1.0
    weights[name].CopyFrom(numpy_helper.from_array(array, name))
    return model, readers[name][0].name


@pytest.mark.parametrize("name", ["bert_op14", "cnn_clutter_op13"])
def test_perturbed_weight_names_the_node_that_reads_it(run_cli, corpus, tmp_path, name):
    original = corpus.model(name)
    perturbed, reader = perturb_one_weight(onnx.load(original.path))
    b = write(perturbed, tmp_path / "perturbed.onnx")
    proc = run_cli("compare", original.path, b, expect_rc=1)
    assert f"made by node '{reader}'" in proc.stdout, proc.stdout
    report = json.loads(run_cli("compare", "--json", original.path, b, expect_rc=1).stdout)
    first = report["first_divergence"]
    assert report["ok"] is False and first["a_node"] == reader and first["problem"]
    # Everything before it is bit-identical: the same graph, the same weights up to there.
    rows = report["tensors"]
    before = rows[: rows.index(first)]
    assert before and all(r["max_abs"] == 0 for r in before if r["computed"])


def test_a_renamed_region_is_paired_at_its_boundary(run_cli, corpus, tmp_path):
    """A rewrite that renames what it makes and records no provenance (a hand edit, another
    tool): the node that reads the perturbed weight and its output get new names, so neither
    name nor provenance pairs them; the unchanged nodes that read that output do."""
    original = corpus.model("cnn_clutter_op13")
    edited, reader = perturb_one_weight(onnx.load(original.path))
    node = next(n for n in edited.graph.node if n.name == reader)
    old, new = node.output[0], node.output[0] + "_edited"
    node.name, node.output[0] = reader + "_edited", new
    for other in edited.graph.node:
        other.input[:] = [new if name == old else name for name in other.input]
    assert old not in {o.name for o in edited.graph.output}
    b = write(edited, tmp_path / "edited.onnx")
    report = json.loads(run_cli("compare", "--json", original.path, b, expect_rc=1).stdout)
    first = report["first_divergence"]
    assert first["a_node"] == reader and first["matched_by"] == "boundary", first
    assert "at region boundaries" in run_cli("compare", original.path, b, expect_rc=1).stdout


def test_a_rewrite_that_keeps_the_outputs_has_no_divergence(run_cli, corpus, tmp_path):
    model = corpus.model("bert_op14")
    simple = tmp_path / "simple.onnx"
    # fuse-qkv makes new nodes (one MatMul for Q, K and V, then a Split): paired by provenance.
    run_cli("--pass", "simplify,fuse-qkv,simplify", "-q", model.path, "-o", simple)
    report = json.loads(run_cli("compare", "--json", model.path, simple).stdout)
    assert report["ok"] is True and report["first_divergence"] is None
    how = {r["matched_by"] for r in report["tensors"]}
    assert {"output", "name", "provenance"} <= how, how
    assert "no divergence" in run_cli("compare", model.path, simple).stdout


def test_a_deliberate_drift_is_not_the_divergence(run_cli, tmp_path):
    """A rewrite may change a tensor under its own name on purpose (a scale moved into the
    weights before it): later tensors agree again, so it is drift, not where the models part."""
    a = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] X) => (float[2,4] Y) <float[4,4] W = {1.,0.,0.,0., 0.,1.,0.,0., 0.,0.,1.,0., 0.,0.,0.,1.}, float s = {2.}> {
  M = MatMul(X, W)
  Y = Mul(M, s)
}""")
    b = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] X) => (float[2,4] Y) <float[4,4] W = {2.,0.,0.,0., 0.,2.,0.,0., 0.,0.,2.,0., 0.,0.,0.,2.}, float s = {1.}> {
  M = MatMul(X, W)
  Y = Mul(M, s)
}""")
    pa, pb = write(a, tmp_path / "a.onnx"), write(b, tmp_path / "b.onnx")
    report = json.loads(run_cli("compare", "--json", pa, pb).stdout)
    assert report["ok"] is True and report["first_divergence"] is None and report["drift"] > 0
    assert "matched again downstream" in run_cli("compare", pa, pb).stdout


def test_batches_bound_memory_without_changing_the_answer(run_cli, corpus, tmp_path):
    original = corpus.model("bert_op14")
    perturbed, reader = perturb_one_weight(onnx.load(original.path))
    b = write(perturbed, tmp_path / "perturbed.onnx")
    one = json.loads(run_cli("compare", "--json", original.path, b, expect_rc=1).stdout)
    small = json.loads(run_cli("compare", "--json", "--batch", "4", original.path, b, expect_rc=1).stdout)
    assert small["segments"]["a"] > one["segments"]["a"] >= 1
    assert small["first_divergence"]["a_node"] == one["first_divergence"]["a_node"] == reader
    strip = [{k: r[k] for k in ("a", "max_abs", "elements_off")} for r in one["tensors"] if r["computed"]]
    assert strip == [{k: r[k] for k in ("a", "max_abs", "elements_off")} for r in small["tensors"] if r["computed"]]


def test_reference_outputs_from_the_framework(run_cli, corpus, tmp_path):
    """--reference: the export against the outputs torch computed for the same inputs."""
    model = corpus.model("bert_op14")
    expected = model.directory / model.manifest["expected_outputs"]
    inputs = model.directory / model.manifest["inputs"]
    report = json.loads(run_cli("compare", "--json", model.path, "--reference", expected, "--inputs", inputs).stdout)
    assert report["ok"] is True
    assert [r["a"] for r in report["tensors"]] == model.manifest["output_names"]
    # A reference that is off by 1e-2 everywhere is caught at the output.
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, **{k: v + 1e-2 for k, v in model.expected.items()})
    report = json.loads(
        run_cli("compare", "--json", model.path, "--reference", wrong, "--inputs", inputs, expect_rc=1).stdout
    )
    assert report["first_divergence"]["a"] == model.manifest["output_names"][0]


def test_usage_and_model_errors(run_cli, tmp_path):
    a = write(small_model(), tmp_path / "a.onnx")
    assert "exactly one of" in run_cli("compare", a, expect_rc=2).stderr
    assert "exactly one of" in run_cli("compare", a, a, "--backend", "openvino", expect_rc=2).stderr
    assert "did you mean" in run_cli("compare", a, a, "--jsn", expect_rc=2).stderr
    proc = run_cli("compare", a, "--backend", "openvno", expect_rc=2)
    assert "no backend named 'openvno' (did you mean 'openvino'?)" in proc.stderr and proc.stderr.count("\n") == 1
    html = tmp_path / "r.html"
    proc = run_cli("compare", a, tmp_path / "missing.onnx", "--html", html, expect_rc=1)
    assert "missing.onnx" in proc.stderr and not html.exists()


def test_python_api_mirrors_the_cli(corpus, tmp_path):
    original = corpus.model("cnn_clutter_op13")
    perturbed, reader = perturb_one_weight(onnx.load(original.path))
    report = osg.compare(original.path, perturbed)
    assert report["ok"] is False and report["first_divergence"]["a_node"] == reader
    assert osg.compare(original.path, original.path)["ok"] is True
    with pytest.raises(ValueError):
        osg.compare(original.path)


def test_html_shows_the_error_plot_in_a_browser(run_cli, corpus, tmp_path):
    original = corpus.model("bert_op14")
    perturbed, reader = perturb_one_weight(onnx.load(original.path))
    b = write(perturbed, tmp_path / "perturbed.onnx")
    html = tmp_path / "compare.html"
    run_cli("compare", original.path, b, "--html", html, expect_rc=1)
    chromium()
    dom = browse(html, tmp_path, "--dump-dom").stdout
    assert "Where the models diverge" in dom
    assert 'class="errplot"' in dom and 'class="tolerance"' in dom and 'class="first-divergence"' in dom
    assert "first divergence: /model/encoder/" in dom  # the plot names the tensor
    assert dom.count("<circle") >= 100  # one point per compared tensor
    shot = tmp_path / "compare.png"
    browse(html, tmp_path, f"--screenshot={shot}", "--window-size=1000,800")
    assert shot.is_file() and shot.stat().st_size > 10_000


def test_fp16_tolerance_for_a_float16_conversion(run_cli, corpus, tmp_path):
    """convert-float16 keeps float32 outputs: the float32 table flags them, --fp16-tolerance
    judges them as --check does for that pass."""
    model = corpus.model("cnn_clutter_op13")
    half = tmp_path / "half.onnx"
    run_cli("--pass", "convert-float16", "-q", model.path, "-o", half)
    strict = json.loads(run_cli("compare", "--json", model.path, half, expect_rc=None).stdout)
    loose = json.loads(run_cli("compare", "--json", "--fp16-tolerance", model.path, half).stdout)
    assert loose["ok"] is True
    assert all(r["atol"] == 1e-2 for r in loose["tensors"] if r["computed"] and r["dtype"].startswith("float"))
    assert any(r["atol"] == 1e-4 for r in strict["tensors"] if r["computed"])
