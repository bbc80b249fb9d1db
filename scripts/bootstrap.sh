#!/usr/bin/env bash
# Installs everything onnxsurgeon needs to build and test, idempotently:
#   1. Debian packages (protobuf, abseil, googletest, ccache, toml++, CLI11, nlohmann-json),
#   2. the project virtualenv .venv: requirements-demo.txt for `bootstrap.sh demo` (the CLI
#      and onnxruntime, no torch), requirements-dev.txt (demo set + torch, transformers,
#      pytest) for `bootstrap.sh test`, the default,
#   3. onnx's C++ sources from the PyPI source distribution (scripts/fetch-onnx.sh).
# Each step is skipped when its stamp says it is already done. `--test-tools` installs only
# the Debian tools some tests need (graphviz, chromium).
set -euo pipefail
set_name=${1:-test}
case "$set_name" in
  demo) requirements=(requirements-demo.txt) ;;
  test) requirements=(requirements-demo.txt requirements-dev.txt) ;;
  --test-tools) ;;
  *) echo "bootstrap: unknown set '$set_name' (demo, test or --test-tools)" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

apt_packages=(libprotobuf-dev protobuf-compiler libabsl-dev libgtest-dev libgmock-dev ccache libtomlplusplus-dev libcli11-dev nlohmann-json3-dev)
# --test-tools (make test): graphviz draws the HTML report's graphs, and the report test
# loads the page in a real headless Chromium.
if [ "${1:-}" = "--test-tools" ]; then
  apt_packages=(graphviz chromium)
fi
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

[ "$set_name" = "--test-tools" ] && exit 0

python=${PYTHON:-python3}
# One stamp per set: the test set's stamp covers both files, so a test venv also
# satisfies the demo set, and a demo venv is completed (not rebuilt) by the test set.
stamp=.venv/.requirements-$set_name.sha256
want=$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: preparing .venv ($set_name set: ${requirements[*]})"
  [ -x .venv/bin/python ] || "$python" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r "${requirements[-1]}"
  echo "$want" > "$stamp"
  if [ "$set_name" = test ]; then sha256sum < requirements-demo.txt | cut -d" " -f1 > .venv/.requirements-demo.sha256; fi
fi

bash scripts/fetch-onnx.sh
