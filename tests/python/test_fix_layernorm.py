"""fix-layernorm and decompose-layernorm on the real-model corpus and from the CLI.

Per corpus model: no custom-domain LayerNorm survives, the number of LayerNormalization
nodes equals the number of LayerNorm modules the exporter was given (at opset >= 17; at
lower opsets every LayerNorm is in the decomposed form), the model stays valid, and it
computes what the original (and the torch module) computed. Models whose manifest says a
block is NOT a LayerNorm (std + eps, unbiased variance, RMSNorm) record LayerNorm: 0
and must come out with no LayerNormalization."""

from __future__ import annotations

import json

import onnx
import onnxsurgeon as osg
import pytest

LAYERNORM_NAMES = {
    "custom_layernorm",
    "customlayernorm",
    "customlayernormalization",
    "layernorm",
    "layernormalization",
    "layernormplugin",
    "layernormalizationplugin",
    "layer_norm",
}


def _default_opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def _custom_layernorms(model: onnx.ModelProto) -> list[str]:
    return [
        f"{n.domain}::{n.op_type}"
        for n in model.graph.node
        if n.domain not in ("", "ai.onnx") and n.op_type.lower() in LAYERNORM_NAMES
    ]


def _check_equivalent(oracle, corpus_model, original, rewritten):
    oracle.assert_valid(rewritten)
    outputs = oracle.run_model(rewritten, corpus_model.inputs)
    # The torch module's own outputs: also covers models onnxruntime cannot run as exported.
    oracle.assert_outputs_close(outputs, corpus_model.expected, rtol=corpus_model.rtol, atol=corpus_model.atol)
    if corpus_model.runnable:
        oracle.assert_equivalent(
            original, rewritten, inputs=corpus_model.inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
        )


def test_fix_layernorm_on_corpus(corpus_model, oracle):
    original = onnx.load(corpus_model.path)
    rewritten = osg.run(original, "fix-layernorm")
    assert _custom_layernorms(rewritten) == []
    # LayerNorm2d (channels-first) becomes Transpose, LayerNormalization, Transpose.
    modules = sum(corpus_model.manifest["modules"].get(k, 0) for k in ("LayerNorm", "LayerNorm2d"))
    histogram = oracle.op_histogram(rewritten)
    want = modules if _default_opset(rewritten) >= 17 else 0
    assert histogram.get("LayerNormalization", 0) == want, histogram
    if modules and _default_opset(rewritten) < 17:
        # Decomposed form: one mean-subtraction per LayerNorm, no custom op, no function.
        assert histogram.get("Sqrt", 0) >= modules
    assert not rewritten.functions or "ln_local_function" not in corpus_model.name
    _check_equivalent(oracle, corpus_model, original, rewritten)


def test_fix_layernorm_then_decompose_on_corpus(corpus_model, oracle):
    original = onnx.load(corpus_model.path)
    rewritten = osg.run(original, "fix-layernorm,decompose-layernorm")
    assert _custom_layernorms(rewritten) == []
    assert oracle.op_histogram(rewritten).get("LayerNormalization", 0) == 0
    _check_equivalent(oracle, corpus_model, original, rewritten)


def test_fix_layernorm_then_downgrade_to_15_on_corpus(corpus_model, oracle):
    """The headline pipeline for opset-15 targets: every LayerNorm, whatever its form,
    ends as the decomposition, in a model that imports opset 15 and computes the same."""
    original = onnx.load(corpus_model.path)
    if _default_opset(original) < 15:
        pytest.skip("model already below opset 15")
    rewritten = osg.run(original, "fix-layernorm,downgrade-opset=15")
    assert _default_opset(rewritten) == 15
    assert _custom_layernorms(rewritten) == []
    assert oracle.op_histogram(rewritten).get("LayerNormalization", 0) == 0
    _check_equivalent(oracle, corpus_model, original, rewritten)


def test_decomposed_to_target_is_a_fixed_point(corpus):
    """fix-layernorm(to=decomposed) twice equals once: the canonical decomposition is
    recognised, re-fused and re-emitted identically."""
    model = onnx.load(corpus.model("layernorm_op17").path)
    once = osg.run(model, "fix-layernorm(to=decomposed)")
    twice = osg.run(once, "fix-layernorm(to=decomposed)")
    histogram = lambda m: sorted((n.op_type, n.domain) for n in m.graph.node)  # noqa: E731
    assert histogram(once) == histogram(twice)


def test_cli_custom_layernorm_model_becomes_loadable(corpus, run_cli, tmp_path, oracle):
    """The headline case: onnxruntime refuses Custom_LayerNorm; after the pass it runs."""
    model = corpus.model("ln_custom_domain_op17")
    out = tmp_path / "fixed.onnx"
    proc = run_cli("--pass", "fix-layernorm", "--report", "json", model.path, "-o", out)
    report = json.loads(proc.stdout)
    assert report[0]["counts"]["layernorm-custom-op"] == 1
    assert report[0]["histogram_before"]["custom::Custom_LayerNorm"] == 1
    assert report[0]["histogram_after"]["LayerNormalization"] == 1
    fixed = onnx.load(out)
    assert [o.domain for o in fixed.opset_import if o.domain == "custom"] == []
    outputs = oracle.run_model(fixed, model.inputs)
    oracle.assert_outputs_close(outputs, model.expected, rtol=model.rtol, atol=model.atol)


def test_cli_debug_patterns_says_why_std_plus_eps_is_refused(corpus, run_cli, tmp_path):
    model = corpus.model("ln_std_eps_op17")
    proc = run_cli("--pass", "fix-layernorm", "--debug-patterns", model.path, "-o", tmp_path / "o.onnx")
    # The rule got as far as the Add and saw Sqrt where the variance's Add(var, eps) belongs.
    assert "layernorm-div" in proc.stderr
    assert "Sqrt" in proc.stderr
    assert onnx.load(tmp_path / "o.onnx").graph.node  # written, unchanged in substance


def test_to_op_below_opset_17_is_a_clear_error(corpus, run_cli, tmp_path):
    model = corpus.model("layernorm_op15")
    out = tmp_path / "o.onnx"
    proc = run_cli("--pass", "fix-layernorm(to=op)", model.path, "-o", out, expect_rc=1)
    assert "needs opset 17" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("names", ["MyNorm", "Foo;MyNorm"])
def test_extra_custom_names(names, oracle):
    text = """<ir_version: 10, opset_import: ["" : 17, "acme" : 1]>
    g (float[2,4] x, float[4] w, float[4] b) => (float[2,4] y) {
      y = acme.MyNorm <epsilon = 1e-5> (x, w, b)
    }"""
    model = osg.parse_text(text).to_proto()
    untouched = osg.run(model, "fix-layernorm")
    assert [n.op_type for n in untouched.graph.node] == ["MyNorm"]
    fixed = osg.run(model, f"fix-layernorm(names={names})")
    assert [n.op_type for n in fixed.graph.node] == ["LayerNormalization"]
