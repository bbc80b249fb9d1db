#!/usr/bin/env bash
# `make lint`: the tracked C++ must be what clang-format 16 writes (.clang-format) and the
# tracked Python must pass ruff's checks and formatter (pyproject.toml [tool.ruff]).
# `make format` (this script with --fix) rewrites the files instead. Seconds either way.
# clang-format-16 comes from Debian (the version fuzz/setup-clang.sh installs clang from),
# ruff from requirements-dev.txt into .venv.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = "--fix" ] && fix=1

if ! command -v clang-format-16 >/dev/null; then
  echo "lint: installing clang-format-16"
  sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq clang-format-16 >/dev/null
fi
ruff=.venv/bin/ruff
[ -x "$ruff" ] || { echo "lint: $ruff is missing; run 'make bootstrap' (requirements-dev.txt)" >&2; exit 2; }

mapfile -t cxx < <(git ls-files '*.cc' '*.h')
mapfile -t py < <(git ls-files '*.py')
status=0
if ((fix)); then
  clang-format-16 -i "${cxx[@]}"
  "$ruff" check --fix --quiet "${py[@]}" || status=1
  "$ruff" format --quiet "${py[@]}"
else
  log=$(mktemp)
  if ! clang-format-16 --dry-run -Werror "${cxx[@]}" 2>"$log"; then
    status=1
    awk -F: '/: error:/ { files[$1]++ } END { n = 0; for (f in files) n++;
      print "lint: clang-format would change " n " files (make format fixes them):";
      shown = 0; for (f in files) if (shown++ < 20) print "  " f ": " files[f] " places" }' "$log"
  fi
  rm -f "$log"
  "$ruff" check --quiet --output-format concise "${py[@]}" || status=1
  "$ruff" format --check --quiet --output-format concise "${py[@]}" || { echo "lint: ruff format would change the files above (make format)"; status=1; }
fi
exit $status
