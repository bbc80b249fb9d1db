"""The bad-input catalogue: malformed or hostile models and calls, each with the exit code
and the one-line message the CLI must give (issue 12).

Each module in this package defines `CASES: list[BadInput]`. A case writes its files into
an empty folder and returns the CLI arguments; tests/python/test_bad_inputs.py runs every
case and checks, for each: the exit code is one of `exit_codes` (never a signal), stderr is
one line that contains `message`, no file in the folder was created, changed or removed
(beyond what `may_write` names), and the run ends within the time limit.
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


def all_cases() -> list[BadInput]:
    """Every case of every module in this package, in module then list order."""
    cases: list[BadInput] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, "CASES", []))
    names = [c.name for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    assert not duplicates, f"bad-input case names must be unique: {sorted(duplicates)}"
    return cases
