"""Lossless load -> save on every ONNX backend node test model (all ~1,900 of them):
the saved ModelProto equals the input, through the file path and through bytes."""

from __future__ import annotations

import onnx
import onnxsurgeon as osg
from backend_node_cases import node_models


def test_every_backend_node_model_roundtrips_unchanged(tmp_path):
    models = node_models()
    assert len(models) > 1500, f"only {len(models)} node tests generated"
    failures = []
    out = tmp_path / "out.onnx"
    for path in models:
        name = path.parent.name
        try:
            original = onnx.load(path, load_external_data=False)
            osg.save(osg.load(path), out)
            if onnx.load(out, load_external_data=False) != original:
                failures.append(f"{name}: file round trip differs")
            if osg.load(path.read_bytes()).to_proto() != original:
                failures.append(f"{name}: bytes round trip differs")
        except Exception as e:  # noqa: BLE001 - collect every failure, report them together
            failures.append(f"{name}: {type(e).__name__}: {e}")
    assert not failures, f"{len(failures)} of {len(models)} failed:\n" + "\n".join(failures[:50])
