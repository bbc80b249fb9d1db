"""Every registered pass, and every standard pipeline, on every corpus model: the result
is valid ONNX and computes what the original computes (onnxruntime, fixed inputs, and the
torch reference outputs). Passes join this test by being registered; nothing to add here."""

from __future__ import annotations

import onnx
import onnxsurgeon as osg
import pytest

# `target` needs a profile name: tests/python/test_targets.py runs it per profile.
# convert-float16 changes results within float16's precision by design: its own corpus
# test (test_convert_float16.py) checks it with float16 tolerances.
PASSES = [p["name"] for p in osg.passes() if p["name"] not in ("target", "convert-float16")]
# Pipelines users run as one command; each must keep every model equivalent.
STANDARD_PIPELINES: list[str] = [
    "fix-layernorm,decompose-layernorm,simplify",
    "fix-layernorm,simplify,strip-identity-cast,extract-constants(to=constant)",
    "simplify,fuse-qkv,simplify",  # the opt-in Q/K/V fusion, as docs/passes.md recommends
]


@pytest.mark.parametrize("pipeline", PASSES + STANDARD_PIPELINES)
def test_pass_keeps_corpus_model_valid_and_equivalent(pipeline, corpus_model, oracle):
    original = onnx.load(corpus_model.path)
    rewritten = osg.run(original, pipeline, verify_each=False)
    oracle.assert_valid(rewritten)
    if not corpus_model.runnable:
        return  # custom-domain models: validity only until a pass makes them runnable
    # Every input set: a model with an If carries one per branch (corpus_model.input_sets).
    oracle.assert_equivalent(
        original,
        rewritten,
        inputs=corpus_model.all_inputs,
        rtol=corpus_model.rtol,
        atol=corpus_model.atol,
        expected=corpus_model.all_expected,
    )
