"""ncnn's Slice fact (`Slice when step-not-one-except-reversal`, targets/ncnn.toml): pnnx
20261020 converts a whole-axis reversal x[:, ::-1] and ncnn runs it exactly, but not other
steps; slice-step-to-gather(form=concat) writes those as one-element Slices joined by
Concat (a Gather of constant indices, the default form, pnnx mistranslates). Measured in
targets/probes/ncnn_models.txt. The fast tests need only the CLI; the real-backend one runs
ncnn through `--backend-check` where `make backends-setup BACKENDS=ncnn` installed it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]
INT_MIN = np.iinfo(np.int64).min

# name: (input shape, starts, ends, axes, steps)
SLICES = {
    "step2": ((1, 6, 8), [0], [6], [1], [2]),
    "step_neg2": ((1, 6, 8), [-1], [INT_MIN], [1], [-2]),
    "rev_part": ((1, 6, 8), [4], [0], [1], [-1]),
    "two_axes": ((1, 6, 8), [1, 7], [6, 0], [1, 2], [2, -3]),
    "with_step1_axis": ((1, 3, 8, 8), [1, 0], [3, 8], [1, 3], [1, 3]),
    "rev_whole": ((1, 6, 8), [-1], [INT_MIN], [1], [-1]),
}


def slice_model(path: Path, shape, starts, ends, axes, steps) -> Path:
    C = lambda n, v: numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
    g = helper.make_graph(
        [helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [C("s", starts), C("e", ends), C("a", axes), C("k", steps)],
    )
    m = onnx.shape_inference.infer_shapes(
        helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    )
    onnx.save(m, path)
    return path


def run_cli(cli_path, *args, env=None):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True, timeout=600, env=env)


def outputs(path: Path, x: np.ndarray) -> np.ndarray:
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


@pytest.mark.parametrize("name", sorted(set(SLICES) - {"rev_whole"}))
def test_concat_form_is_exact(cli_path, tmp_path, name):
    shape, *rest = SLICES[name]
    src = slice_model(tmp_path / f"{name}.onnx", shape, *rest)
    out = tmp_path / f"{name}.concat.onnx"
    proc = run_cli(cli_path, "--pass", "slice-step-to-gather(form=concat)", src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    ops = [n.op_type for n in onnx.load(out).graph.node]
    assert "Gather" not in ops and "Concat" in ops
    m = onnx.load(out)
    consts = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Slice" and len(n.input) > 4:
            assert (consts[n.input[4]] == 1).all()  # only the step-1 axes stay one Slice
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(outputs(out, x), outputs(src, x))


def check(cli_path, path):
    proc = run_cli(cli_path, "check", "--target", "ncnn", "--json", path)
    return [b for b in json.loads(proc.stdout)["blockers"] if b["op"] == "Slice"]


def test_whole_axis_reversal_is_accepted(cli_path, tmp_path):
    assert check(cli_path, slice_model(tmp_path / "rev.onnx", *SLICES["rev_whole"])) == []


@pytest.mark.parametrize("name", ["step2", "step_neg2", "rev_part"])
def test_other_steps_are_named_and_removed(cli_path, tmp_path, name):
    src = slice_model(tmp_path / f"{name}.onnx", *SLICES[name])
    blockers = check(cli_path, src)
    assert len(blockers) == 1 and blockers[0]["fixable"], blockers
    assert "slice-step-to-gather(form=concat)" in blockers[0]["fix"]
    out = tmp_path / f"{name}.ncnn.onnx"
    proc = run_cli(cli_path, "--target", "ncnn", src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Gather" not in [n.op_type for n in onnx.load(out).graph.node]


def test_backend_check_on_ncnn(cli_path, tmp_path):
    sys.path.insert(0, str(ROOT / "tests/backends"))
    from harness import BACKENDS_DIR

    if not (BACKENDS_DIR / "ncnn" / "ready").is_file():
        pytest.skip("ncnn is not installed (make backends-setup BACKENDS=ncnn)")
    src = slice_model(tmp_path / "step2.onnx", *SLICES["step2"])
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    out = tmp_path / "out.onnx"
    proc = run_cli(cli_path, "--target", "ncnn", "--backend-check", src, "-o", out, env=env)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
