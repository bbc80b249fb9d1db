"""`--target` on the forms onnxruntime's transformer optimizer and quantizer write that the
backend corpus found (tests/backends/corpus/ort_optimized.py, docs/results):

- onnxruntime's own default-domain ops: LayerNormalization below opset 17 (its
  LayerNormalization-1) and SimplifiedLayerNormalization. convert-opset keeps them (onnxruntime
  registers them at every opset), onnxruntime and OpenVINO run them, every other profile gets
  them lowered (rknn-toolkit2 2.5: "KeyError: 'LayerNormalization'" at opset 14).
- SkipLayerNormalization's sum output (output 3): onnxruntime 1.10 refuses the node, so the
  plan lowers it there; 1.14 keeps it (targets/probes/contrib_ops.txt).
- QAttention with mask_filter_value: onnxruntime 1.10 refuses it and nothing lowers it, so
  `--target ort-1.10` names it with the probe as the source.
- Attention with constant packed weights lowers to one MatMul per Q, K and V (rknn-toolkit2
  2.5 fails on a packed MatMul split afterwards).
- Attention's past, split and squeezed: nncase-k210 gets the opset-12 Squeeze (its Squeeze-13
  squeezes every unit dim).
Each rewrite is compared with onnxruntime on the original."""

from __future__ import annotations

import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh

MS = "com.microsoft"
RNG = np.random.default_rng(0)


def _model(nodes, inputs, outputs, inits, opset):
    graph = oh.make_graph(nodes, "g", inputs, outputs, [nh.from_array(v, k) for k, v in inits.items()])
    opsets = [oh.make_opsetid("", opset), oh.make_opsetid(MS, 1)]
    return oh.make_model(graph, opset_imports=opsets, ir_version=8)


def _f(name, shape):
    return oh.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def _norms(opset):
    """x -> SimplifiedLayerNormalization -> LayerNormalization -> Relu."""
    nodes = [
        oh.make_node("SimplifiedLayerNormalization", ["x", "s"], ["a"], axis=-1, epsilon=1e-3),
        oh.make_node("LayerNormalization", ["a", "s", "b"], ["n"], axis=-1),
        oh.make_node("Relu", ["n"], ["y"]),
    ]
    inits = {"s": RNG.standard_normal(8).astype(np.float32), "b": RNG.standard_normal(8).astype(np.float32)}
    return _model(nodes, [_f("x", [2, 3, 8])], [_f("y", [2, 3, 8])], inits, opset)


def _run(path, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]).run(None, feeds)


def _target(cli_path, tmp_path, model, target, feeds, expect_rc=0):
    src, out = tmp_path / "src.onnx", tmp_path / f"{target}.onnx"
    onnx.save(model, src)
    proc = subprocess.run(
        [str(cli_path), "--target", target, src, "-o", out], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == expect_rc, proc.stderr
    if expect_rc:
        return proc, None
    for want, got in zip(_run(src, feeds), _run(out, feeds)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    return proc, onnx.load(out)


def _ops(model):
    return {n.op_type for n in model.graph.node}


@pytest.mark.parametrize("target", ["rknn2", "trt-8.6", "tflite"])
def test_onnxruntime_default_domain_norms_lowered_for_other_runtimes(cli_path, tmp_path, target):
    feeds = {"x": RNG.standard_normal((2, 3, 8)).astype(np.float32)}
    proc, out = _target(cli_path, tmp_path, _norms(14), target, feeds)
    assert "lower-contrib-ops(ops=" in proc.stderr and "LayerNormalization" in proc.stderr, proc.stderr
    assert not _ops(out) & {"LayerNormalization", "SimplifiedLayerNormalization"}, _ops(out)


@pytest.mark.parametrize("target", ["openvino", "ort-1.10"])
def test_onnxruntime_default_domain_norms_kept_where_they_run(cli_path, tmp_path, target):
    """ort-1.10 converts the opset (14 -> 14 and ai.onnx.ml), keeping both norms."""
    feeds = {"x": RNG.standard_normal((2, 3, 8)).astype(np.float32)}
    _, out = _target(cli_path, tmp_path, _norms(14), target, feeds)
    assert {"LayerNormalization", "SimplifiedLayerNormalization"} <= _ops(out), _ops(out)


def test_convert_opset_keeps_simplified_layernorm(cli_path, tmp_path):
    """ort-1.10 runs SimplifiedLayerNormalization (probed): an opset-17 model converts to 15
    around it (it was 'not an operator of ai.onnx' to the converter)."""
    model = _norms(17)
    model.graph.node.pop(1)  # the opset-17 LayerNormalization is ai.onnx's; keep the test to the other
    model.graph.node[1].input[0] = "a"
    feeds = {"x": RNG.standard_normal((2, 3, 8)).astype(np.float32)}
    proc, out = _target(cli_path, tmp_path, model, "ort-1.10", feeds)
    assert out.opset_import[0].version == 15 and "SimplifiedLayerNormalization" in _ops(out), proc.stderr


def _skip_layernorm(with_sum):
    outs = ["y", "", "", "sum"] if with_sum else ["y"]
    nodes = [oh.make_node("SkipLayerNormalization", ["x", "skip", "g", "b"], outs, domain=MS)]
    if with_sum:
        nodes.append(oh.make_node("Add", ["y", "sum"], ["z"]))
    inits = {"g": RNG.standard_normal(8).astype(np.float32), "b": RNG.standard_normal(8).astype(np.float32)}
    inputs = [_f("x", [2, 3, 8]), _f("skip", [2, 3, 8])]
    return _model(nodes, inputs, [_f("z" if with_sum else "y", [2, 3, 8])], inits, 14)


@pytest.mark.parametrize("with_sum", [True, False])
def test_skip_layernorm_sum_output_lowered_for_ort_1_10_only(cli_path, tmp_path, with_sum):
    feeds = {k: RNG.standard_normal((2, 3, 8)).astype(np.float32) for k in ("x", "skip")}
    _, out = _target(cli_path, tmp_path, _skip_layernorm(with_sum), "ort-1.10", feeds)
    assert ("SkipLayerNormalization" in _ops(out)) == (not with_sum), _ops(out)
    _, out = _target(cli_path, tmp_path, _skip_layernorm(with_sum), "ort-1.14", feeds)
    assert "SkipLayerNormalization" in _ops(out)


def test_qattention_mask_filter_value_lowered_for_ort_1_10(cli_path, tmp_path):
    """ort-1.10 refuses QAttention's mask_filter_value (targets/probes/contrib_ops.txt): the
    plan lowers that QAttention, and the result matches onnxruntime's kernel."""
    inputs = ["x", "w", "bias", "xs", "ws", "mask", "xz", "wz"]
    node = oh.make_node("QAttention", inputs, ["y"], domain=MS, num_heads=2, mask_filter_value=-10000.0)
    inits = {
        "w": RNG.integers(-4, 4, (8, 24)).astype(np.int8),
        "bias": np.zeros(24, np.float32),
        "xs": np.array(0.1, np.float32),
        "ws": np.array(0.1, np.float32),
        "xz": np.array(128, np.uint8),
        "wz": np.array(0, np.int8),
    }
    x = oh.make_tensor_value_info("x", TensorProto.UINT8, [2, 3, 8])
    mask = oh.make_tensor_value_info("mask", TensorProto.INT32, [2])
    model = _model([node], [x, mask], [_f("y", [2, 3, 8])], inits, 14)
    feeds = {"x": RNG.integers(0, 255, (2, 3, 8)).astype(np.uint8), "mask": np.array([2, 3], np.int32)}
    proc, out = _target(cli_path, tmp_path, model, "ort-1.10", feeds)
    assert "lower-contrib-ops(ops=QAttention)" in proc.stderr, proc.stderr
    assert "QAttention" not in _ops(out), _ops(out)


def test_attention_with_constant_weights_projects_q_k_v_apart(cli_path, tmp_path):
    node = oh.make_node("Attention", ["x", "w", "b", "mask"], ["y"], domain=MS, num_heads=2)
    inits = {"w": RNG.standard_normal((8, 24)).astype(np.float32), "b": RNG.standard_normal(24).astype(np.float32)}
    mask = oh.make_tensor_value_info("mask", TensorProto.INT32, [2, 3])
    model = _model([node], [_f("x", [2, 3, 8]), mask], [_f("y", [2, 3, 8])], inits, 14)
    feeds = {"x": RNG.standard_normal((2, 3, 8)).astype(np.float32), "mask": np.array([[1, 1, 0], [1, 1, 1]], np.int32)}
    _, out = _target(cli_path, tmp_path, model, "rknn2", feeds)
    assert "Split" not in _ops(out) and sum(n.op_type == "MatMul" for n in out.graph.node) >= 3 + 2, _ops(out)


def test_nncase_squeeze_axes_input_converted_to_the_attribute_form(cli_path, tmp_path):
    """nncase 1.9 squeezes every unit dim of a Squeeze-13 (targets/probes/nncase_squeeze.txt):
    the plan converts below the axes input, to opset 12."""
    nodes = [
        oh.make_node("Split", ["past", "sp"], ["k", "v"], axis=0),
        oh.make_node("Squeeze", ["v", "ax"], ["s"]),
        oh.make_node("Concat", ["s", "new"], ["y"], axis=2),
    ]
    inits = {"sp": np.array([1, 1], np.int64), "ax": np.array([0], np.int64)}
    inputs = [_f("past", [2, 1, 4, 4, 16]), _f("new", [1, 4, 3, 16])]
    model = _model(nodes, inputs, [_f("y", [1, 4, 7, 16])], inits, 13)
    feeds = {"past": RNG.standard_normal((2, 1, 4, 4, 16)).astype(np.float32)}
    feeds["new"] = RNG.standard_normal((1, 4, 3, 16)).astype(np.float32)
    proc, out = _target(cli_path, tmp_path, model, "nncase-k210", feeds)
    assert "convert-opset=12" in proc.stderr, proc.stderr
    assert all(len(n.input) == 1 for n in out.graph.node if n.op_type == "Squeeze")
