#!/usr/bin/env python3
"""Regenerates the pass reference in docs/passes.md from the pass table, passes/passes.def
(`build/onnxsurgeon passes --markdown`). tests/python/test_docs.py fails while the page is
stale. Usage: scripts/update-pass-docs.py [path/to/onnxsurgeon]"""

import sys

from generated_docs import main

main(sys.argv, "passes.md", "passes")
