"""Leniency where the ecosystem is lenient (docs/reliability.md, "Leniency"): every catalogue
input onnxsurgeon refuses that onnx's checker or onnxruntime accepts says why; the models it
must accept are accepted and rewritten into models both accept; the table is current."""

from __future__ import annotations

import subprocess
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest
from bad_inputs import Accepted, BadInput, all_accepted, leniency_table

ACCEPTED = all_accepted()


@pytest.fixture(scope="module")
def verdicts(cli_path: Path) -> list[leniency_table.Verdicts]:
    return leniency_table.judge_all(cli_path)


def test_every_refusal_the_ecosystem_would_accept_says_why(verdicts):
    unexplained = [
        v.case.name
        for v in verdicts
        if isinstance(v.case, BadInput) and v.onnxsurgeon == "refuses" and v.ecosystem_accepts and not v.case.why
    ]
    assert not unexplained, (
        f"onnx's checker or onnxruntime accepts these, onnxsurgeon refuses them: accept them, or give the "
        f"case a `why`: {unexplained}"
    )
    stale = [v.case.name for v in verdicts if isinstance(v.case, BadInput) and v.case.why and not v.ecosystem_accepts]
    assert not stale, f"these say why they are refused, but onnx's checker and onnxruntime refuse them too: {stale}"


def test_accepted_models_are_accepted_by_all_three(verdicts):
    refused = [
        (v.case.name, v.checker, v.onnxruntime, v.onnxsurgeon_error)
        for v in verdicts
        if isinstance(v.case, Accepted) and "refuses" in (v.checker, v.onnxruntime, v.onnxsurgeon)
    ]
    assert not refused, refused


def test_leniency_table_is_current(verdicts, repo_root):
    text = (repo_root / "docs" / "reliability.md").read_text()
    generated = leniency_table.section(text)
    assert generated is not None, "docs/reliability.md lacks the markers of the leniency table"
    assert generated == leniency_table.table(verdicts), (
        "docs/reliability.md's leniency table is stale: run scripts/update-leniency-table.py"
    )


@pytest.mark.parametrize("pipeline", ["nop", "simplify"])
@pytest.mark.parametrize("case", ACCEPTED, ids=[c.name for c in ACCEPTED])
def test_accepted_model_is_rewritten_into_a_valid_model(case: Accepted, pipeline: str, cli_path: Path, tmp_path: Path):
    """Saved into another folder, so the output must carry (or copy) all of its data."""
    source = tmp_path / "source"
    source.mkdir()
    model = source / case.make(source)
    out = tmp_path / "out" / "out.onnx"
    out.parent.mkdir()
    proc = subprocess.run(
        [str(cli_path), "-q", "--pass", pipeline, str(model), "-o", str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(str(out), full_check=True)
    ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
