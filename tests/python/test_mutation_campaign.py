"""The short form of the mutation campaign (fuzz/mutate_campaign.py; the long runs are in
docs/reliability.md): a fixed-seed run of mutants, half of them scope mutations of the
models with subgraphs, must end with no crash, hang, write on failure, exit-0-invalid output
or rewrite that computes something else. A finding is saved under the run's folder with its
command line; the test prints the summary."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_short_mutation_campaign_finds_nothing(cli_path: Path, repo_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "campaign"
    proc = subprocess.run(
        [
            sys.executable,
            str(repo_root / "fuzz" / "mutate_campaign.py"),
            "--cli",
            str(cli_path),
            "--count",
            "80",
            "--seed",
            "21",
            "--scope-rate",
            "0.5",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert (out / "summary.json").exists(), proc.stderr[-3000:]
    counts = json.loads((out / "summary.json").read_text())["counts"]
    assert counts["scope_mutants"] > 0 and counts["input_sets_compared"] > 0, counts
    assert proc.returncode == 0, f"findings under {out}:\n{proc.stdout[-3000:]}"
