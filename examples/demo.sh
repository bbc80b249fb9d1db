#!/usr/bin/env bash
# `make demo`: the headline job on examples/custom_layernorm.onnx, a torch export whose
# LayerNorm is a custom-domain node that onnxruntime refuses.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cli="$root/build/onnxsurgeon"
py="$root/.venv/bin/python"
in="$root/examples/custom_layernorm.onnx"
out_dir="$root/examples/out"
mkdir -p "$out_dir"
out="$out_dir/fixed.onnx"
# Custom_LayerNorm -> LayerNormalization, then the whole model to opset 15 (rknn-toolkit2,
# TensorRT 8, onnxruntime mobile), where LayerNormalization becomes its decomposition.
pipeline="${DEMO_PIPELINE:-fix-layernorm,downgrade-opset=15}"

echo "== onnxsurgeon inspect $(basename "$in")"
"$cli" inspect "$in"
echo
echo "== onnxsurgeon --pass $pipeline $(basename "$in") -o examples/out/fixed.onnx"
"$cli" --pass "$pipeline" --report text "$in" -o "$out"
echo
echo "== op histogram before -> after"
"$py" - "$cli" "$in" "$out" <<'PY'
import json, subprocess, sys
cli, before_path, after_path = sys.argv[1:]
def hist(path):
    report = subprocess.run([cli, "inspect", "--json", path], capture_output=True, text=True, check=True)
    return json.loads(report.stdout)["op_histogram"]
before, after = hist(before_path), hist(after_path)
for op in sorted(set(before) | set(after)):
    print(f"  {op:28s} {before.get(op, 0):3d} -> {after.get(op, 0):3d}")
PY
echo
echo "== onnxruntime"
"$py" "$root/examples/check_demo.py" "$in"
"$py" "$root/examples/check_demo.py" "$out" --must-run
