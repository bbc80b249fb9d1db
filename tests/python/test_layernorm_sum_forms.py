"""fix-layernorm on the Flax LayerNorm as jax2tf + tf2onnx write it: means as
ReduceSum(keepdims=0) * (1/N) or / N, the reduced axis put back with Reshape, the variance
max(0, E[x^2] - E[x]^2), Reciprocal(Sqrt(var + eps)) times the scale, then the bias.

The real export is in the corpus (flax_jax2tf_layernorm_op13/17, jax2tf venv); here the
form is built op for op with onnx.helper, in variants the exporter does not choose
(ReduceSum / N, axes as attribute at opset 12, opset 18). It is first checked against
numpy's LayerNorm in onnxruntime (it is a LayerNorm), then fused and checked again."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper

SHAPE = (2, 7, 16)
EPS = 1e-6


def _flax_jax2tf_layernorm(opset: int, mean_form: str) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    n = SHAPE[-1]
    inits = [
        numpy_helper.from_array(rng.standard_normal((1, 1, n)).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal((1, 1, n)).astype(np.float32), "bias"),
        numpy_helper.from_array(np.array(SHAPE[:-1] + (1,), np.int64), "kept_shape"),
        numpy_helper.from_array(np.array(0, np.float32), "zero"),
        numpy_helper.from_array(np.array(EPS, np.float32), "eps"),
        numpy_helper.from_array(np.array(1.0 / n if mean_form == "mul" else n, np.float32), "factor"),
    ]
    nodes = []

    def mean(src: str, out: str) -> None:
        if opset >= 13:
            nodes.append(helper.make_node("ReduceSum", [src, "axes"], [out + "_sum"], keepdims=0))
        else:
            nodes.append(helper.make_node("ReduceSum", [src], [out + "_sum"], axes=[-1], keepdims=0))
        nodes.append(helper.make_node("Mul" if mean_form == "mul" else "Div", [out + "_sum", "factor"], [out]))

    if opset >= 13:
        inits.append(numpy_helper.from_array(np.array([-1], np.int64), "axes"))
    mean("x", "mu")
    nodes.append(helper.make_node("Mul", ["x", "x"], ["xx"]))
    mean("xx", "mu2")
    nodes += [
        helper.make_node("Mul", ["mu", "mu"], ["mu_sq"]),
        helper.make_node("Sub", ["mu2", "mu_sq"], ["var_raw"]),
        helper.make_node("Max", ["zero", "var_raw"], ["var"]),
        helper.make_node("Reshape", ["mu", "kept_shape"], ["mu_kept"]),
        helper.make_node("Reshape", ["var", "kept_shape"], ["var_kept"]),
        helper.make_node("Sub", ["x", "mu_kept"], ["centred"]),
        helper.make_node("Add", ["var_kept", "eps"], ["var_eps"]),
        helper.make_node("Sqrt", ["var_eps"], ["std"]),
        helper.make_node("Reciprocal", ["std"], ["inv_std"]),
        helper.make_node("Mul", ["inv_std", "scale"], ["mul"]),
        helper.make_node("Mul", ["centred", "mul"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "flax_layernorm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    onnx.checker.check_model(model, full_check=True)
    return model


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _numpy_layernorm(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    weights = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    x64 = x.astype(np.float64)
    mean = x64.mean(-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(-1, keepdims=True)
    return (x64 - mean) / np.sqrt(var + EPS) * weights["scale"] + weights["bias"]


@pytest.mark.parametrize("mean_form", ["mul", "div"])
@pytest.mark.parametrize("opset", [12, 13, 17, 18])
def test_flax_jax2tf_layernorm_is_fused(opset, mean_form):
    model = _flax_jax2tf_layernorm(opset, mean_form)
    x = np.random.default_rng(1).standard_normal(SHAPE).astype(np.float32)
    reference = _numpy_layernorm(model, x)
    np.testing.assert_allclose(_run(model, x), reference, rtol=1e-4, atol=1e-5)  # the model is a LayerNorm

    fixed = osg.run(model, "fix-layernorm")
    onnx.checker.check_model(fixed, full_check=True)
    ops = [n.op_type for n in fixed.graph.node]
    if opset >= 17:
        assert ops == ["LayerNormalization"]
    else:  # the standard decomposition, written straight from the match
        assert "ReduceSum" not in ops and ops.count("ReduceMean") == 2 and "Reshape" not in ops, ops
    np.testing.assert_allclose(_run(fixed, x), reference, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(_run(fixed, x), _run(model, x), rtol=1e-4, atol=1e-5)


def test_flax_jax2tf_layernorm_in_simplify():
    model = _flax_jax2tf_layernorm(17, "mul")
    x = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    simplified = osg.run(model, "simplify")
    assert [n.op_type for n in simplified.graph.node] == ["LayerNormalization"]
    np.testing.assert_allclose(_run(simplified, x), _numpy_layernorm(model, x), rtol=1e-4, atol=1e-5)


def test_wrong_factor_is_not_fused():
    model = _flax_jax2tf_layernorm(17, "mul")
    for t in model.graph.initializer:
        if t.name == "factor":
            t.CopyFrom(numpy_helper.from_array(np.array(1.0 / (SHAPE[-1] - 1), np.float32), "factor"))
    fixed = osg.run(model, "fix-layernorm")
    assert "LayerNormalization" not in [n.op_type for n in fixed.graph.node]
