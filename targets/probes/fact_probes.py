#!/usr/bin/env python3
"""Summarises `harness.py --probe-facts` runs: per backend and fact, how many models proved
it real, showed it false, or could not isolate it, and each probed-false model with what
the backend did.

    python targets/probes/fact_probes.py RESULTS.json [RESULTS.json ...] > targets/probes/fact_probes.txt
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/backends"))

from report import relative  # noqa: E402


def summarise(paths: list[Path]) -> str:
    counts = defaultdict(lambda: defaultdict(int))  # (backend, fact) -> verdict -> n
    false_rows = defaultdict(list)  # (backend, fact) -> [(model, why)]
    commands = []
    for path in paths:
        report = json.loads(path.read_text())
        commands.append(relative(report.get("command", "")))
        for row in report["rows"]:
            for f in row.get("facts", []):
                key = (row["backend"], f["fact"])
                counts[key][f["verdict"]] += 1
                if f["verdict"] == "probed-false":
                    false_rows[key].append((row["model"], relative(f["why"])))
    lines = ["# Facts probed alone (check --target NAME --probe --allow FACT), per backend", ""]
    lines += [f"# {c}" for c in commands] + [""]
    for backend in sorted({b for b, _ in counts}):
        lines.append(f"== {backend}")
        lines.append(f"{'fact':56s} {'real':>5s} {'false':>5s} {'unproven':>8s}")
        for (b, fact), n in sorted(counts.items()):
            if b != backend:
                continue
            lines.append(f"{fact:56s} {n['probed-real']:5d} {n['probed-false']:5d} {n['unproven']:8d}")
        lines.append("")
        for (b, fact), rows in sorted(false_rows.items()):
            if b != backend:
                continue
            lines.append(f"probed-false: {fact}")
            lines += [f"  {model}: {why}" for model, why in rows]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.stdout.write(summarise([Path(p) for p in sys.argv[1:]]))
