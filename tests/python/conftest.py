"""Shared fixtures for the Python tests: repository paths, the CLI, the model corpus
(tests/models) and the equivalence oracle (onnxsurgeon.testing)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
from functools import cached_property
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
PYTHON_DIR = REPO_ROOT / "python"
GENERATOR = REPO_ROOT / "tests" / "models" / "generate.py"
CORPUS_DIR = REPO_ROOT / "tests" / "models" / ".generated"

# The package lives in-tree (the build drops _core*.so into python/onnxsurgeon).
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def _load_from_file(module_name: str, path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


# The generator's catalog imports neither torch nor transformers, so tests can be
# parametrized over the corpus at collection time without paying for either.
_catalog = _load_from_file("onnxsurgeon_corpus_catalog", GENERATOR)
CORPUS_MODELS: list[str] = _catalog.default_names()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Any test taking `corpus_model` runs once per default corpus model."""
    if "corpus_model" in metafunc.fixturenames:
        metafunc.parametrize("corpus_model", CORPUS_MODELS, indirect=True, ids=CORPUS_MODELS)


# ------------------------------------------------------------------------- paths


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def cli_path() -> Path:
    """The onnxsurgeon binary: $ONNXSURGEON_CLI, else <repo>/build/onnxsurgeon."""
    return Path(os.environ.get("ONNXSURGEON_CLI") or REPO_ROOT / "build" / "onnxsurgeon")


@pytest.fixture(scope="session")
def run_cli(cli_path: Path):
    """run_cli(*args, expect_rc=0) -> CompletedProcess.

    A missing binary FAILS the calling test rather than skipping it: the Makefile
    builds the CLI before pytest, so a missing binary is a broken build, and a skip
    would let a CI run go green without testing the CLI at all.
    """

    def run(*args: object, expect_rc: int | None = 0, timeout: float = 300) -> subprocess.CompletedProcess:
        if not (cli_path.is_file() and os.access(cli_path, os.X_OK)):
            pytest.fail(
                f"onnxsurgeon CLI not found at {cli_path}: build it (make) or set ONNXSURGEON_CLI",
                pytrace=False,
            )
        command = [str(cli_path), *map(str, args)]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        if expect_rc is not None and proc.returncode != expect_rc:
            pytest.fail(
                f"`{' '.join(command)}` exited {proc.returncode} (expected {expect_rc})\n"
                f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}",
                pytrace=False,
            )
        return proc

    return run


@pytest.fixture(scope="session")
def generated_docs() -> ModuleType:
    """scripts/generated_docs.py: the sections of docs/*.md generated from the CLI (the
    markers the update scripts write, and `section(text, command)` to read one back)."""
    return _load_from_file("onnxsurgeon_generated_docs", REPO_ROOT / "scripts" / "generated_docs.py")


# ------------------------------------------------------------------------ oracle


@pytest.fixture(scope="session")
def oracle() -> ModuleType:
    """onnxsurgeon.testing.

    The package's __init__ imports the compiled extension; the oracle is pure Python
    and must stay usable (e.g. to check the CLI or the corpus) when the extension is
    not built, so it is then loaded straight from its file.
    """
    try:
        from onnxsurgeon import testing
    except ImportError:
        testing = _load_from_file("onnxsurgeon_testing_standalone", PYTHON_DIR / "onnxsurgeon" / "testing.py")
    return testing


# ------------------------------------------------------------------------ corpus


@dataclasses.dataclass
class CorpusModel:
    """One generated corpus model and its manifest (see tests/models/generate.py)."""

    name: str
    directory: Path
    manifest: dict

    @property
    def path(self) -> Path:
        return self.directory / self.manifest["model"]

    @property
    def runnable(self) -> bool:
        return bool(self.manifest["runnable"])

    @property
    def rtol(self) -> float:
        return float(self.manifest["rtol"])

    @property
    def atol(self) -> float:
        return float(self.manifest["atol"])

    @property
    def tags(self) -> set[str]:
        return set(self.manifest["tags"])

    @cached_property
    def inputs(self) -> dict[str, np.ndarray]:
        with np.load(self.directory / self.manifest["inputs"]) as data:
            return {name: data[name] for name in self.manifest["input_names"]}

    @cached_property
    def expected(self) -> dict[str, np.ndarray]:
        with np.load(self.directory / self.manifest["expected_outputs"]) as data:
            return {name: data[name] for name in self.manifest["output_names"]}

    @cached_property
    def input_sets(self) -> list[InputSet]:
        """Every input set of the model, the first being `inputs`/`expected`. Models with
        an If carry one per branch (a merged decoder: use_cache_branch False and True);
        manifests without "input_sets" have the one set."""
        entries = self.manifest.get("input_sets") or [
            {
                "label": "default",
                "inputs": self.manifest["inputs"],
                "expected_outputs": self.manifest["expected_outputs"],
            }
        ]
        sets = [InputSet("default", self.inputs, self.expected)] if len(entries) == 1 else []
        for entry in entries if not sets else ():
            with np.load(self.directory / entry["inputs"]) as data:
                inputs = {name: data[name] for name in self.manifest["input_names"]}
            with np.load(self.directory / entry["expected_outputs"]) as data:
                expected = {name: data[name] for name in self.manifest["output_names"]}
            sets.append(InputSet(entry["label"], inputs, expected))
        return sets

    @property
    def all_inputs(self) -> list[dict[str, np.ndarray]]:
        """The inputs of every set, for oracle.assert_equivalent(inputs=...)."""
        return [s.inputs for s in self.input_sets]

    @property
    def all_expected(self) -> list[dict[str, np.ndarray]]:
        return [s.expected for s in self.input_sets]


@dataclasses.dataclass
class InputSet:
    label: str
    inputs: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]


@dataclasses.dataclass
class Corpus:
    directory: Path
    generator_log: str
    source_hashes: dict  # stack -> hash of its generator sources (generate.source_hash)

    def model(self, name: str) -> CorpusModel:
        manifest_path = self.directory / f"{name}.json"
        stamp = self.directory / f"{name}.stamp"
        # A stamp from other generator sources means this run did not rebuild the model.
        want = self.source_hashes[_catalog.BY_NAME[name].stack] if name in _catalog.BY_NAME else None
        current = stamp.is_file() and stamp.read_text().split()[0] == want
        if not (manifest_path.is_file() and current):
            error = self.directory / f"{name}.error"
            detail = error.read_text() if error.is_file() else self.generator_log
            pytest.fail(f"corpus model {name!r} was not generated:\n{detail}", pytrace=False)
        return CorpusModel(name, self.directory, json.loads(manifest_path.read_text()))


@pytest.fixture(scope="session")
def corpus() -> Corpus:
    """Runs the corpus generator once per session; unchanged models are cached by
    their stamps, so this costs well under a second after the first run.

    The generator runs in a subprocess so that torch and transformers are never
    imported into the test process.  A model that failed to generate fails the tests
    that use it, with the generator's traceback.
    """
    command = [sys.executable, str(GENERATOR), "--out", str(CORPUS_DIR)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    log = f"$ {' '.join(command)}\n(exit {proc.returncode})\n{proc.stdout}\n{proc.stderr}"
    if proc.returncode != 0 and not any(CORPUS_DIR.glob("*.stamp")):
        pytest.fail(f"corpus generation failed:\n{log}", pytrace=False)
    stacks = {"torch", *(e.stack for e in _catalog.CATALOG)}
    return Corpus(CORPUS_DIR, log, {stack: _catalog.source_hash(stack) for stack in stacks})


@pytest.fixture
def corpus_model(request: pytest.FixtureRequest, corpus: Corpus) -> CorpusModel:
    """Parametrized over every default corpus model (see pytest_generate_tests)."""
    return corpus.model(request.param)
