"""The quantized and float16 corpus for the real backends: every form of
tests/python/quant_models.py on each of its architectures (onnxruntime's quantizers on torch
exports), the float originals, and onnxconverter-common's float16 of each float original
with and without keep_io_types (run in the skl exporter venv, scripts/exporter-venv.sh skl).
Each model is written as the harness reads a corpus: NAME.onnx, NAME.inputs.npz and
NAME.json with the model's tolerance (a few quantization steps of the output's range at
the form's narrowest type; 1e-2 of it for float16), so a backend that computes the same
quantized arithmetic with its own rounding is judged within a step or two:

    python tests/backends/quant_corpus.py build/backends/quant-corpus
    python tests/backends/harness.py --backends ort-1.10 --corpus build/backends/quant-corpus \\
        --out build/backends/quant-ort-1.10
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import quant_models as qm  # noqa: E402

SKL_PYTHON = Path(os.environ.get("ONNXSURGEON_SKL_PYTHON", Path.home() / ".cache/onnxsurgeon/venv-skl/bin/python"))
# Share of the output's largest magnitude a backend may differ by, per narrowest bit width.
STEPS = {16: 2e-3, 8: 3e-2, 4: 3e-2, "fp16": 1e-2, "float": 0.0}

FP16 = """
import sys, onnx
from onnxconverter_common import float16
model = float16.convert_float_to_float16(onnx.load(sys.argv[1]), keep_io_types=sys.argv[3] == "1")
onnx.save(model, sys.argv[2])
"""


def _reference_span(path: Path, feeds: dict) -> float:
    import onnxruntime as ort

    outputs = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    return max(float(np.max(np.abs(o.astype(np.float64)))) for o in outputs) or 1.0


def _write(out: Path, name: str, src: Path, feeds: dict, kind) -> None:
    target = out / f"{name}.onnx"
    if src != target:
        target.write_bytes(src.read_bytes())
    np.savez(out / f"{name}.inputs.npz", **feeds)
    atol = STEPS[kind] * _reference_span(target, feeds)
    manifest = {"rtol": 1e-2 if kind == "fp16" else 1e-4, "atol": max(atol, 1e-4), "form": name.split(".", 1)[1]}
    (out / f"{name}.json").write_text(json.dumps(manifest, indent=1) + "\n")


def build(out: Path) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    work.mkdir(exist_ok=True)
    names = []
    for arch in qm.ARCHS:
        feeds = qm.inputs(arch)[0]
        src = qm.export_float(arch, work)
        _write(out, f"quant_{arch}.float", src, feeds, "float")
        names.append(f"quant_{arch}.float")
        for form in qm.FORMS:
            path = qm.build(arch, form, work)
            if path is None:
                continue
            _write(out, f"quant_{arch}.{form}", path, feeds, qm.BITS.get(form, 8))
            names.append(f"quant_{arch}.{form}")
        if not SKL_PYTHON.is_file():
            print(f"quant_corpus: no {SKL_PYTHON}: float16 forms skipped", file=sys.stderr)
            continue
        for keep, suffix in ((True, "fp16-keep-io"), (False, "fp16")):
            dst = work / f"{arch}.{suffix}.onnx"
            subprocess.run([str(SKL_PYTHON), "-c", FP16, str(src), str(dst), "1" if keep else "0"], check=True)
            half = feeds if keep else {k: v.astype(np.float16) for k, v in feeds.items()}
            _write(out, f"quant_{arch}.{suffix}", dst, half, "fp16")
            names.append(f"quant_{arch}.{suffix}")
    return names


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: quant_corpus.py OUT_DIR")
    for n in build(Path(sys.argv[1])):
        print(n)
