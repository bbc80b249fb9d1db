#!/usr/bin/env python3
"""Regenerates every generated section of docs/*.md (scripts/generated_docs.py lists them:
the pass reference and descriptions, the profile reference) from the CLI and the files
they are printed from. tests/python/test_docs.py fails while a page is stale.
Usage: scripts/update-docs.py [path/to/onnxsurgeon]   (default build/onnxsurgeon; `make docs`)"""

import sys

from generated_docs import ROOT, update_all

update_all(sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "onnxsurgeon"))
