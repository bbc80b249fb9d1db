"""A fake backend for the CLI's backend checks: a runner (Python source speaking the
runners' file protocol, tests/backends/runners/_protocol.py) installed as the given
backend's, with a ready 'venv' whose python is this interpreter."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fake_backend_env(tmp_path: Path, runner_source: str, backend: str = "openvino", **extra: str) -> dict:
    """Given a folder and the runner's source. Result the environment under which the CLI
    finds that runner and believes `backend` installed (plus the `extra` variables)."""
    runners = tmp_path / "runners"
    runners.mkdir()
    shutil.copy(ROOT / "tests/backends/runners/_protocol.py", runners)
    (runners / f"run-{backend}.py").write_text(runner_source)
    venv = tmp_path / f"backends/{backend}/venv/bin"
    venv.mkdir(parents=True)
    # A wrapper, not a symlink: a symlinked venv python outside its venv loses its packages.
    (venv / "python").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (venv / "python").chmod(0o755)
    (tmp_path / f"backends/{backend}/ready").write_text("")
    return dict(
        os.environ,
        ONNXSURGEON_BACKEND_RUNNERS=str(runners),
        ONNXSURGEON_BACKENDS_DIR=str(tmp_path / "backends"),
        **extra,
    )
