"""The docs are current and true: README.md and docs/ (the pages, docs/passes/, docs/results/).

- No absolute path of the machine that wrote them (/work/, /home/, /tmp/, /root/, /Users/,
  /mnt/, /var/folders/): a doc shows repository-relative paths, and `~/.cache/...` for the
  caches a user's own machine keeps (a user path, the same for every reader).
- The README's folder map ("What is here") lists every folder of the tree down to depth 2
  (hidden folders and ignored ones aside), and every folder it lists exists.
- Every generated section is what its generator prints now (scripts/generated_docs.py:
  the pass reference and descriptions, the profile reference), each registered pass has
  its description docs/passes/NAME.md, and docs/results/NAME.md is the rendering of its JSON.
- Every code example runs: each fenced ```python block of a page, in order, in one fresh
  interpreter per page, and each fenced ```sh block (indented blocks are synopses and are
  not run), in a folder holding the files the examples name (model.onnx, fixed.onnx,
  inputs.npz, torch_out.npz, my_rules.py) with build/ and .venv/bin first on PATH.
  A block preceded by `<!-- known failure: TEXT -->` must fail with TEXT in its error
  (a known bug the page shows as it should work); once it runs, the marker must go.

All of it is fast (about 6 s of test time, most of it the Python examples' compare and
bisect, which start helpers), so all of it runs in `make test`; no separate target.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "backends"))

import report as backend_report  # noqa: E402

DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
ABSOLUTE = re.compile(r"(?<![\w.~$/-])/(?:work|home|tmp|root|Users|mnt|var/folders)/")


def _rel(p: Path) -> str:
    return str(p.relative_to(REPO))


# ---------------------------------------------------------------------- absolute paths


def test_no_absolute_paths_of_the_machine():
    found = []
    for doc in [*DOCS, *sorted((REPO / "docs" / "results").rglob("*.json"))]:
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if ABSOLUTE.search(line):
                found.append(f"{_rel(doc)}:{n}: {line.strip()[:160]}")
    assert not found, "absolute paths of a machine in the docs:\n" + "\n".join(found)


ISSUE_NUMBER = re.compile(r"\bissues? \d+", re.IGNORECASE)


def test_no_issue_numbers_as_sources():
    """Docs state facts and the command behind them; an issue number is no source (the
    backend results quote the tool's own messages and are left out)."""
    found = []
    for doc in DOCS:
        if doc.parent.name == "results" or doc.parent.parent.name == "results":
            continue
        for n, line in enumerate(doc.read_text().splitlines(), 1):
            if ISSUE_NUMBER.search(line):
                found.append(f"{_rel(doc)}:{n}: {line.strip()[:160]}")
    assert not found, "issue numbers in the docs:\n" + "\n".join(found)


# ---------------------------------------------------------------------- the README's map


def _tree_folders(depth: int = 2) -> set[str]:
    """Folders holding tracked (or new, not ignored) files, down to `depth`."""
    files = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    folders = set()
    for f in files:
        parts = f.split("/")[:-1]
        if not (REPO / f).exists() or any(p.startswith(".") for p in parts):
            continue
        for i in range(1, min(len(parts), depth) + 1):
            folders.add("/".join(parts[:i]))
    return folders


def _map_folders() -> set[str]:
    text = (REPO / "README.md").read_text()
    table = text.split("## What is here\n", 1)[1].split("\n## ", 1)[0]
    folders = set()
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("| ---") and not line.startswith("| folder"):
            first = line[2:].split(" | ", 1)[0]
            folders |= {f.rstrip("/") for f in re.findall(r"`([^`]+/)`", first)}
    return folders


def test_readme_map_lists_every_folder_and_only_folders_that_exist():
    listed = _map_folders()
    assert listed, "README.md: no folder map under '## What is here'"
    # A top folder is listed by its own row or by rows of its subfolders (core/ir/, ...).
    covered = listed | {f.split("/")[0] for f in listed}
    missing = sorted(_tree_folders() - covered)
    gone = sorted(f for f in listed if not (REPO / f).is_dir())
    assert not missing, f"folders the README's map ('What is here') does not list: {missing}"
    assert not gone, f"README's map lists folders that do not exist: {gone}"


def test_design_md_names_only_folders_that_exist():
    text = (REPO / "docs" / "design.md").read_text()
    roots = {p.name for p in REPO.iterdir() if p.is_dir() and not p.name.startswith(".")}
    named = set(re.findall(r"(?<![\w./-])((?:[a-z_]+/)+)(?=[\s`),.:;]|$)", text, re.M))
    gone = sorted(f for f in named if f.split("/")[0] in roots and not (REPO / f).is_dir())
    assert not gone, f"docs/design.md names folders that do not exist: {gone}"


# ---------------------------------------------------------------------- generated sections


def test_generated_sections_are_current(cli_path, generated_docs):
    problems, pending = generated_docs.stale(str(cli_path))
    assert not problems, "\n".join(problems) + "\nrun: make docs"
    for p in pending:  # the generator is not there yet: the section stays hand-written
        print(f"pending: {p}")


def test_every_pass_has_one_description(run_cli, generated_docs):
    names = [p["name"] for p in json.loads(run_cli("passes", "--json").stdout)]
    topics = {"gelu", "scatternd"}  # pages the descriptions link to, not passes
    files = {p.stem for p in generated_docs.PASS_DOCS.glob("*.md")}
    assert not [n for n in names if n not in files], "passes without docs/passes/NAME.md"
    assert not sorted(files - set(names) - topics), "docs/passes/*.md that describe no pass"


def test_backend_results_are_renderings_of_their_data():
    results = REPO / "docs" / "results"
    assert sorted(p.stem for p in results.glob("*.json")), "docs/results/ holds no results"
    assert not backend_report.stale_results(results)
    assert not backend_report.stale_results(results / "judging")


def test_backend_results_hold_one_corpus_each():
    """docs/results/ holds the development corpus's tables, docs/results/judging/ the judging
    corpus's; each table names the make target that regenerates it."""
    results = REPO / "docs" / "results"
    for folder, corpus in ((results, "development"), (results / "judging", "judging")):
        for path in sorted(folder.glob("*.json")):
            data = json.loads(path.read_text())
            assert backend_report.corpus_of(data) == corpus, (
                f"{_rel(path)} holds the {backend_report.corpus_of(data)} corpus"
            )
            command = backend_report.regenerate_command(data["backend"], corpus)
            assert f"`{command}`" in path.with_suffix(".md").read_text().split("\n\n")[1], _rel(path)


def test_passes_json_carries_the_typed_options_and_simplify_steps(run_cli):
    import onnxsurgeon as osg

    by_name = {p["name"]: p for p in json.loads(run_cli("passes", "--json").stdout)}
    assert [p["name"] for p in osg.passes() if p["builtin"]] == list(by_name)
    gelu_to = by_name["rewrite-gelu"]["options"][0]
    assert (gelu_to["type"], gelu_to["choices"], gelu_to["default"]) == ("enum", ["erf", "tanh", "sigmoid"], "erf")
    simplify = by_name["simplify"]
    skip = {o["name"]: o for o in simplify["options"]}["skip"]
    assert skip["choices"] == [s.split("(")[0] for s in simplify["steps"]]
    assert "fix-layernorm(to=native,custom-ops=false)" in simplify["steps"]


# ---------------------------------------------------------------------- code examples

_FENCE = re.compile(
    r"^(?:<!-- known failure: (?P<known>.*?) -->\n)?```(?P<lang>\w+)[^\n]*\n(?P<code>.*?)^```$", re.M | re.S
)


def _blocks(doc: Path, lang: str) -> list[tuple[int, str, str | None]]:
    text = doc.read_text()
    return [
        (text[: m.start("code")].count("\n") + 1, m.group("code"), m.group("known"))
        for m in _FENCE.finditer(text)
        if m.group("lang") == lang
    ]


def _example_folder(folder: Path) -> Path:
    """The files the examples name: model.onnx (input `images`, a Relu `a` -> A, then
    x*sigmoid(x)), fixed.onnx, inputs.npz, torch_out.npz (its outputs) and my_rules.py."""
    nodes = [
        helper.make_node("Relu", ["images"], ["A"], name="a"),
        helper.make_node("Sigmoid", ["A"], ["S"], name="s"),
        helper.make_node("Mul", ["A", "S"], ["Y"], name="m"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3, 8, 8])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, folder / "model.onnx")
    onnx.save(model, folder / "fixed.onnx")
    x = np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.savez(folder / "inputs.npz", images=x)
    a = np.maximum(x, 0)
    np.savez(folder / "torch_out.npz", Y=a / (1 + np.exp(-a)))
    (folder / "my_rules.py").write_text(
        textwrap.dedent(
            """\
            from onnxsurgeon.rules import Pattern, Rule

            _p = Pattern("double-neg")
            _root = _p.op("Neg", _p.op("Neg", _p.any("x")))
            RULES = [Rule(_p, root=_root, replace=lambda m, rw: m["x"])]
            """
        )
    )
    return folder


_DRIVER = """
import sys, traceback
import numpy as np, onnx, onnxsurgeon as osg
ns = {"np": np, "onnx": onnx, "osg": osg, "onnx_model_proto": onnx.load("model.onnx")}
failed = 0
for where, code, known in BLOCKS:
    try:
        exec(compile(code, where, "exec"), ns)
    except Exception as e:
        text = "".join(traceback.format_exception_only(type(e), e)).strip()
        if known and known in text:
            print(f"{where}: known failure, as marked: {text}")
            continue
        failed += 1
        print(f"{where}: {text}")
        traceback.print_exc()
        continue
    if known:
        failed += 1
        print(f"{where}: marked `known failure: {known}` but ran: remove the marker")
sys.exit(1 if failed else 0)
"""


def _env() -> dict:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(REPO / "build"), str(REPO / ".venv" / "bin"), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "python"), env.get("PYTHONPATH", "")])
    env["REPO"] = str(REPO)
    return env


PY_DOCS = [d for d in DOCS if _blocks(d, "python")]
SH_DOCS = [d for d in DOCS if _blocks(d, "sh")]


@pytest.mark.parametrize("doc", PY_DOCS, ids=[_rel(d) for d in PY_DOCS])
def test_python_examples_run(doc, tmp_path):
    folder = _example_folder(tmp_path)
    blocks = [(f"{_rel(doc)}:{line}", code, known) for line, code, known in _blocks(doc, "python")]
    driver = f"BLOCKS = {blocks!r}\n{_DRIVER}"
    proc = subprocess.run(
        [sys.executable, "-c", driver], cwd=folder, env=_env(), capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, f"{_rel(doc)}: an example fails\n{proc.stdout}\n{proc.stderr[-3000:]}"


@pytest.mark.parametrize("doc", SH_DOCS, ids=[_rel(d) for d in SH_DOCS])
def test_shell_examples_run(doc, tmp_path, cli_path):
    assert cli_path.is_file(), f"no CLI at {cli_path} (make build)"
    folder = _example_folder(tmp_path)
    for line, code, known in _blocks(doc, "sh"):
        proc = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", code],
            cwd=folder,
            env=_env(),
            capture_output=True,
            text=True,
            timeout=600,
        )
        where = f"{_rel(doc)}:{line}"
        if known:
            assert proc.returncode != 0 and known in proc.stdout + proc.stderr, (
                f"{where}: marked `known failure: {known}` but ran: remove the marker"
            )
        else:
            assert proc.returncode == 0, f"{where}: exit {proc.returncode}\n{code}\n{proc.stdout}\n{proc.stderr}"
