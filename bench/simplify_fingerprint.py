#!/usr/bin/env python3
"""What `simplify` writes, as a fingerprint: per corpus model, the node count and the sha256 of
the output bytes of `onnxsurgeon --pass simplify IN -o OUT` (and of `simplify(skip=cse;fuse-conv-bn,
size-limit=64)`, which exercises the options), plus the best whole-process time of N runs.
Use it to prove a change to the simplify machinery is a refactoring: record with one binary,
compare with another.

    python3 bench/simplify_fingerprint.py --cli OLD_BINARY --write before.json
    python3 bench/simplify_fingerprint.py --cli build/onnxsurgeon --compare before.json
    python3 bench/simplify_fingerprint.py --cli build/onnxsurgeon --time-against OLD_BINARY --repeat 7

--time-against times `--pass simplify` with both binaries, alternating run by run on each model
(so load on a shared machine hits both alike), and prints the sums of the per-model best times.

Models: tests/models/.generated/*.onnx (the torch/transformers corpus; tests/models/generate.py).
--compare exits 1 when any count or digest differs and prints both times (sum of the per-model
best of --repeat runs).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import onnx

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = {"default": "simplify", "options": "simplify(skip=cse;fuse-conv-bn, size-limit=64)"}


def count_nodes(model: onnx.ModelProto) -> int:
    def graph_nodes(g: onnx.GraphProto) -> int:
        n = 0
        for node in g.node:
            n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    n += graph_nodes(a.g)
                n += sum(graph_nodes(s) for s in a.graphs)
        return n

    return graph_nodes(model.graph) + sum(len(f.node) for f in model.functions)


def run(cli: str, pipeline: str, src: Path, dst: Path) -> tuple[float, bool]:
    start = time.perf_counter()
    proc = subprocess.run([cli, "-q", "--pass", pipeline, str(src), "-o", str(dst)], capture_output=True, text=True)
    return time.perf_counter() - start, proc.returncode == 0


def fingerprint(cli: str, models: list[Path], repeat: int) -> dict:
    out: dict = {"models": {}, "seconds": 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        for src in models:
            entry = {}
            for key, pipeline in PIPELINES.items():
                dst = Path(tmp) / f"{src.stem}.{key}.onnx"
                times = []
                ok = True
                for _ in range(repeat if key == "default" else 1):
                    dst.unlink(missing_ok=True)
                    seconds, ok = run(cli, pipeline, src, dst)
                    times.append(seconds)
                if not ok:
                    entry[key] = {"error": True}
                    continue
                data = dst.read_bytes()
                entry[key] = {
                    "nodes": count_nodes(onnx.load_from_string(data)),
                    "sha256": hashlib.sha256(data).hexdigest(),
                }
                if key == "default":
                    entry[key]["seconds"] = min(times)
                    out["seconds"] += min(times)
            out["models"][src.name] = entry
    return out


def time_against(cli: str, other: str, models: list[Path], repeat: int) -> int:
    best = {cli: 0.0, other: 0.0}
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "out.onnx"
        for src in models:
            times: dict = {cli: [], other: []}
            for _ in range(repeat):
                for binary in (other, cli):
                    dst.unlink(missing_ok=True)
                    times[binary].append(run(binary, "simplify", src, dst)[0])
            for binary in best:
                best[binary] += min(times[binary])
    print(
        f"{len(models)} models, simplify, sum of per-model best of {repeat} (alternating runs): "
        f"{other}: {best[other]:.3f} s; {cli}: {best[cli]:.3f} s ({best[cli] / best[other] - 1:+.1%})"
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", default=str(ROOT / "build" / "onnxsurgeon"))
    ap.add_argument("--corpus", default=str(ROOT / "tests" / "models" / ".generated"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write")
    ap.add_argument("--compare")
    ap.add_argument("--time-against")
    args = ap.parse_args()
    models = sorted(Path(args.corpus).glob("*.onnx"))
    if not models:
        print(f"no models in {args.corpus}: run tests/models/generate.py", file=sys.stderr)
        return 2
    if args.time_against:
        return time_against(args.cli, args.time_against, models, args.repeat)
    result = fingerprint(args.cli, models, args.repeat)
    if args.write:
        Path(args.write).write_text(json.dumps(result, indent=1, sort_keys=True))
    if not args.compare:
        print(f"{len(models)} models, simplify total {result['seconds']:.2f} s (best of {args.repeat} per model)")
        return 0
    before = json.loads(Path(args.compare).read_text())
    differ = []
    for name, entry in result["models"].items():
        old = before["models"].get(name)
        for key in PIPELINES:
            a = (old or {}).get(key, {})
            b = entry[key]
            if {k: v for k, v in a.items() if k != "seconds"} != {k: v for k, v in b.items() if k != "seconds"}:
                differ.append(f"{name} [{key}]: {a} -> {b}")
    nodes_before = sum(e["default"].get("nodes", 0) for e in before["models"].values())
    nodes_after = sum(e["default"].get("nodes", 0) for e in result["models"].values())
    print(
        f"{len(models)} models x {len(PIPELINES)} pipelines: {len(differ)} differ; "
        f"nodes after simplify {nodes_before} -> {nodes_after}; "
        f"simplify time (sum of per-model best of {args.repeat}) {before['seconds']:.2f} s -> {result['seconds']:.2f} s"
    )
    for line in differ:
        print("  " + line)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
