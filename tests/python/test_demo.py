"""`make demo` stays true: the shipped example is refused by onnxruntime as exported and
runs, matching the torch module, after the demo's pipeline."""

from __future__ import annotations

import os
import subprocess


def test_demo_script_fixes_the_example(repo_root, cli_path, tmp_path):
    env = dict(os.environ)
    proc = subprocess.run(
        ["bash", str(repo_root / "examples" / "demo.sh")], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "refuses custom_layernorm.onnx" in proc.stdout
    assert "runs fixed.onnx" in proc.stdout and "(OK)" in proc.stdout
    assert "custom::Custom_LayerNorm       1 ->   0" in proc.stdout
    assert "downgrade-opset" in proc.stdout
