"""The ONNX backend node tests, written to disk.

The onnx wheel no longer ships the generated node-test data (onnx/backend/test/data/node
is empty), but it ships the test cases themselves (onnx.backend.test.case.node). This
writes every case as <dir>/<name>/model.onnx plus test_data_set_N/{input,output}_K.pb,
the layout the onnx repository uses, cached per onnx version.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import onnx
from onnx import numpy_helper

CACHE_ROOT = Path(__file__).resolve().parents[1] / "models" / ".generated" / "backend-node"


def _serialize_value(value, type_proto, name: str) -> bytes:
    if isinstance(value, onnx.TensorProto):
        return value.SerializeToString()
    if type_proto.HasField("sequence_type"):
        return numpy_helper.from_list(value, name).SerializeToString()
    if type_proto.HasField("optional_type"):
        return numpy_helper.from_optional(value, name).SerializeToString()
    if type_proto.HasField("map_type"):
        return numpy_helper.from_dict(value, name).SerializeToString()
    return numpy_helper.from_array(value, name).SerializeToString()


def node_test_dir() -> Path:
    """Generates (once per onnx version) and returns the folder of node tests."""
    root = CACHE_ROOT / onnx.__version__
    stamp = root / ".complete"
    if stamp.exists():
        return root
    from onnx.backend.test.case import node  # slow import (~8 s): only when generating

    tmp = root.with_name(root.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    for case in node.collect_testcases():
        case_dir = tmp / case.name
        case_dir.mkdir(parents=True)
        (case_dir / "model.onnx").write_bytes(case.model.SerializeToString())
        for i, (inputs, outputs) in enumerate(case.data_sets or []):
            data_dir = case_dir / f"test_data_set_{i}"
            data_dir.mkdir()
            for j, value in enumerate(inputs):
                vi = case.model.graph.input[j]
                (data_dir / f"input_{j}.pb").write_bytes(_serialize_value(value, vi.type, vi.name))
            for j, value in enumerate(outputs):
                vi = case.model.graph.output[j]
                (data_dir / f"output_{j}.pb").write_bytes(_serialize_value(value, vi.type, vi.name))
    shutil.rmtree(root, ignore_errors=True)
    tmp.rename(root)
    stamp.touch()
    return root


def node_models() -> list[Path]:
    return sorted(node_test_dir().glob("*/model.onnx"))
