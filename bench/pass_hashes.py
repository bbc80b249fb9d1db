#!/usr/bin/env python3
"""Byte-identity check of a refactor: every registered pass on every corpus model, output hashed.

    .venv/bin/python bench/pass_hashes.py record --cli OLD/onnxsurgeon --out base.json [--models REGEX] [--jobs 2] [--all-targets]
    .venv/bin/python bench/pass_hashes.py record --cli build/onnxsurgeon --out new.json
    .venv/bin/python bench/pass_hashes.py compare base.json new.json

`record` runs `CLI -q --pass PIPELINE MODEL -o OUT` for every pass `CLI passes --json` lists (at
its defaults) plus EXTRA_PIPELINES (passes whose defaults do little: opset targets, target
profiles; with --all-targets, `target=NAME` for every profile `CLI targets` lists), on every model
of tests/models/.generated (bench/simplify_bench.py's corpus), --jobs at a time, and
writes {pipeline: {model: sha256 of the output | "exit N: last stderr line"}}. The binary is
copied first, so a rebuild during the run does not change what is measured. `compare` prints
every (pipeline, model) whose entry differs and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(os.path.dirname(HERE), "tests", "models", ".generated")
EXTRA_PIPELINES = (
    "convert-opset=13",
    "convert-opset=11",
    "downgrade-opset=15",
    "upgrade-opset=18",
    "target=tflite",
    "target=trt-8.6",
    "target=ort-1.10",
    "target=ncnn",
    "target=rknn2",
)


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def pipelines(cli: str, all_targets: bool) -> list[str]:
    listing = json.loads(subprocess.run([cli, "passes", "--json"], capture_output=True, text=True, check=True).stdout)
    out = [p["name"] for p in listing if p["name"] != "target"] + list(EXTRA_PIPELINES)
    if all_targets:
        text = subprocess.run([cli, "targets"], capture_output=True, text=True, check=True).stdout
        names = [line.split()[0] for line in text.splitlines() if line.strip() and not line[0].isspace()]
        out += [f"target={name}" for name in names if f"target={name}" not in out]
    return out


def run(cli: str, pipeline: str, src: str, dst: str, timeout: float) -> str:
    if os.path.exists(dst):
        os.remove(dst)
    try:
        proc = subprocess.run(
            [cli, "-q", "--pass", pipeline, src, "-o", dst], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout"
    if proc.returncode:
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        return f"exit {proc.returncode}: {tail}"
    return sha256(dst) if os.path.exists(dst) else "no output"


def record(args) -> int:
    models = sorted(
        p
        for p in glob.glob(os.path.join(CORPUS, "*.onnx"))
        if not args.models or re.search(args.models, os.path.basename(p))
    )
    if not models:
        sys.exit(f"no models in {CORPUS} (make models)")
    out: dict[str, dict[str, str]] = {}
    with tempfile.TemporaryDirectory(prefix="pass_hashes.") as tmp:
        cli = os.path.join(tmp, "onnxsurgeon")
        shutil.copy2(args.cli, cli)
        todo = [p for p in pipelines(cli, args.all_targets) if not args.pipelines or re.search(args.pipelines, p)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for pipeline in todo:
                outs = [os.path.join(tmp, f"out{i}.onnx") for i in range(len(models))]
                hashes = pool.map(lambda m, o: run(cli, pipeline, m, o, args.timeout), models, outs)
                row = out.setdefault(pipeline, {})
                for model, digest, dst in zip(models, hashes, outs):
                    row[os.path.basename(model)[:-5]] = digest
                    if os.path.exists(dst):
                        os.remove(dst)
                print(f"  {pipeline}: {len(row)} models", file=sys.stderr, flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
    return 0


def compare(args) -> int:
    a, b = json.load(open(args.a)), json.load(open(args.b))
    differ = same = 0
    for pipeline in sorted(set(a) | set(b)):
        ra, rb = a.get(pipeline, {}), b.get(pipeline, {})
        for model in sorted(set(ra) | set(rb)):
            if ra.get(model) == rb.get(model):
                same += 1
                continue
            differ += 1
            print(f"DIFFER {pipeline} {model}\n  A: {ra.get(model)}\n  B: {rb.get(model)}")
    print(f"{same} identical, {differ} differ ({len(set(a) | set(b))} pipelines)")
    return 1 if differ else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("--cli", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--models", default="", help="only models whose file name matches this regex")
    r.add_argument("--pipelines", default="", help="only pipelines matching this regex")
    r.add_argument("--timeout", type=float, default=300.0)
    r.add_argument("--jobs", type=int, default=1, help="models run at a time")
    r.add_argument("--all-targets", action="store_true", help="also target=NAME for every profile")
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = ap.parse_args(argv)
    return record(args) if args.cmd == "record" else compare(args)


if __name__ == "__main__":
    sys.exit(main())
