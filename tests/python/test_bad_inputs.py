"""Runs the bad-input catalogue (tests/python/bad_inputs): every malformed or hostile input
gets a non-zero exit, a one-line message, and leaves every file as it was."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest
from bad_inputs import BadInput, all_cases

CASES = all_cases()


def snapshot(folder: Path) -> dict[str, tuple[str, str]]:
    """Every entry below folder (links not followed) -> (kind, content hash or target)."""
    state: dict[str, tuple[str, str]] = {}
    for root, dirs, files in os.walk(folder, followlinks=False):
        for name in dirs + files:
            path = Path(root) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                state[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                state[rel] = ("dir", "")
            elif path.is_file():
                state[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest())
            else:
                state[rel] = ("special", "")
    return state


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_refused_cleanly(case: BadInput, cli_path: Path, tmp_path: Path) -> None:
    folder = tmp_path / "case"
    folder.mkdir()
    argv = case.make(folder)
    before = snapshot(folder)
    proc = subprocess.run(
        [str(cli_path), *map(str, argv)],
        cwd=folder,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=case.timeout,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode >= 0, f"killed by signal {-proc.returncode}\nstderr:\n{proc.stderr}"
    assert proc.returncode in case.exit_codes, f"exit {proc.returncode}\nstderr:\n{proc.stderr}"
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got:\n{proc.stderr}"
    assert case.message in lines[0], lines[0]
    after = snapshot(folder)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed <= set(case.may_write), f"files created, changed or removed: {sorted(changed)}"
