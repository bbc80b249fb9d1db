"""Writes the fuzz seed corpora from the project's test models (docs/reliability.md):

  text_fuzzer/      the ONNX text of every golden test input (tests/golden)
  load_fuzzer/      those models serialized, the example models, the small corpus models
                    (tests/models/.generated) and onnx's backend node-test models
  pipeline_fuzzer/  the same models, each prefixed with a pass list (fuzz/pipeline_input.h):
                    a golden test's own pipeline, otherwise passes picked from the model's hash

Usage: python fuzz/make_seeds.py --out build-asan/fuzz/seeds [--cli build/onnxsurgeon]
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import onnx.parser

ROOT = Path(__file__).resolve().parents[1]
MAX_BYTES = 256 * 1024  # larger models slow the fuzzer down more than they add coverage
PASS_LINE = re.compile(r"^  ([a-z0-9-]+)\s")


def golden_cases() -> list[tuple[str, str, str]]:
    """(name, pipeline, input text) of every golden test."""
    out = []
    for path in sorted((ROOT / "tests" / "golden").rglob("*.txt")):
        pipeline, text, section = "", [], None
        for line in path.read_text().splitlines():
            if line.startswith("pipeline:") and section is None:
                pipeline = line[len("pipeline:") :].strip()
            elif line == "--- input":
                section = "input"
            elif line.startswith("--- "):  # expected, contains, absent
                section = line[4:]
            elif section == "input":
                text.append(line)
        out.append((f"{path.parent.name}-{path.stem}", pipeline, "\n".join(text)))
    return out


def pass_table(cli: Path) -> list[str]:
    """Pass names in table order (`onnxsurgeon passes` lists them so)."""
    listing = subprocess.run([str(cli), "passes"], capture_output=True, text=True, check=True).stdout
    names = []
    for line in listing.splitlines():
        m = re.match(r"^([a-z][a-z0-9-]*)\b", line)
        if m and m.group(1) not in names:
            names.append(m.group(1))
    return names


def pipeline_prefix(names: list[str], table: list[str], key: bytes) -> bytes:
    indices = [table.index(n) for n in names if n in table][:4]
    if not indices:  # no usable pipeline: pick 1-4 passes from the key's hash
        h = hashlib.sha256(key).digest()
        indices = [b % len(table) for b in h[1 : 1 + h[0] % 4 + 1]]
    return bytes([len(indices) - 1, *indices])


def model_files() -> list[tuple[str, bytes]]:
    files = []
    for path in sorted((ROOT / "examples").glob("*.onnx")):
        files.append((f"example-{path.stem}", path.read_bytes()))
    corpus = ROOT / "tests" / "models" / ".generated"
    for path in sorted(corpus.rglob("*.onnx")) if corpus.exists() else []:
        if path.stat().st_size <= MAX_BYTES:
            files.append((f"corpus-{path.stem}", path.read_bytes()))
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    try:
        import backend_node_cases

        for path in sorted(backend_node_cases.node_test_dir().glob("*/model.onnx")):
            if path.stat().st_size <= MAX_BYTES:
                files.append((f"node-{path.parent.name}", path.read_bytes()))
    except Exception as e:  # the seeds are still useful without them
        print(f"make_seeds: no backend node tests ({e})", file=sys.stderr)
    return files


def scope_files() -> list[tuple[str, bytes]]:
    """The scope models (tests/python/scope_models.py) and one scope mutant of each kind per
    small seed with subgraphs (fuzz/scope_mutators.py): names reused across scopes."""
    import random

    import scope_mutators
    from scope_seeds import scope_seeds

    files = []
    rng = random.Random(0)
    for seed in scope_seeds():
        if len(seed.data) > MAX_BYTES:
            continue
        if seed.name.startswith("scope-"):
            files.append((seed.name, seed.data))
        for kind in sorted(scope_mutators.MUTATORS):
            m = onnx.ModelProto()
            m.ParseFromString(seed.data)
            if scope_mutators.mutate(m, rng, kind):
                files.append((f"{seed.name}-{kind}", m.SerializeToString()))
    return files


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cli", type=Path, default=ROOT / "build-asan" / "onnxsurgeon")
    args = ap.parse_args()
    table = pass_table(args.cli)
    dirs = {t: args.out / t for t in ("load_fuzzer", "text_fuzzer", "pipeline_fuzzer")}
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)

    for name, pipeline, text in golden_cases():
        (dirs["text_fuzzer"] / name).write_text(text)
        try:
            data = onnx.parser.parse_model(text).SerializeToString()
        except Exception:
            continue  # golden inputs that exercise the parser's error paths
        (dirs["load_fuzzer"] / name).write_bytes(data)
        names = [item.split("=")[0].split("(")[0].strip() for item in pipeline.split(",")]
        (dirs["pipeline_fuzzer"] / name).write_bytes(pipeline_prefix(names, table, data) + data)

    for name, data in model_files() + scope_files():
        (dirs["load_fuzzer"] / name).write_bytes(data)
        (dirs["pipeline_fuzzer"] / name).write_bytes(pipeline_prefix([], table, data) + data)
        (dirs["pipeline_fuzzer"] / f"{name}-simplify").write_bytes(pipeline_prefix(["simplify"], table, data) + data)

    for t, d in dirs.items():
        print(f"make_seeds: {t}: {sum(1 for _ in d.iterdir())} seeds in {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
