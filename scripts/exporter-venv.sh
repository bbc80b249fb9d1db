#!/usr/bin/env bash
# Creates (or reuses) the virtualenv of one non-torch exporter stack and prints its path:
#   scripts/exporter-venv.sh tf|jax|paddle|jax2tf|optimum|skl|hf430
# TensorFlow, JAX and PaddlePaddle pin numpy/protobuf/onnx versions that fight torch's
# and each other's, so each lives in its own venv, never in the project's .venv.  The
# venvs sit outside the clone, in ${ONNXSURGEON_CACHE:-${XDG_CACHE_HOME:-~/.cache}/onnxsurgeon},
# so that a fresh clone (CI) reuses them; a venv is rebuilt when its pinned requirements
# (tests/models/exporters/requirements-KIND.txt) change.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind=${1:?usage: exporter-venv.sh tf|jax|paddle|jax2tf|optimum|skl|hf430}
requirements="$root/tests/models/exporters/requirements-$kind.txt"
[ -f "$requirements" ] || { echo "exporter-venv: unknown exporter '$kind' (no $requirements)" >&2; exit 2; }
cache=${ONNXSURGEON_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxsurgeon}
venv="$cache/venv-$kind"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "exporter-venv: preparing $venv" >&2
  # The stamp is written last: an interrupted install is redone, not trusted.
  rm -rf "$venv"
  mkdir -p "$cache"
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip >&2
  "$venv/bin/python" -m pip install -q -r "$requirements" >&2
  echo "$want" > "$venv/.requirements.sha256"
fi
echo "$venv"
