"""convert-opset decomposes LayerNormalization (opset 17) for a lower opset with the element
type of its input; where that input comes from an op shape inference does not know (an
onnxruntime contrib op, as lower-contrib-ops leaves them before the conversion), the type
comes from Scale, which shares LayerNormalization's type parameter. Compared with
onnxruntime on the original."""

from __future__ import annotations

import subprocess

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto
from onnx import helper as oh
from onnx import numpy_helper as nh


def test_layernorm_after_a_contrib_op_converts_to_opset_15(cli_path, tmp_path):
    rng = np.random.default_rng(0)
    inits = [
        nh.from_array(rng.standard_normal((8, 8)).astype(np.float32), "w"),
        nh.from_array(rng.standard_normal(8).astype(np.float32), "g"),
        nh.from_array(rng.standard_normal(8).astype(np.float32), "b"),
    ]
    nodes = [
        oh.make_node("FusedMatMul", ["x", "w"], ["m"], domain="com.microsoft", alpha=0.5),
        oh.make_node("LayerNormalization", ["m", "g", "b"], ["y"], axis=-1, epsilon=1e-5),
    ]
    graph = oh.make_graph(
        nodes,
        "g",
        [oh.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])],
        [oh.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8])],
        inits,
    )
    model = oh.make_model(
        graph, opset_imports=[oh.make_opsetid("", 18), oh.make_opsetid("com.microsoft", 1)], ir_version=8
    )
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(model, src)
    proc = subprocess.run(
        [str(cli_path), "--pass", "convert-opset=15", str(src), "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "LayerNormalization" not in {n.op_type for n in onnx.load(out).graph.node}
    x = rng.standard_normal((2, 3, 8)).astype(np.float32)
    want = ort.InferenceSession(str(src), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
