"""Seeds for the campaign's scope mutations (fuzz/scope_mutators.py), each with the input
sets it runs on, and the comparison of a rewrite with its mutant in onnxruntime.

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


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True))
    return bool(np.array_equal(a, b))


def differs(source: Path, output: Path, input_sets: list[dict[str, np.ndarray]]) -> tuple[int, str | None]:
    """(how many input sets were compared, why the rewrite computes something else than its
    input on them, or None). Input sets the input itself does not run are skipped."""
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    try:
        before = ort.InferenceSession(str(source), providers=["CPUExecutionProvider"])
    except Exception:
        return 0, None
    after, compared = None, 0
    for k, feeds in enumerate(input_sets):
        try:
            want = dict(zip([o.name for o in before.get_outputs()], before.run(None, feeds)))
        except Exception:
            continue
        try:
            after = after or ort.InferenceSession(str(output), providers=["CPUExecutionProvider"])
            got = dict(zip([o.name for o in after.get_outputs()], after.run(None, feeds)))
        except Exception as e:
            return compared, f"input set {k}: the rewrite fails where the input runs: {str(e).splitlines()[0][:200]}"
        compared += 1
        for name, value in want.items():
            if name not in got or not _close(np.asarray(value), np.asarray(got[name])):
                return compared, f"input set {k}: output '{name}' differs"
    return compared, None
