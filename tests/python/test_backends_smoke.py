"""Smoke run of the real-backend harness (tests/backends/harness.py): one small corpus model
per backend, original and rewritten, compared with onnxruntime.

A backend whose venv is not installed (scripts/backends/setup.sh, or make backends-setup)
is skipped with that reason, never passed; one whose install failed fails here with the
recorded error. `make backends-smoke` installs what is missing and runs the same check;
`make backends` runs the whole corpus."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from backends import BACKENDS  # noqa: E402
from harness import BACKENDS_DIR  # noqa: E402

CLI = ROOT / "build/onnxsurgeon"
# Measured failures of onnxsurgeon on a backend, kept visible until fixed (strict: the
# test fails once they pass, so the entry is removed then). See docs/targets.md.
KNOWN_FAILURES: dict[str, str] = {}
CORPUS = ROOT / "tests/models/.generated"


@pytest.mark.parametrize("backend", list(BACKENDS))
def test_backend_smoke(backend, tmp_path, request):
    d = BACKENDS_DIR / backend
    if (d / "install-error").is_file():
        pytest.fail(f"{backend} failed to install: {(d / 'install-error').read_text().splitlines()[0]}")
    if not (d / "ready").is_file():
        pytest.skip(f"{backend} venv not installed (make backends-setup BACKENDS={backend})")
    if backend in KNOWN_FAILURES:
        request.applymarker(pytest.mark.xfail(reason=KNOWN_FAILURES[backend], strict=True))
    model = BACKENDS[backend].smoke_model
    if not (CORPUS / f"{model}.onnx").is_file():
        pytest.skip(f"corpus model {model} not generated (make models)")
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests/backends/harness.py"),
            "--smoke",
            "--backends",
            backend,
            "--models",
            model,
            "--out",
            str(tmp_path),
            "--cli",
            str(CLI),
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        env=dict(os.environ, BACKENDS_DIR=str(BACKENDS_DIR)),
    )
    report = json.loads((tmp_path / "results.json").read_text())
    [row] = report["rows"]
    assert proc.returncode == 0, f"{backend} on {model}: {row['verdict']}: {row.get('why')}\n{proc.stdout[-2000:]}"
    assert row["rewritten"]["status"] == "ok" and row["rewritten"]["match"], row
