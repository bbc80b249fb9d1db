#!/usr/bin/env bash
# Fetches onnx's source distribution from PyPI (same version as the Python onnx pin in
# requirements-dev.txt), checks its sha256 and unpacks it to third_party/onnx-<version>.
# The sources are never committed; third_party/ is ignored.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version=$(sed -n 's/^onnx==\([0-9.]*\).*/\1/p' "$root/requirements-dev.txt")
sha256_expected=$(sed -n "s/^onnx-$version.tar.gz \([0-9a-f]*\)$/\1/p" "$root/scripts/onnx-sdist.sha256")
dest="$root/third_party/onnx-$version"
[ -f "$dest/CMakeLists.txt" ] && exit 0
[ -n "$sha256_expected" ] || { echo "fetch-onnx: no sha256 recorded for onnx-$version in scripts/onnx-sdist.sha256" >&2; exit 1; }
mkdir -p "$root/third_party"
tarball="$root/third_party/onnx-$version.tar.gz"
if [ ! -f "$tarball" ]; then
  echo "fetch-onnx: downloading onnx-$version source distribution"
  # The simple index is what pip itself reads; `pip download --no-binary` would build
  # cmake from source just to prepare metadata, so read the link directly.
  "${PYTHON:-python3}" - "$version" "$tarball.part" <<'PY'
import re, sys, urllib.request
version, out = sys.argv[1], sys.argv[2]
html = urllib.request.urlopen("https://pypi.org/simple/onnx/", timeout=120).read().decode()
m = re.search(r'href="([^"#]*/onnx-%s\.tar\.gz)' % re.escape(version), html)
if not m:
    sys.exit("fetch-onnx: onnx-%s.tar.gz not on the index" % version)
with urllib.request.urlopen(m.group(1), timeout=600) as r, open(out, "wb") as f:
    while chunk := r.read(1 << 20):
        f.write(chunk)
PY
  mv "$tarball.part" "$tarball"
fi
echo "$sha256_expected  $tarball" | sha256sum -c --quiet - || { rm -f "$tarball"; echo "fetch-onnx: sha256 mismatch" >&2; exit 1; }
tmp=$(mktemp -d "$root/third_party/.unpack.XXXX")
tar -xzf "$tarball" -C "$tmp"
mv "$tmp/onnx-$version" "$dest"
rmdir "$tmp"
