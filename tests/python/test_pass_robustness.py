"""Every registered pass on every ONNX backend node test model (~1,900 graphs of every op
and opset): never a crash, and a pass either leaves a model onnx's checker accepts or
refuses with an OnnxSurgeonError. Each pass runs in its own interpreter so that a crash
fails its test instead of the whole session."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import onnxsurgeon as osg
import pytest
from backend_node_cases import node_models

PASSES = [p["name"] for p in osg.passes()]

SCRIPT = textwrap.dedent("""
    import sys
    import onnx
    import onnxsurgeon as osg
    pipeline, paths = sys.argv[1], sys.argv[2:]
    invalid, refused = [], 0
    for path in paths:
        try:
            result = osg.run(onnx.load(path, load_external_data=False), pipeline)
        except osg.OnnxSurgeonError:
            refused += 1
            continue
        try:
            onnx.checker.check_model(result)
        except onnx.checker.ValidationError as e:
            invalid.append(f"{path}: {str(e).splitlines()[0]}")
    print(f"refused {refused} of {len(paths)}")
    for line in invalid:
        print("INVALID", line)
""")


@pytest.fixture(scope="module")
def models() -> list[str]:
    found = [str(p) for p in node_models()]
    assert len(found) > 1500
    return found


@pytest.mark.parametrize("pipeline", PASSES)
def test_pass_never_crashes_and_never_writes_an_invalid_model(pipeline, models, repo_root):
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, pipeline, *models],
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(repo_root / "python"), "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, f"{pipeline} crashed (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    invalid = [line for line in proc.stdout.splitlines() if line.startswith("INVALID")]
    assert not invalid, f"{pipeline} wrote {len(invalid)} models the checker rejects:\n" + "\n".join(invalid[:20])
