"""docs/passes.md describes every registered pass."""

from __future__ import annotations

import re

import onnxsurgeon as osg


def test_every_pass_is_documented(repo_root):
    text = (repo_root / "docs" / "passes.md").read_text()
    documented = set(re.findall(r"`([a-z0-9-]+)`", "\n".join(l for l in text.splitlines() if l.startswith("### "))))
    missing = [p["name"] for p in osg.passes() if p["builtin"] and p["name"] not in documented]
    assert not missing, f"docs/passes.md lacks: {missing}"


def test_pass_reference_is_generated_from_the_pass_table(run_cli, repo_root, generated_docs):
    """The reference table of docs/passes.md is `onnxsurgeon passes --markdown`, so it
    cannot drift from passes/passes.def (what the parser accepts)."""
    generated = generated_docs.section((repo_root / "docs" / "passes.md").read_text(), "passes")
    assert generated is not None, "docs/passes.md lacks the markers of its generated section"
    assert generated == run_cli("passes", "--markdown").stdout, (
        "docs/passes.md is stale: run scripts/update-pass-docs.py"
    )


def test_passes_json_carries_the_typed_options_and_simplify_steps(run_cli):
    import json

    by_name = {p["name"]: p for p in json.loads(run_cli("passes", "--json").stdout)}
    assert [p["name"] for p in osg.passes() if p["builtin"]] == list(by_name)
    gelu_to = by_name["rewrite-gelu"]["options"][0]
    assert (gelu_to["type"], gelu_to["choices"], gelu_to["default"]) == ("enum", ["erf", "tanh", "sigmoid"], "erf")
    simplify = by_name["simplify"]
    skip = {o["name"]: o for o in simplify["options"]}["skip"]
    assert skip["choices"] == [s.split("(")[0] for s in simplify["steps"]]
    assert "fix-layernorm(to=native,custom-ops=false)" in simplify["steps"]
