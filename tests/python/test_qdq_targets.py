"""Default pipelines keep a QDQ model a QDQ model: simplify and every
`--target` plan keep the QuantizeLinear/DequantizeLinear counts of a QAT-style model (float
weights followed by Q -> DQ, the weight's quantization TensorRT reads) and of an int8-weight
one; fold-qdq folds the constant pairs only when asked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

QDQ = ("QuantizeLinear", "DequantizeLinear")
TARGETS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "targets").glob("*.toml"))


def qdq_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (8, 4)).astype(np.float32)
    w8 = np.clip(np.round(rng.uniform(-1, 1, (4, 4)) / 0.01), -127, 127).astype(np.int8)
    model = onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 13]>
g (float[1,8] X) => (float[1,4] Y) <float s = {0.01}, int8 z = {0}, float xs = {0.05}> {
  xq = QuantizeLinear(X, xs, z)
  xd = DequantizeLinear(xq, xs, z)
  wq = QuantizeLinear(W, s, z)
  wd = DequantizeLinear(wq, s, z)
  h = MatMul(xd, wd)
  r = Relu(h)
  hq = QuantizeLinear(r, xs, z)
  hd = DequantizeLinear(hq, xs, z)
  w8d = DequantizeLinear(W8, s, z)
  Y = MatMul(hd, w8d)
}""")
    model.graph.initializer.extend([onnx.numpy_helper.from_array(w, "W"), onnx.numpy_helper.from_array(w8, "W8")])
    return model


def qdq_count(model: onnx.ModelProto) -> int:
    return sum(n.op_type in QDQ for n in model.graph.node)


def test_simplify_keeps_and_fold_qdq_folds():
    model = qdq_model()
    assert qdq_count(osg.run(model, "simplify")) == qdq_count(model) == 7
    folded = osg.run(model, "fold-qdq")
    assert qdq_count(folded) < qdq_count(model)


@pytest.mark.parametrize("target", TARGETS)
def test_target_plan_keeps_qdq_counts(target, tmp_path, run_cli):
    model = qdq_model()
    path, out = tmp_path / "qdq.onnx", tmp_path / "out.onnx"
    onnx.save(model, path)
    proc = run_cli("--target", target, "--input-shapes", "X:1x8", path, "-o", out, expect_rc=None)
    if proc.returncode != 0:  # a target the model cannot reach says why; it must not be Q/DQ
        assert "QuantizeLinear" not in proc.stderr and "DequantizeLinear" not in proc.stderr, proc.stderr
        pytest.skip(f"{target}: {proc.stderr.strip().splitlines()[-1]}")
    assert qdq_count(onnx.load(out)) == qdq_count(model), target


CONSUME_QDQ = ["ort", "ort-1.10", "ort-1.14", "ort-1.16", "trt-8.6", "trt-10", "openvino", "rknn2"]


@pytest.mark.parametrize("target", CONSUME_QDQ)
def test_profiles_state_that_they_consume_qdq(target, run_cli):
    text = run_cli("targets", "--sources", target).stdout
    assert "QDQ models: Q/DQ pairs consumed" in text, text
