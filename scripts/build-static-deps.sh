#!/usr/bin/env bash
# Builds protobuf (libprotobuf only) and abseil as static, position-independent archives for
# the self-contained wheel (`pip install .`, `make wheel-check`), and prints their install
# prefix on stdout (everything else goes to stderr).
#
# Why: the wheel links protobuf and abseil into the Python extension and the CLI, so it runs
# without Debian's libprotobuf32 / libabsl20220623. Debian ships libprotobuf.a and
# libabsl_*.a, but built without -fPIC (local-exec TLS relocations, R_X86_64_TPOFF32), which
# the linker refuses in a shared object such as the extension.
#
# What: the exact Debian source packages of the installed libprotobuf-dev and libabsl-dev
# (`apt-get source`, Debian's patches applied, so the headers and absl/base/options.h match
# the development build), configured as Debian configures them plus
# CMAKE_POSITION_INDEPENDENT_CODE=ON, compiled through ccache, installed into
# ~/.cache/onnxsurgeon/static-deps/<versions> (ONNXSURGEON_STATIC_DEPS_CACHE overrides the
# folder) and reused by every later build. protoc is not rebuilt: Debian's
# protobuf-compiler is the same version.
#
# `apt-get source` needs deb-src lines; when none is configured this adds
# /etc/apt/sources.list.d/onnxsurgeon-deb-src.sources (the same mirrors as the deb lines)
# and runs apt-get update, which needs root or sudo.
set -euo pipefail
log() { echo "build-static-deps: $*" >&2; }

source_version() {  # the Debian source version a binary package was built from
  dpkg-query -W -f='${source:Version}' "$1" 2>/dev/null || true
}
pb_version=$(source_version libprotobuf-dev)
absl_version=$(source_version libabsl-dev)
if [ -z "$pb_version" ] || [ -z "$absl_version" ]; then
  log "libprotobuf-dev and libabsl-dev must be installed (scripts/bootstrap.sh installs them)"
  exit 1
fi
cache=${ONNXSURGEON_STATIC_DEPS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/onnxsurgeon/static-deps}
prefix="$cache/protobuf-${pb_version}_abseil-${absl_version}"
if [ -f "$prefix/.complete" ]; then
  echo "$prefix"
  exit 0
fi

sudo_cmd=(); [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
has_source() { apt-cache showsrc "$1" 2>/dev/null | grep -qx "Version: $2"; }
if ! has_source protobuf "$pb_version" || ! has_source abseil "$absl_version"; then
  list=/etc/apt/sources.list.d/onnxsurgeon-deb-src.sources
  log "no deb-src entry for protobuf $pb_version / abseil $absl_version: adding $list"
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null; then
    log "adding deb-src lines needs root or sudo; add them by hand (Types: deb-src in /etc/apt/sources.list.d/) and run apt-get update"
    exit 1
  fi
  # Same mirrors and suites as the deb entries already configured (deb822 or one-line).
  entries=$(python3 - <<'PY'
import glob, re
seen = set()
for path in glob.glob("/etc/apt/sources.list.d/*.sources") + ["/etc/apt/sources.list.d/debian.sources"]:
    try:
        text = open(path).read()
    except OSError:
        continue
    for stanza in re.split(r"\n\s*\n", text):
        f = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
        if "deb" in f.get("Types", "").split() and "debian" in f.get("URIs", ""):
            seen.add((f["URIs"], f.get("Suites", ""), f.get("Components", "main"), f.get("Signed-By", "")))
for path in ["/etc/apt/sources.list"] + glob.glob("/etc/apt/sources.list.d/*.list"):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        m = re.match(r"^deb\s+(\[[^]]*\]\s+)?(\S+)\s+(\S+)\s+(.*)$", line.strip())
        if m and "debian" in m.group(2):
            seen.add((m.group(2), m.group(3), m.group(4), ""))
for uris, suites, comps, key in sorted(seen):
    print("Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s" % (uris, suites, comps))
    if key:
        print("Signed-By: %s" % key)
    print()
PY
)
  [ -n "$entries" ] || { log "no Debian deb entries found in /etc/apt to mirror as deb-src"; exit 1; }
  printf '%s\n' "$entries" | "${sudo_cmd[@]}" tee "$list" >/dev/null
  "${sudo_cmd[@]}" apt-get update -qq >&2
  for pkg in "protobuf $pb_version" "abseil $absl_version"; do
    set -- $pkg
    has_source "$1" "$2" || { log "Debian's archive has no source package $1 $2 (apt-cache showsrc $1)"; exit 1; }
  done
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/onnxsurgeon-static-deps.XXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
log "fetching Debian sources protobuf $pb_version, abseil $absl_version"
# apt verifies the files against the signed Release file; dpkg-source applies Debian's patches.
apt-get source -qq --download-only "protobuf=$pb_version" "abseil=$absl_version" >/dev/null 2>&1 ||
  apt-get source -q --download-only "protobuf=$pb_version" "abseil=$absl_version" >&2
for dsc in protobuf_*.dsc abseil_*.dsc; do
  dpkg-source -q -x "$dsc" >/dev/null 2>&1 || dpkg-source -x "$dsc" >&2
done
pb_src=$(ls -d protobuf-*/) absl_src=$(ls -d abseil-*/)

generator=(); command -v ninja >/dev/null && ninja --version >/dev/null 2>&1 && generator=(-G Ninja)
launcher=(); command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
export CCACHE_BASEDIR="$work" CCACHE_NOHASHDIR=1  # the temporary folder's name must not miss the cache
jobs=${JOBS:-$(nproc)}
staging="$prefix.partial"
rm -rf "$staging"
common=("${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_POSITION_INDEPENDENT_CODE=ON
        -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$staging" -DCMAKE_INSTALL_LIBDIR=lib)

t0=$(date +%s)
log "abseil: configure + build (C++17, as debian/rules)"
cmake -S "$absl_src" -B absl-build "${common[@]}" -DCMAKE_CXX_STANDARD=17 -DABSL_PROPAGATE_CXX_STD=ON >&2
cmake --build absl-build -j"$jobs" >&2
cmake --install absl-build >/dev/null

log "protobuf: configure + build libprotobuf and -lite (no protoc, no zlib)"
# debian/rules builds with autotools; upstream's CMake project (cmake/) builds the same library.
cmake -S "$pb_src/cmake" -B pb-build "${common[@]}" -Dprotobuf_BUILD_TESTS=OFF \
  -Dprotobuf_BUILD_PROTOC_BINARIES=OFF -Dprotobuf_BUILD_LIBPROTOC=OFF -Dprotobuf_WITH_ZLIB=OFF \
  -Dprotobuf_BUILD_SHARED_LIBS=OFF -Dprotobuf_INSTALL=ON >&2
cmake --build pb-build -j"$jobs" >&2
cmake --install pb-build >/dev/null

rm -rf "$prefix"
mv "$staging" "$prefix"
printf 'protobuf %s\nabseil %s\nbuilt in %s s\n' "$pb_version" "$absl_version" "$(( $(date +%s) - t0 ))" > "$prefix/.complete"
log "installed into $prefix in $(( $(date +%s) - t0 )) s"
echo "$prefix"
