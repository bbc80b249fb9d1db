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


# Profiles whose backend does not run a QDQ model as onnxruntime does ([quantization] qdq =
# "refuse", measured: targets/probes/qdq_models.txt).
REFUSE_QDQ = ["nncase-k210", "tflite"]


def weights_only_model() -> onnx.ModelProto:
    """qdq_model without the activations' Q -> DQ: only the weights' quantization."""
    model = qdq_model()
    keep = [n for n in model.graph.node if not (n.op_type in QDQ and n.input[0] in ("X", "xq", "r", "hq"))]
    rename = {"xd": "X", "hd": "r"}
    for n in keep:
        n.input[:] = [rename.get(i, i) for i in n.input]
    del model.graph.node[:]
    model.graph.node.extend(keep)
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("target", REFUSE_QDQ)
def test_target_that_refuses_qdq_folds_the_weights_and_names_the_activations(target, tmp_path, run_cli, oracle):
    model = weights_only_model()
    assert qdq_count(model) == 3
    path, out = tmp_path / "w.onnx", tmp_path / "out.onnx"
    onnx.save(model, path)
    report = osg.check_target(model, target, "X:1x8")
    assert {b["op"] for b in report["blockers"]} >= {"QuantizeLinear", "DequantizeLinear"}, report
    assert all(b["fixable"] for b in report["blockers"] if b["op"] in QDQ), report
    run_cli("--target", target, "--input-shapes", "X:1x8", path, "-o", out)
    folded = onnx.load(out)
    assert qdq_count(folded) == 0
    x = {"X": np.random.default_rng(1).standard_normal((1, 8)).astype(np.float32)}
    oracle.assert_outputs_close(oracle.run_model(folded, x), oracle.run_model(model, x), rtol=0, atol=1e-6)
    # An activation's Q -> DQ is the model's quantization: named, not folded.
    full = tmp_path / "full.onnx"
    onnx.save(qdq_model(), full)
    proc = run_cli("--target", target, "--input-shapes", "X:1x8", full, "-o", tmp_path / "x.onnx", expect_rc=None)
    assert proc.returncode != 0 and "quantizes an activation" in proc.stderr, proc.stderr
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.parametrize("target", [t for t in TARGETS if t not in REFUSE_QDQ])
def test_target_plan_keeps_qdq_counts(target, tmp_path, run_cli):
    model = qdq_model()
    path, out = tmp_path / "qdq.onnx", tmp_path / "out.onnx"
    onnx.save(model, path)
    proc = run_cli("--target", target, "--input-shapes", "X:1x8", path, "-o", out, expect_rc=None)
    if proc.returncode != 0:  # a target the model cannot reach says why; it must not be Q/DQ
        assert "QuantizeLinear" not in proc.stderr and "DequantizeLinear" not in proc.stderr, proc.stderr
        pytest.skip(f"{target}: {proc.stderr.strip().splitlines()[-1]}")
    assert qdq_count(onnx.load(out)) == qdq_count(model), target


CONSUME_QDQ = ["ort", "ort-1.10", "ort-1.14", "ort-1.15", "ort-1.16", "trt-8.6", "trt-10", "openvino", "rknn2"]


@pytest.mark.parametrize("target", CONSUME_QDQ)
def test_profiles_state_that_they_consume_qdq(target, run_cli):
    text = run_cli("targets", "--sources", target).stdout
    assert "QDQ models: Q/DQ pairs consumed" in text, text
