#!/usr/bin/env python3
"""Regenerates the profile table in docs/targets.md from the built-in profiles
(`build/onnxsurgeon targets --markdown`) and its condition list from the condition registry
(`targets --conditions --markdown`). tests/python/test_targets.py fails while the
page is stale. Usage: scripts/update-targets-doc.py [path/to/onnxsurgeon]"""

import sys

from generated_docs import main

main(sys.argv, "targets.md", "targets", "targets --conditions")
