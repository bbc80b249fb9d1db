"""resize-sizes-to-scales gives a Resize stating its output size the equivalent constant
scales; onnxruntime computes the same output from either (every mode and coordinate
transformation it applies to), and refuses where a float32 scale would not give the size
back."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper


def _model(path, in_shape, sizes, **attrs):
    V = h.make_tensor_value_info
    node = h.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
    init = [numpy_helper.from_array(np.array(sizes, np.int64), "sizes")]
    g = h.make_graph([node], "g", [V("x", T.FLOAT, in_shape)], [V("y", T.FLOAT, sizes)], initializer=init)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7), str(path))


def _run(path, x):
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("ct", ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"])
@pytest.mark.parametrize(
    ("in_hw", "out_hw"), [((5, 6), (10, 12)), ((8, 8), (4, 2)), ((7, 9), (10, 16)), ((3, 3), (3, 3))]
)
def test_scales_form_is_exact(tmp_path, run_cli, mode, ct, in_hw, out_hw):
    src, out = tmp_path / "a.onnx", tmp_path / "b.onnx"
    _model(src, [1, 2, *in_hw], [1, 2, *out_hw], mode=mode, coordinate_transformation_mode=ct)
    run_cli("--pass", "resize-sizes-to-scales", src, "-o", out)
    m = onnx.load(str(out))
    (node,) = m.graph.node
    assert len(node.input) == 3 and node.input[2], "sizes should be gone, scales given"
    x = np.random.default_rng(0).standard_normal((1, 2, *in_hw)).astype(np.float32)
    np.testing.assert_array_equal(_run(out, x), _run(src, x))


def test_inexact_scale_is_refused(tmp_path, run_cli):
    # 10 / 6 in float32, times 6, is 9.99999994 in float64: the output length could change.
    src, out = tmp_path / "a.onnx", tmp_path / "b.onnx"
    _model(src, [1, 1, 3, 6], [1, 1, 3, 10], mode="nearest")
    run_cli("--pass", "resize-sizes-to-scales", src, "-o", out)
    (node,) = onnx.load(str(out)).graph.node
    assert node.input[3] == "sizes"
