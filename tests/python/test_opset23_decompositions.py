"""Opset 23's RMSNormalization, Attention and RotaryEmbedding converted down to every opset
to 13 (convert-opset: RMSNormalization as its function body with constant axes, the other
two through their bodies), and lowered at opset 23 by decompose-rmsnorm,
decompose-rotary-embedding and decompose-attention (the same code), equal to onnxruntime's
opset-23 kernels: float16 RMSNormalization exactly, float32 within float rounding."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
from onnx import TensorProto
from onnx import helper as oh

TARGETS = [22, 18, 17, 13]  # convert-opset's targets
B, NQ, NK, S, L, H = 2, 4, 2, 3, 5, 8


def _run(model, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


DECOMPOSE = {"RMSNormalization": "decompose-rmsnorm", "RotaryEmbedding": "decompose-rotary-embedding"}
DECOMPOSE["Attention"] = "decompose-attention"


def _check(model, feeds, tol):
    want = _run(model, feeds)
    op = model.graph.node[0].op_type
    pipelines = [f"convert-opset(opset={t})" for t in TARGETS] + [DECOMPOSE[op]]
    for pipeline in pipelines:
        lowered = osg.run(model, pipeline)
        assert op not in {n.op_type for n in lowered.graph.node}, pipeline
        for w, g in zip(want, _run(lowered, feeds)):
            np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=tol, atol=tol, err_msg=pipeline)


@pytest.mark.parametrize(
    ("shape", "axis"), [((2, 3, 16), -1), ((2, 3, 16), -2), ((2, 3, 16), 1), ((2, 4, 3, 8), 2)], ids=str
)
@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.FLOAT16], ids=["f32", "f16"])
def test_rms_normalization_23(dtype, shape, axis):
    np_type = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16}[dtype]
    node = oh.make_node("RMSNormalization", ["x", "s"], ["y"], axis=axis, epsilon=1e-3, stash_type=1)
    inputs = [oh.make_tensor_value_info("x", dtype, shape), oh.make_tensor_value_info("s", dtype, shape[axis:])]
    graph = oh.make_graph([node], "g", inputs, [oh.make_tensor_value_info("y", dtype, shape)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 23)], ir_version=10)
    rng = np.random.default_rng(0)
    feeds = {
        "x": (rng.standard_normal(shape) * 3).astype(np_type),
        "s": rng.standard_normal(shape[axis:]).astype(np_type),
    }
    _check(model, feeds, 0.0 if dtype == TensorProto.FLOAT16 else 2e-6)


CASES = {
    "attention_4d_gqa_causal": (
        oh.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1),
        {"q": (B, NQ, S, H), "k": (B, NK, L, H), "v": (B, NK, L, H)},
    ),
    "attention_4d_mask_past": (
        oh.make_node("Attention", ["q", "k", "v", "m", "pk", "pv"], ["y", "ok", "ov"]),
        {
            "q": (B, NQ, S, H),
            "k": (B, NK, S, H),
            "v": (B, NK, S, H),
            "m": (B, 1, S, S + 4),
            "pk": (B, NK, 4, H),
            "pv": (B, NK, 4, H),
        },
    ),
    "attention_3d_softcap_scale": (
        oh.make_node("Attention", ["q", "k", "v"], ["y"], q_num_heads=NQ, kv_num_heads=NK, softcap=2.0, scale=0.3),
        {"q": (B, S, NQ * H), "k": (B, L, NK * H), "v": (B, L, NK * H)},
    ),
    "rotary_4d_position_ids": (
        oh.make_node("RotaryEmbedding", ["x", "c", "s", "p"], ["y"]),
        {"x": (B, NQ, S, H), "c": (16, H // 2), "s": (16, H // 2), "p": None},
    ),
    "rotary_3d_interleaved_partial": (
        oh.make_node(
            "RotaryEmbedding", ["x", "c", "s", "p"], ["y"], interleaved=1, num_heads=NQ, rotary_embedding_dim=4
        ),
        {"x": (B, S, NQ * H), "c": (16, 2), "s": (16, 2), "p": None},
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_attention_and_rotary_23(case):
    node, shapes = CASES[case]
    rng = np.random.default_rng(1)
    inputs, feeds = [], {}
    for name, shape in shapes.items():
        if shape is None:  # position ids
            inputs.append(oh.make_tensor_value_info(name, TensorProto.INT64, (B, S)))
            feeds[name] = rng.integers(0, 16, (B, S)).astype(np.int64)
        else:
            inputs.append(oh.make_tensor_value_info(name, TensorProto.FLOAT, shape))
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
    graph = oh.make_graph([node], "g", inputs, [onnx.ValueInfoProto(name=o) for o in node.output])
    model = onnx.shape_inference.infer_shapes(
        oh.make_model(graph, opset_imports=[oh.make_opsetid("", 23)], ir_version=10)
    )
    _check(model, feeds, 1e-5)


def test_decompose_rmsnorm_refuses_positive_axis_of_unknown_rank():
    node = oh.make_node("RMSNormalization", ["x", "s"], ["y"], axis=1)
    inputs = [
        oh.make_tensor_value_info("x", TensorProto.FLOAT, None),
        oh.make_tensor_value_info("s", TensorProto.FLOAT, [8]),
    ]
    graph = oh.make_graph([node], "g", inputs, [oh.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 23)], ir_version=10)
    report = []
    lowered = osg.run(model, "decompose-rmsnorm", report=report)
    assert [n.op_type for n in lowered.graph.node] == ["RMSNormalization"]
    counts = {k: v for e in report for k, v in e["counts"].items()}
    assert counts == {"left: RMSNormalization: axis >= 0 needs the input's rank, which is unknown": 1}, counts
