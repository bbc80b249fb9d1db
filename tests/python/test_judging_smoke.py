"""A smoke of the judging corpus and the judge (tests/judging): the generator builds its two
smoke models, the judge runs them through three pipelines and writes one JSON line per run,
and the judge counts nothing but a checked, equivalent output as ok: a CLI that refuses is
"refused", one that writes a model computing something else is "wrong". Only the machinery
is tested here; the judging models' verdicts are never asserted (no rule is tuned on them)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
JUDGING = REPO / "tests" / "judging"
STATUSES = {"ok", "refused", "wrong", "invalid", "crash", "timeout"}


@pytest.fixture(scope="module")
def smoke_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("judging-corpus")
    proc = subprocess.run(
        [sys.executable, str(JUDGING / "generate.py"), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def _judge(corpus: Path, results: Path, cli: Path) -> list[dict]:
    command = [sys.executable, str(JUDGING / "judge.py"), "--smoke", "--corpus", str(corpus), "--results", str(results)]
    proc = subprocess.run([*command, "--cli", str(cli), "--fresh"], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [json.loads(line) for line in results.read_text().splitlines()]


def test_judge_records_every_run_of_the_smoke(smoke_corpus, cli_path, tmp_path):
    records = _judge(smoke_corpus, tmp_path / "results.jsonl", cli_path)
    models = {p.name[: -len(".stamp")] for p in smoke_corpus.glob("*.stamp")}
    assert len(models) == 2
    runs = {(r["model"], r["pipeline"]) for r in records}
    for model in models:
        assert (model, "(original)") in runs
        assert {p for m, p in runs if m == model} == {"(original)", "simplify", "convert-opset=13", "--target ort"}
    assert {r["status"] for r in records} <= STATUSES
    # the If model's every input set (both branches) was compared
    silero = [r for r in records if r["model"] == "wheel_silero_vad_ifless" and r["status"] == "ok" and "sets" in r]
    assert silero and all({s["label"] for s in r["sets"]} == {"sr16k", "sr8k"} for r in silero)
    table = subprocess.run(
        [sys.executable, str(JUDGING / "judge.py"), "--summary", "--results", str(tmp_path / "results.jsonl")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "simplify" in table and "--target ort" in table and "originals: 2 models" in table


def test_a_refusal_is_recorded_as_refused_with_its_reason(smoke_corpus, tmp_path):
    cli = tmp_path / "refusing-cli"
    cli.write_text("#!/bin/sh\necho 'error: this model is refused for the test' >&2\nexit 1\n")
    cli.chmod(0o755)
    records = [r for r in _judge(smoke_corpus, tmp_path / "r.jsonl", cli) if r["pipeline"] != "(original)"]
    assert records and all(r["status"] == "refused" for r in records)
    assert all(r["reason"] == "error: this model is refused for the test" for r in records)


def test_an_output_that_computes_something_else_is_wrong(smoke_corpus, tmp_path):
    """A fake CLI that writes the model with its first output negated: exit 0, valid, wrong."""
    cli = tmp_path / "negating-cli"
    cli.write_text(
        f"#!{sys.executable}\n"
        "import sys, onnx\n"
        "args = sys.argv[1:]\n"
        "src, out = [a for a in args if a.endswith('.onnx')][0], args[args.index('-o') + 1]\n"
        "m = onnx.load(src)\n"
        "o = m.graph.output[0]\n"
        "m.graph.node.append(onnx.helper.make_node('Neg', [o.name + '_pre'], [o.name]))\n"
        "for n in m.graph.node[:-1]:\n"
        "    n.output[:] = [o.name + '_pre' if x == o.name else x for x in n.output]\n"
        "onnx.save(m, out)\n"
    )
    cli.chmod(0o755)
    records = [r for r in _judge(smoke_corpus, tmp_path / "r.jsonl", cli) if r["pipeline"] != "(original)"]
    assert records and all(r["status"] == "wrong" for r in records), [
        (r["model"], r["status"], r["reason"]) for r in records
    ]
