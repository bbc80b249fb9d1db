"""The bad-input catalogue: malformed or hostile models and calls, each with the exit code
and the one-line message the CLI must give.

Each module in this package defines `CASES: list[BadInput]`. A case writes its files into
an empty folder and returns the CLI arguments; tests/python/test_bad_inputs.py runs every
case and checks, for each: the exit code is one of `exit_codes` (never a signal), stderr is
one line that contains `message`, no file in the folder was created, changed or removed
(beyond what `may_write` names), and the run ends within the time limit.

Some modules also define `ACCEPTED: list[Accepted]`: models onnx's checker and onnxruntime
accept that onnxsurgeon once refused or mishandled, which it must now accept and rewrite
into a valid model. The leniency table in docs/reliability.md compares onnxsurgeon's
verdict on every input here with onnx's checker and onnxruntime
(scripts/update-leniency-table.py; tests/python/test_leniency.py checks it).
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from pathlib import Path
from typing import Callable


@dataclasses.dataclass(frozen=True)
class BadInput:
    name: str
    # make(folder) writes the inputs into the empty `folder` and returns the CLI argv
    # (without the binary). Paths in argv may be absolute or relative to `folder`
    # (the CLI runs with `folder` as its working directory).
    make: Callable[[Path], list[str]]
    message: str  # a substring of the one-line error on stderr
    exit_codes: tuple[int, ...] = (1,)
    may_write: tuple[str, ...] = ()  # names (relative to folder) a failed run may still touch: normally none
    timeout: float = 20.0
    # Why onnxsurgeon refuses this input although onnx's checker or onnxruntime accepts it
    # (a row of the leniency table); required exactly when one of them accepts it.
    why: str = ""


@dataclasses.dataclass(frozen=True)
class Accepted:
    name: str
    # make(folder) writes the model (and its data files) into the empty `folder` and
    # returns the model's path relative to it.
    make: Callable[[Path], str]
    what: str  # what onnxsurgeon does with it: the leniency table's last column


def _collect(attribute: str) -> list:
    """`attribute` of every module in this package, in module then list order."""
    cases: list = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, attribute, []))
    names = [c.name for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"case names must be unique: {sorted(duplicates)}"
    return cases


def all_cases() -> list[BadInput]:
    """Every bad input of every module in this package, in module then list order."""
    return _collect("CASES")


def all_accepted() -> list[Accepted]:
    """Every model onnxsurgeon must accept (the ACCEPTED lists), in module then list order."""
    return _collect("ACCEPTED")


def input_model(argv: list[str]) -> str:
    """The input model of a case's CLI arguments: the first positional one."""
    args = [str(a) for a in argv]
    return args[1] if args[0] in ("inspect", "check") else args[0]
