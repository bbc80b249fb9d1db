"""fuse-gelu, rewrite-gelu and rewrite-erf on real torch exports, and the measured error
bounds of the approximations (bench/gelu_error.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnx.version_converter
import onnxsurgeon as osg
import pytest
from onnx import numpy_helper

REPO = Path(__file__).resolve().parents[2]

# Corpus models holding GELU subgraphs (Erf or tanh form) and how many.
GELU_SUBGRAPH_MODELS = {
    "gelu_erf_op17": ("erf", 1),
    "gelu_tanh_op17": ("tanh", 1),
    "gelu_tanh_cube_op17": ("tanh", 1),
    "gelu_tanh_pow_op17": ("tanh", 1),
    "bert_op14": ("erf", 2),
    "vit_op14": ("erf", 2),
    "bert_dynamo18": ("erf", 2),
    "gpt2_dynamo18": ("tanh", 2),
    "control_flow_cond_dynamo18": ("erf", 1),
}

# Bounds stated in passes/gelu/rewrite_gelu.cc and passes/gelu/rewrite_erf.cc (max abs error over
# [-10, 10], fp32, onnxruntime).
STATED_BOUNDS = {
    "gelu tanh form vs exact GELU": 5e-4,
    "gelu sigmoid form vs exact GELU": 2.1e-2,
    "gelu sigmoid form vs tanh GELU": 2.1e-2,
    "gelu erf form + rewrite-erf vs exact GELU": 2e-6,
    "erf rational float32": 5e-7,
    "erf rational float64": 1e-7,
    "gelu erf form vs exact GELU (exact lowering)": 1e-6,
    "gelu tanh Gelu -> tanh form vs tanh GELU (exact lowering)": 1e-6,
}


def _bench():
    spec = importlib.util.spec_from_file_location("gelu_error", REPO / "bench" / "gelu_error.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _at_opset_20(model: onnx.ModelProto) -> onnx.ModelProto:
    """The same model at opset 20 (onnx's version converter), where Gelu exists."""
    converted = onnx.version_converter.convert_version(model, 20)
    onnx.checker.check_model(converted)
    return converted


def _last_linear_gain(model: onnx.ModelProto) -> float:
    """max over outputs of sum |W| of the model's last MatMul/Gemm weight: how much an
    error of e on its input can move its output (at most gain * e)."""
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    last = [n for n in model.graph.node if n.op_type in ("MatMul", "Gemm") and any(i in weights for i in n.input)][-1]
    w = next(weights[i] for i in last.input if i in weights)
    if last.op_type == "Gemm" and any(a.name == "transB" and a.i for a in last.attribute):
        w = w.T
    return float(np.abs(w).sum(axis=0).max())


# ---------------------------------------------------------------- fuse-gelu, corpus


@pytest.mark.parametrize("name", sorted(GELU_SUBGRAPH_MODELS))
def test_fuse_gelu_on_corpus_at_opset_20(name, corpus, oracle):
    model = corpus.model(name)
    kind, expected = GELU_SUBGRAPH_MODELS[name]
    assert model.manifest["modules"]["GELU"] == expected
    original = _at_opset_20(onnx.load(model.path))
    fused = osg.run(original, "fuse-gelu")
    histogram = oracle.op_histogram(fused)
    assert histogram.get("Gelu", 0) == expected, histogram
    assert histogram.get("Erf" if kind == "erf" else "Tanh", 0) == 0, histogram
    approximate = {
        a.s.decode()
        for n in _all_nodes(fused.graph)
        if n.op_type == "Gelu"
        for a in n.attribute
        if a.name == "approximate"
    }
    assert approximate == ({"tanh"} if kind == "tanh" else set())
    oracle.assert_valid(fused)
    oracle.assert_equivalent(original, fused, inputs=model.inputs, rtol=1e-4, atol=1e-4)
    oracle.assert_outputs_close(oracle.run_model(fused, model.inputs), model.expected, rtol=model.rtol, atol=model.atol)


@pytest.mark.parametrize("name", sorted(GELU_SUBGRAPH_MODELS))
def test_fuse_gelu_leaves_models_below_opset_20_alone(name, corpus, oracle):
    original = onnx.load(corpus.model(name).path)
    fused = osg.run(original, "fuse-gelu")
    assert oracle.op_histogram(fused) == oracle.op_histogram(original)


def test_fuse_gelu_refusal_is_explained(tmp_path, corpus, run_cli):
    path = corpus.model("gelu_erf_op17").path
    proc = run_cli("--pass", "fuse-gelu", "--debug-patterns", path, "-o", tmp_path / "out.onnx")
    assert "Gelu needs opset >= 20 and the model imports 17" in proc.stderr


def _all_nodes(graph: onnx.GraphProto):
    for node in graph.node:
        yield node
        for a in node.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from _all_nodes(a.g)


# ------------------------------------------------------------- rewrite-gelu, corpus


def test_rewrite_gelu_lowers_gelu_ops_exactly(corpus, oracle):
    model = corpus.model("gelu_op20")
    original = onnx.load(model.path)
    lowered = osg.run(original, "rewrite-gelu")
    histogram = oracle.op_histogram(lowered)
    assert "Gelu" not in histogram
    assert histogram["Erf"] == 1 and histogram["Tanh"] == 1  # the tanh Gelu keeps its meaning
    oracle.assert_valid(lowered)
    oracle.assert_equivalent(original, lowered, inputs=model.inputs, rtol=1e-4, atol=1e-4)
    oracle.assert_outputs_close(oracle.run_model(lowered, model.inputs), model.expected, rtol=1e-4, atol=1e-4)


def test_fuse_then_rewrite_round_trip(corpus, oracle):
    model = corpus.model("bert_op14")
    original = _at_opset_20(onnx.load(model.path))
    back = osg.run(original, "fuse-gelu,rewrite-gelu")
    assert oracle.op_histogram(back).get("Erf") == 2 and "Gelu" not in oracle.op_histogram(back)
    oracle.assert_equivalent(original, back, inputs=model.inputs, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    "to, kind, bound_key",
    [
        ("tanh", "erf", "gelu tanh form vs exact GELU"),
        ("sigmoid", "erf", "gelu sigmoid form vs exact GELU"),
        ("sigmoid", "tanh", "gelu sigmoid form vs tanh GELU"),
    ],
)
def test_rewrite_gelu_approximations_on_corpus_within_stated_bound(to, kind, bound_key, corpus, oracle):
    """The GELU sits right before the last Linear: the output moves by at most
    gain(last Linear) * the stated bound of the approximation."""
    name = "gelu_erf_op17" if kind == "erf" else "gelu_tanh_op17"
    model = corpus.model(name)
    original = onnx.load(model.path)
    rewritten = osg.run(original, f"rewrite-gelu(to={to},subgraphs=true)")
    histogram = oracle.op_histogram(rewritten)
    assert "Erf" not in histogram and (to != "sigmoid" or "Tanh" not in histogram), histogram
    oracle.assert_valid(rewritten)
    bound = STATED_BOUNDS[bound_key] * _last_linear_gain(original) + 1e-5
    oracle.assert_equivalent(original, rewritten, inputs=model.inputs, rtol=0, atol=bound)
    # and it is an approximation: the outputs do differ
    got = oracle.run_model(rewritten, model.inputs)["y"]
    assert float(np.abs(got - model.expected["y"]).max()) > 1e-6


def test_rewrite_erf_on_bert(corpus, oracle):
    model = corpus.model("bert_op14")
    original = onnx.load(model.path)
    rewritten = osg.run(original, "rewrite-erf")
    assert "Erf" not in oracle.op_histogram(rewritten)
    oracle.assert_valid(rewritten)
    oracle.assert_equivalent(original, rewritten, inputs=model.inputs, rtol=1e-4, atol=1e-4)


# -------------------------------------------------------------- measured error bounds


def test_measured_errors_hold_the_stated_bounds():
    measured = _bench().measure()
    assert set(measured) == set(STATED_BOUNDS)
    for name, err in measured.items():
        assert err <= STATED_BOUNDS[name], f"{name}: measured {err:.3e} > stated {STATED_BOUNDS[name]:.1e}"
    # The approximations are what they claim to be, not accidentally exact.
    assert measured["gelu tanh form vs exact GELU"] > 1e-4
    assert measured["gelu sigmoid form vs exact GELU"] > 1e-2


def test_approximation_error_outside_the_measured_range_is_smaller():
    """The docs say the approximations' own error only shrinks outside [-10, 10]:
    evaluated in float64 (no fp32 rounding) on 10 <= |x| <= 1000 it is below 1e-6."""
    bench = _bench()
    x = np.concatenate([np.linspace(10, 1000, 200_001), -np.linspace(10, 1000, 200_001)])
    exact = bench.exact_gelu(x)
    tanh_form = bench.tanh_gelu(x)
    sigmoid_form = x * (0.5 * (1.0 + np.tanh(0.5 * 1.702 * x)))  # x * sigmoid(1.702 x), overflow-free
    assert np.abs(tanh_form - exact).max() < 1e-6
    assert np.abs(sigmoid_form - exact).max() < 1e-6
    assert np.abs(sigmoid_form - tanh_form).max() < 1e-6
