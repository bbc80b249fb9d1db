"""What the ecosystem says about a model file: onnx's full checker and an onnxruntime session.

The leniency table in docs/reliability.md compares onnxsurgeon's load-time verdict on each
catalogue input with these two (scripts/update-leniency-table.py). Both run in a worker
process, because a hostile input may crash or hang them: the worker reads one model path per
line on stdin and answers one JSON line; a worker that dies or does not answer in time is
recorded as such for that model and replaced.

Run as a script it is that worker: `python ecosystem.py` (no arguments)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ACCEPTS = "accepts"
REFUSES = "refuses"
HANGS = "hangs"
CRASHES = "crashes"


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0][:200]


TOOLS = ("checker", "onnxruntime")


def _judge(tool: str, path: str) -> dict[str, str]:
    """{"verdict": accepts|refuses, "why": the first line of the error} of one tool on one model."""
    try:
        if tool == "checker":
            import onnx

            onnx.checker.check_model(path, full_check=True)
        else:
            import onnxruntime as ort

            ort.set_default_logger_severity(4)
            ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 - any refusal is a verdict
        return {"verdict": REFUSES, "why": _first_line(e)}
    return {"verdict": ACCEPTS, "why": ""}


def _worker() -> None:
    for line in sys.stdin:
        tool, path = line.rstrip("\n").split(" ", 1)
        print(json.dumps(_judge(tool, path)), flush=True)


class Ecosystem:
    """Judges model files in a worker process (see the module's doc). Use as a context manager."""

    def __init__(self, timeout: float = 30.0) -> None:
        self.timeout = timeout
        self._proc: subprocess.Popen | None = None

    def __enter__(self) -> Ecosystem:
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    def _stop(self) -> None:
        if self._proc:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def judge(self, model: Path) -> dict[str, dict[str, str]]:
        """{"checker": {...}, "onnxruntime": {...}}: each a verdict and the first line of its error."""
        return {tool: self._ask(tool, model) for tool in TOOLS}

    def _ask(self, tool: str, model: Path) -> dict[str, str]:
        import selectors

        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
            )
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(f"{tool} {model}\n")
        self._proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(self._proc.stdout, selectors.EVENT_READ)
            ready = sel.select(self.timeout)
        line = self._proc.stdout.readline() if ready else ""
        if line:
            return json.loads(line)
        verdict = HANGS if self._proc.poll() is None else CRASHES
        self._stop()  # the next question starts a fresh worker
        return {"verdict": verdict, "why": ""}


if __name__ == "__main__":
    _worker()
