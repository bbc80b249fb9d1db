"""docs/passes.md describes every registered pass."""
from __future__ import annotations

import re

import onnxsurgeon as osg


def test_every_pass_is_documented(repo_root):
    text = (repo_root / "docs" / "passes.md").read_text()
    documented = set(re.findall(r"`([a-z0-9-]+)`", "\n".join(l for l in text.splitlines() if l.startswith("### "))))
    missing = [p["name"] for p in osg.passes() if p["builtin"] and p["name"] not in documented]
    assert not missing, f"docs/passes.md lacks: {missing}"
