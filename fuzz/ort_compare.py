"""Compares a rewrite with its input in onnxruntime, for the mutation campaign's scope
mutants (which compute what their seed computes on the seed's input sets).

onnxruntime runs in a worker process: a model may crash it (the campaign found one that
does), and a crash must be a finding, not the end of the campaign. The semantics are judged
with onnxruntime's graph optimizations off, so that a defect of its optimizers does not
read as onnxsurgeon computing something else; a rewrite that only fails with them on (and
whose input runs with them on) is reported apart, as `ort_optimizer`.

Run as a script it is the worker: one request per line on stdin, `MODEL INPUTS.npz LEVEL
OUTPUTS.npz`, one JSON answer per line: the input sets that ran, and the first error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

CRASHED = "onnxruntime crashed"


def _run(model: str, inputs: str, level: str, outputs: str) -> dict:
    import onnxruntime as ort

    ort.set_default_logger_severity(4)
    options = ort.SessionOptions()
    options.graph_optimization_level = getattr(ort.GraphOptimizationLevel, level)
    try:
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - any failure is an answer
        return {"ran": [], "error": str(e).splitlines()[0][:300]}
    sets = _unpack(dict(np.load(inputs)))
    names = [o.name for o in session.get_outputs()]
    ran, results, error = [], {}, ""
    for k, feeds in enumerate(sets):
        try:
            values = session.run(None, feeds)
        except Exception as e:  # noqa: BLE001
            error = error or f"input set {k}: {str(e).splitlines()[0][:300]}"
            continue
        ran.append(k)
        results.update({f"{k}/{n}": np.asarray(v) for n, v in zip(names, values)})
    np.savez(outputs, **results)
    return {"ran": ran, "error": error}


def _unpack(flat: dict[str, np.ndarray]) -> list[dict[str, np.ndarray]]:
    sets: dict[int, dict[str, np.ndarray]] = {}
    for key, value in flat.items():
        k, name = key.split("/", 1)
        sets.setdefault(int(k), {})[name] = value
    return [sets[k] for k in sorted(sets)]


def _worker() -> None:
    for line in sys.stdin:
        print(json.dumps(_run(*line.rstrip("\n").split("\t"))), flush=True)


class Comparator:
    """Runs models in onnxruntime in a worker process, replaced when it dies."""

    def __init__(self, folder: Path, timeout: float = 120.0) -> None:
        self.folder, self.timeout = folder, timeout
        self._proc: subprocess.Popen | None = None
        self._inputs: dict[int, Path] = {}

    def close(self) -> None:
        if self._proc:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def _inputs_file(self, input_sets: list[dict[str, np.ndarray]]) -> Path:
        key = id(input_sets)
        if key not in self._inputs:
            path = self.folder / f"inputs-{len(self._inputs)}.npz"
            np.savez(path, **{f"{k}/{n}": v for k, s in enumerate(input_sets) for n, v in s.items()})
            self._inputs[key] = path
        return self._inputs[key]

    def run(self, model: Path, input_sets, level: str) -> tuple[dict[str, np.ndarray], list[int], str]:
        """(outputs keyed 'set/name', the sets that ran, the first error or CRASHED)."""
        import selectors

        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        outputs = self.folder / "outputs.npz"
        outputs.unlink(missing_ok=True)
        self._proc.stdin.write(f"{model}\t{self._inputs_file(input_sets)}\t{level}\t{outputs}\n")
        self._proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            line = self._proc.stdout.readline() if sel.select(self.timeout) else ""
        if not line:
            self.close()
            return {}, [], CRASHED
        answer = json.loads(line)
        return (dict(np.load(outputs)) if outputs.exists() else {}), answer["ran"], answer["error"]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind in "fc":
        return bool(np.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True))
    return bool(np.array_equal(a, b))


def compare(cmp: Comparator, source: Path, output: Path, input_sets) -> tuple[int, str | None, str | None]:
    """(input sets compared, why the rewrite computes something else or None, why it fails
    only under onnxruntime's optimizers or None). Sets the input does not run are skipped."""
    want, ran, _ = cmp.run(source, input_sets, "ORT_DISABLE_ALL")
    if not ran:
        return 0, None, None
    got, ran_after, error = cmp.run(output, input_sets, "ORT_DISABLE_ALL")
    for k in ran:
        if k not in ran_after:
            return 0, f"the rewrite fails where the input runs: {error}", None
        for key in (key for key in want if key.startswith(f"{k}/")):
            if key not in got or not _close(want[key], got[key]):
                return len(ran), f"input set {k}: output '{key.split('/', 1)[1]}' differs", None
    _, optimized, error = cmp.run(output, input_sets, "ORT_ENABLE_ALL")
    if set(ran) - set(optimized):
        _, source_optimized, _ = cmp.run(source, input_sets, "ORT_ENABLE_ALL")
        if set(ran) <= set(source_optimized):
            return len(ran), None, f"only with onnxruntime's graph optimizations on: {error}"
    return len(ran), None, None


if __name__ == "__main__":
    _worker()
