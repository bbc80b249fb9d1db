"""The models of the other exporters (tf2onnx, jax2onnx, jax2tf + tf2onnx, paddle2onnx; tests/models/exporters)
through what their users run: the standard corpus checks (test_corpus*.py,
test_fix_layernorm.py, test_opset_conversion.py) already cover them; here the GELU forms
these exporters write and the mission pipelines down to opsets 13 and 11, against the
framework's own outputs."""

from __future__ import annotations

import onnx
import onnxsurgeon as osg
import pytest
from conftest import _catalog

EXPORTER_MODELS = [e.name for e in _catalog.CATALOG if e.stack != "torch"]
GELU_MODELS = [
    "tf_dense_gelu_op13",
    "tf_dense_gelu_op17",
    "tf_vit_block_op15",
    "flax_gelu_op17",
    "flax_mixer_op17",
    "paddle_layernorm_op11",
    "paddle_layernorm_op17",
]


def _opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def test_every_stack_is_in_the_corpus():
    # Every exporter venv (generate.STACKS) builds some model, and so does the wheel fetch list.
    assert {_catalog.BY_NAME[n].stack for n in EXPORTER_MODELS} == set(_catalog.STACKS) | {"wheel"}


@pytest.mark.parametrize("name", GELU_MODELS)
def test_fuse_gelu_takes_every_exporter_form(name, corpus, oracle):
    """tf.nn.gelu(approximate=True) (Pow(x, 3)), TF BERT's erf form, jax.nn.gelu's tanh
    default (x*x*x) and exact form (x * (1/sqrt 2)), paddle's erf form: each GELU module
    becomes one Gelu at opset 20, nothing of the subgraphs is left."""
    model = corpus.model(name)
    original = osg.run(onnx.load(model.path), "upgrade-opset=20")
    fused = osg.run(original, "fuse-gelu")
    histogram = oracle.op_histogram(fused)
    assert histogram.get("Gelu", 0) == model.manifest["modules"]["GELU"], histogram
    assert histogram.get("Erf", 0) == 0 and histogram.get("Tanh", 0) == 0, histogram
    oracle.assert_valid(fused)
    oracle.assert_equivalent(original, fused, inputs=model.inputs, rtol=model.rtol, atol=model.atol)
    oracle.assert_outputs_close(oracle.run_model(fused, model.inputs), model.expected, rtol=model.rtol, atol=model.atol)


@pytest.mark.parametrize("name", GELU_MODELS)
def test_rewrite_gelu_takes_every_exporter_form(name, corpus, oracle):
    """rewrite-gelu(subgraphs=true) recognises the same subgraphs: to=sigmoid leaves no Erf
    and no Tanh, one Sigmoid per GELU module."""
    model = corpus.model(name)
    rewritten = osg.run(onnx.load(model.path), "rewrite-gelu(to=sigmoid,subgraphs=true)")
    histogram = oracle.op_histogram(rewritten)
    assert histogram.get("Erf", 0) == 0 and histogram.get("Tanh", 0) == 0, histogram
    assert histogram.get("Sigmoid", 0) == model.manifest["modules"]["GELU"] + oracle.op_histogram(model.path).get(
        "Sigmoid", 0
    )
    oracle.assert_valid(rewritten)


@pytest.mark.parametrize("target", [13, 11])
@pytest.mark.parametrize("name", EXPORTER_MODELS)
def test_mission_pipeline_to_old_opsets(name, target, corpus, oracle, run_cli):
    """fix-layernorm then downgrade: valid at the target, equivalent in onnxruntime, equal to
    the framework's outputs; `check --opset` agrees that the conversion is possible."""
    model = corpus.model(name)
    original = onnx.load(model.path)
    rewritten = osg.run(original, f"fix-layernorm,downgrade-opset={target}")
    assert _opset(rewritten) == min(target, _opset(original))
    oracle.assert_valid(rewritten)
    assert oracle.op_histogram(rewritten).get("LayerNormalization", 0) == 0
    oracle.assert_equivalent(original, rewritten, inputs=model.inputs, rtol=model.rtol, atol=model.atol)
    oracle.assert_outputs_close(
        oracle.run_model(rewritten, model.inputs), model.expected, rtol=model.rtol, atol=model.atol
    )
    run_cli("check", "--opset", str(target), model.path)
