#!/usr/bin/env bash
# Installs everything onnxsurgeon needs to build and test, idempotently:
#   1. Debian packages (protobuf, abseil, googletest, ccache, toml++),
#   2. the project virtualenv .venv with requirements-dev.txt,
#   3. onnx's C++ sources from the PyPI source distribution (scripts/fetch-onnx.sh).
# Each step is skipped when its stamp says it is already done.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

apt_packages=(libprotobuf-dev protobuf-compiler libabsl-dev libgtest-dev libgmock-dev ccache libtomlplusplus-dev)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "bootstrap: installing Debian packages: ${missing[*]}"
  sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
stamp=.venv/.requirements.sha256
want=$(sha256sum requirements-dev.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: preparing .venv"
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi

bash scripts/fetch-onnx.sh
