"""A real torch export (a small transformer encoder) round-trips through the CLI
unchanged and computes identical outputs in onnxruntime, inline and with external data."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

torch = pytest.importorskip("torch", reason="torch is part of requirements-dev.txt")


def export_encoder(path, external: bool) -> dict:
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, batch_first=True, dropout=0.0)
    model = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 5, 32)
    torch.onnx.export(
        model,
        (x,),
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}},
    )
    if external:
        m = onnx.load(path)
        onnx.save_model(m, path, save_as_external_data=True, location=path.name + ".weights", size_threshold=128)
    return {"x": x.numpy()}


def run(path, feeds):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("external", [False, True], ids=["inline", "external"])
def test_transformer_export_roundtrip(run_cli, tmp_path, external):
    src_dir, out_dir = tmp_path / "src", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    feeds = export_encoder(src_dir / "enc.onnx", external)
    run_cli(src_dir / "enc.onnx", "-o", out_dir / "enc.onnx")
    assert onnx.load(out_dir / "enc.onnx", load_external_data=False) == onnx.load(
        src_dir / "enc.onnx", load_external_data=False
    )
    if external:
        assert (out_dir / "enc.onnx.weights").read_bytes() == (src_dir / "enc.onnx.weights").read_bytes()
    before, after = run(src_dir / "enc.onnx", feeds), run(out_dir / "enc.onnx", feeds)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert np.abs(before[0]).max() > 0
