"""Seeds for the campaign's scope mutations (fuzz/scope_mutators.py), each with the input
sets it runs on (fuzz/ort_compare.py compares a rewrite with its mutant on them).

Seeds: the five models of tests/python/scope_models.py (every If branch runs), and every
corpus model with subgraphs up to 4 MiB (optimum's merged decoder, the silero VAD with
nested Ifs, ...) with its saved input sets (`NAME.inputs*.npz`, one per branch)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "models" / ".generated"
MAX_BYTES = 4 << 20


@dataclasses.dataclass
class ScopeSeed:
    name: str
    data: bytes
    input_sets: list[dict[str, np.ndarray]]


def _has_subgraphs(g: onnx.GraphProto) -> bool:
    return any(a.HasField("g") or a.graphs for n in g.node for a in n.attribute)


def scope_seeds() -> list[ScopeSeed]:
    sys.path.insert(0, str(ROOT / "tests" / "python"))
    import scope_models

    seeds = [
        ScopeSeed(f"scope-{name}", m.SerializeToString(), scope_models.input_sets(m))
        for name, m in ((name, make()) for name, make in scope_models.MODELS.items())
    ]
    for path in sorted(CORPUS.glob("*.onnx")) if CORPUS.exists() else []:
        if path.stat().st_size > MAX_BYTES:
            continue
        data = path.read_bytes()
        model = onnx.ModelProto()
        model.ParseFromString(data)
        if not _has_subgraphs(model.graph):
            continue
        sets = [dict(np.load(p)) for p in sorted(CORPUS.glob(f"{path.stem}.inputs*.npz"))]
        seeds.append(ScopeSeed(f"corpus-{path.stem}", data, sets))
    return seeds
