#!/usr/bin/env bash
# `make bench`: builds the ~500 MB benchmark models (skipped when up to date), then runs the
# load -> save round-trip benchmark and rewrites its section of docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
"$PY" bench/make_large_model.py
"$PY" bench/roundtrip.py --write-docs --command "make bench" "$@"
