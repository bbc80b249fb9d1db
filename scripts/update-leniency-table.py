#!/usr/bin/env python3
"""Regenerates the leniency table in docs/reliability.md: what onnxsurgeon refuses that
onnx's checker or onnxruntime accepts, and why (tests/python/bad_inputs/leniency_table.py
says how each verdict is reached). tests/python/test_leniency.py fails while the page is
stale. Usage: scripts/update-leniency-table.py [path/to/onnxsurgeon]"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "python"))

from bad_inputs import leniency_table  # noqa: E402

cli = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "onnxsurgeon"
doc = ROOT / "docs" / "reliability.md"
doc.write_text(leniency_table.replace_section(doc.read_text(), leniency_table.table(leniency_table.judge_all(cli))))
print(f"updated {doc}")
