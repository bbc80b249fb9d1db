#!/usr/bin/env python3
"""Records what one onnxsurgeon CLI does with every target profile on a corpus, so that a
refactor of the target layer can be shown to change nothing (outputs byte-identical).

    .venv/bin/python bench/target_outputs.py --cli OLD/onnxsurgeon --record before.json [--models REGEX]
    .venv/bin/python bench/target_outputs.py --cli build/onnxsurgeon --compare before.json

Per model and profile (`CLI targets` lists the profiles), it records:
  - `check --target NAME MODEL`: exit code and stdout, with and without --input-shapes
    (the shapes of the model's first input set, tests/models' NAME.inputs.npz);
  - `--target NAME MODEL -o OUT` (with --input-shapes when the model has an input set): exit
    code, the sha256 of every file written (the model and any external data), and stderr (the
    plan or the error, and the op counts; not the timing line);
and once: `targets`, `targets --markdown` and `targets --sources NAME` for every profile.
The model path is replaced by MODEL in the texts, so two checkouts compare equal.

Models: tests/models/.generated/*.onnx (tests/models/generate.py; `make models`), or --corpus
DIR (repeatable). --compare prints every difference and exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(cmd: list[str], timeout: float) -> tuple[int, str, str]:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return -999, "", "timeout"


def input_shapes(model: Path) -> str:
    """NAME:DIMS;... from the model's first input set (none: "")."""
    npz = model.with_suffix(".inputs.npz")
    if not npz.exists():
        return ""
    import numpy as np

    with np.load(npz) as data:
        items = [f"{k}:{'x'.join(str(d) for d in data[k].shape)}" for k in data.files if data[k].ndim > 0]
    return ";".join(items)


def one_model(cli: str, model: Path, profiles: list[str], timeout: float) -> dict:
    shapes = input_shapes(model)
    out: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in profiles:
            row: dict = {}
            scrub = lambda s: s.replace(str(model), "MODEL").replace(tmp, "TMP")  # noqa: E731
            code, so, se = run([cli, "check", "--target", name, str(model)], timeout)
            row["check"] = [code, scrub(so), scrub(se)]
            if shapes:
                code, so, se = run([cli, "check", "--target", name, f"--input-shapes={shapes}", str(model)], timeout)
                row["check_shapes"] = [code, scrub(so), scrub(se)]
            dst = Path(tmp) / "out"
            dst.mkdir()
            cmd = [cli, "--target", name, "-o", str(dst / "out.onnx")]
            if shapes:
                cmd.append(f"--input-shapes={shapes}")  # the option takes several values: '=' ends it
            cmd.append(str(model))
            code, so, se = run(cmd, timeout)
            files = {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(dst.iterdir())}
            # stderr: the plan (or the error) and the op-count summary; the timing line is left out.
            log = [
                line for line in scrub(se).splitlines() if not re.search(r" -> TMP/out/out.onnx in [0-9.]+ s$", line)
            ]
            row["target"] = [code, files, log]
            for f in dst.iterdir():
                f.unlink()
            dst.rmdir()
            out[name] = row
    return out


def record(cli: str, models: list[Path], jobs: int, timeout: float) -> dict:
    code, listing, _ = run([cli, "targets"], timeout)
    profiles = [line.split()[0] for line in listing.splitlines() if line and not line.startswith(" ")]
    result: dict = {"targets": listing, "markdown": run([cli, "targets", "--markdown"], timeout)[1], "sources": {}}
    for name in profiles:
        result["sources"][name] = run([cli, "targets", "--sources", name], timeout)[1]
    result["models"] = {}
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {pool.submit(one_model, cli, m, profiles, timeout): m for m in models}
        for i, f in enumerate(concurrent.futures.as_completed(futures)):
            m = futures[f]
            result["models"][m.name] = f.result()
            print(f"[{i + 1}/{len(models)}] {m.name}", file=sys.stderr, flush=True)
    return result


def diff(a, b, path: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f"{path}/{k}: only in {'after' if k not in a else 'before'}")
            else:
                diff(a[k], b[k], f"{path}/{k}", out)
    elif a != b:
        out.append(f"{path}:\n  before: {json.dumps(a)[:2000]}\n  after:  {json.dumps(b)[:2000]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--record")
    ap.add_argument("--compare")
    ap.add_argument("--corpus", action="append", help="a folder of .onnx models (default tests/models/.generated)")
    ap.add_argument("--models", default="", help="only models whose file name matches this regex")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    if bool(a.record) == bool(a.compare):
        ap.error("give --record FILE or --compare FILE")
    corpora = [Path(c) for c in (a.corpus or [ROOT / "tests" / "models" / ".generated"])]
    models = sorted(m for c in corpora for m in c.glob("*.onnx") if re.search(a.models, m.name))
    result = record(os.path.abspath(a.cli), models, a.jobs, a.timeout)
    n = sum(len(r) for r in result["models"].values())
    if a.record:
        Path(a.record).write_text(json.dumps(result, indent=1, sort_keys=True))
        print(f"recorded {len(models)} models x {len(result['sources'])} profiles ({n} pairs) in {a.record}")
        return 0
    before = json.loads(Path(a.compare).read_text())
    differences: list[str] = []
    diff(before, result, "", differences)
    for d in differences:
        print(d)
    written = sum(1 for r in result["models"].values() for row in r.values() if row["target"][0] == 0)
    print(
        f"{len(models)} models x {len(result['sources'])} profiles: {n} pairs, {written} written by --target; "
        f"{len(differences)} difference(s)"
    )
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
