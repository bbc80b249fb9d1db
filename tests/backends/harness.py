#!/usr/bin/env python3
"""Runs the corpus on real backends, before and after `onnxsurgeon --target`.

    python tests/backends/harness.py [--backends a,b] [--models m1,m2] [--corpus DIR ... | --judging]
                                     [--out DIR] [--cli PATH] [--smoke] [--markdown FILE]
                                     [--results DIR] [--probe] [--probe-facts]

For every backend (tests/backends/backends.py) and corpus model it checks:
  1. whether the backend loads and runs the original, or refuses it (the refusal recorded),
  2. that `onnxsurgeon --target NAME` rewrites it and the backend loads and runs the result,
  3. that the outputs match onnxruntime (this venv's, the current release) on the original
     element by element, per output, within the backend's per-dtype tolerance
     (tests/backends/backends.py; integers and bools exactly); for models onnxruntime
     cannot run (custom ops), the torch reference outputs the corpus generator stored.
     Each output's max abs error, max rel error and share of elements off are recorded,
     for the original's run as for the rewrite's.
  4. with --probe, where --target named a blocker: that the blocker is real. The rewrite
     runs again with --allow-remaining and the backend gets that model: "named (probed)"
     when it refuses it or computes it wrong, "named (unproven)" (a failure) when it runs
     and matches.
  5. with --probe-facts, for every --target row: each fact `check --target` finds in the
     original, proven alone (`check --target NAME --probe --allow FACT`: the plan with only
     that fact allowed, then the backend): probed-real, probed-false (a failure: the fact
     must be narrowed or removed) or unproven (no model isolates it).
Each backend runs in its own venv (scripts/backends/setup.sh) through a runner in
tests/backends/runners/ that speaks files: model and inputs.npz in, outputs.npz or a
refusal in result.json out, so no backend shares a process or a Python with another.
A backend whose venv is missing or failed to install is reported as such for every model.

Writes OUT/results.json and OUT/results.md (default OUT: build/backends, with --judging
build/backends-judging); with --results DIR (`make backends` gives docs/results) also
merges each backend's rows into DIR/NAME.json and renders DIR/NAME.md
(tests/backends/report.py), the committed current table of that backend: a model's new row
replaces its old one, models not run keep theirs. --judging measures the judging corpus
(tests/judging) instead; its tables live apart (`make backends-judging` gives
docs/results/judging), and a result file of one corpus never takes the other's rows. Exit
status: 0 when every check that could run passed (a rewrite that a backend still refuses
is a failure; an original the backend refuses is the reason to rewrite, not a failure), 1
otherwise, 2 on a usage error. --smoke runs one small model per backend and fails when a
requested backend is not installed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from backends import BACKENDS, Backend  # noqa: E402

# The project's corpus, and the harness's own models (tests/backends/kokoro_corpus.py and
# batch1_corpus.py: batch-1 static exports as edge deployments make them).
DEFAULT_CORPORA = [ROOT / "tests/models/.generated", ROOT / "build/backends/corpus"]
# The judging corpus (tests/judging/generate.py writes it; no rule or fact is tuned on it),
# where generate.py's cache_root() puts it.
JUDGING_CORPUS = (
    Path(
        os.environ.get("ONNXSURGEON_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "onnxsurgeon"
    )
    / "judging"
    / "models"
)
BACKENDS_DIR = Path(os.environ.get("BACKENDS_DIR", ROOT / ".backends"))


# ----------------------------------------------------------------------------- corpus


class CorpusModel:
    def __init__(self, path: Path):
        self.path = path
        self.name = path.name[: -len(".onnx")]
        manifest = path.with_name(self.name + ".json")
        self.manifest = json.loads(manifest.read_text()) if manifest.is_file() else {}
        self.inputs_path = path.with_name(self.name + ".inputs.npz")
        self.expected_path = path.with_name(self.name + ".expected.npz")
        self.rtol = float(self.manifest.get("rtol", 1e-4))
        self.atol = float(self.manifest.get("atol", 1e-4))

    def inputs(self) -> dict[str, np.ndarray]:
        with np.load(self.inputs_path) as npz:
            return {k: npz[k] for k in npz.files}

    def shapes_option(self) -> str:
        """set-input-shape's items for the corpus inputs' shapes: name:1x128;name2:...
        (scalars have no dims to fix)."""
        return ";".join(f"{k}:{'x'.join(str(d) for d in v.shape)}" for k, v in self.inputs().items() if v.ndim)


def find_models(corpora: list[Path], only: list[str] | None) -> list[CorpusModel]:
    models = []
    for corpus in corpora:
        if not corpus.is_dir():
            continue
        for path in sorted(corpus.glob("*.onnx")):
            m = CorpusModel(path)
            if not m.inputs_path.is_file() or m.name.endswith("_external") or m.name == "large":
                continue
            if only and m.name not in only:
                continue
            models.append(m)
    if only:
        missing = set(only) - {m.name for m in models}
        if missing:
            raise SystemExit(
                f"harness: no corpus model {', '.join(sorted(missing))} in "
                f"{', '.join(map(str, corpora))} (make models generates them)"
            )
    return models


def first_batch_item(model: CorpusModel) -> dict[str, np.ndarray] | None:
    """The corpus inputs cut to batch 1, for backends without a batch dimension (ncnn's Mat):
    every input whose declared dim 0 is not a fixed size > 1 keeps its first item. None when
    the inputs already have batch 1 or the model fixes a larger batch (the backend then
    meets the inputs as they are)."""
    inputs = model.inputs()
    declared = {
        i.name: i.type.tensor_type.shape.dim for i in onnx.load(str(model.path), load_external_data=False).graph.input
    }
    cut, changed = {}, False
    for name, array in inputs.items():
        dims = declared.get(name)
        fixed = bool(dims) and dims[0].HasField("dim_value") and dims[0].dim_value > 1
        if array.ndim and array.shape[0] > 1 and not fixed:
            cut[name], changed = array[:1], True
        else:
            cut[name] = array
    return cut if changed else None


def reference_outputs(
    model: CorpusModel, inputs: dict[str, np.ndarray], batch_cut: bool
) -> tuple[list[np.ndarray], str]:
    """onnxruntime (current) on the original; the torch outputs when it cannot run it (their
    first item along dim 0 when the inputs were cut to batch 1)."""
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(str(model.path), providers=["CPUExecutionProvider"])
        return session.run(
            None, {i.name: inputs[i.name] for i in session.get_inputs()}
        ), f"onnxruntime {ort.__version__}"
    except Exception as e:
        if not model.expected_path.is_file():
            raise RuntimeError(f"onnxruntime cannot run {model.path.name} and there is no torch reference: {e}")
        names = [o.name for o in onnx.load(str(model.path), load_external_data=False).graph.output]
        with np.load(model.expected_path) as npz:
            if not batch_cut:
                return [npz[n] for n in names], "torch (onnxruntime cannot run the original)"
            return [npz[n][:1] for n in names], "torch, first batch item (onnxruntime cannot run the original)"


# --------------------------------------------------------------------------- backends


def backend_python(backend: Backend) -> tuple[Path | None, str]:
    """The backend venv's python, or None and why it is unavailable."""
    d = BACKENDS_DIR / backend.name
    if (d / "install-error").is_file():
        return None, "install failed: " + (d / "install-error").read_text().splitlines()[0]
    if not (d / "ready").is_file():
        return None, f"not installed (run scripts/backends/setup.sh {backend.name})"
    return d / "venv/bin/python", ""


def run_backend(backend: Backend, python: Path, model: Path, inputs: Path, workdir: Path) -> dict:
    """One runner call; a crash or a hang is recorded as the backend's result."""
    model, inputs, workdir = model.resolve(), inputs.resolve(), workdir.resolve()  # the runner runs in workdir
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "result.json").unlink(missing_ok=True)
    # The onnxruntime venvs differ only in their pinned version: they share one runner.
    runner = HERE / "runners" / f"run-{'ort' if backend.name.startswith('ort-') else backend.name}.py"
    start = time.perf_counter()
    env = dict(os.environ, OMP_NUM_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")
    try:
        proc = subprocess.run(
            [str(python), str(runner), str(model), str(inputs), str(workdir)],
            capture_output=True,
            text=True,
            timeout=backend.timeout,
            env=env,
            errors="replace",
            cwd=workdir,
        )  # backends drop debug files in their cwd
    except subprocess.TimeoutExpired:
        return {
            "status": "refused",
            "stage": "run",
            "message": f"no answer within {backend.timeout} s (killed)",
            "seconds": round(time.perf_counter() - start, 1),
        }
    seconds = round(time.perf_counter() - start, 1)
    (workdir / "runner.log").write_text(proc.stdout + proc.stderr)
    result_path = workdir / "result.json"
    if not result_path.is_file():
        tail = [l for l in (proc.stderr or proc.stdout).splitlines() if l.strip()][-1:] or ["(no output)"]
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return {
            "status": "refused",
            "stage": "crash",
            "message": f"runner died ({how}): {tail[0][:300]}",
            "seconds": seconds,
        }
    result = json.loads(result_path.read_text())
    result["seconds"] = seconds
    if result["status"] == "ok":
        # allow_pickle: sequence and map outputs (ai.onnx.ml's ZipMap) come as object arrays;
        # the file is our runner's, written into our own work folder.
        with np.load(workdir / "outputs.npz", allow_pickle=True) as npz:
            result["outputs"] = [npz[f"out{i}"] for i in range(len(npz.files))]
    return result


# --------------------------------------------------------------------------- comparing


_CHANNELS_LAST_TO_FIRST = {4: (0, 3, 1, 2), 3: (0, 2, 1), 5: (0, 4, 1, 2, 3)}


def _layouts(out: np.ndarray, ref: np.ndarray) -> list[tuple[np.ndarray, str]]:
    """out in ref's layout, every way it can be: as is, channels-last turned back to
    channels-first (onnx2tf's outputs; when C == H == W both fit the shape, so both are
    tried), or the same elements in ref's shape (a backend that adds or drops unit dims)."""
    found = []
    if out.shape == ref.shape:
        found.append((out, ""))
    perm = _CHANNELS_LAST_TO_FIRST.get(out.ndim)
    if perm and out.ndim == ref.ndim and out.transpose(perm).shape == ref.shape:
        found.append((out.transpose(perm), "channels-last output"))
    if not found and out.size == ref.size and [d for d in out.shape if d != 1] == [d for d in ref.shape if d != 1]:
        found.append((out.reshape(ref.shape), f"shape {list(out.shape)} reshaped"))
    return found


def _tolerance_module():
    """python/onnxsurgeon/tolerance.py, the element-wise comparison --check and compare use
    (loaded by path: pure numpy, no extension needed)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("onnxsurgeon_tolerance", ROOT / "python/onnxsurgeon/tolerance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TOL = _tolerance_module()


def tolerance(dtype: np.dtype, fp32: tuple[float, float], fp16: tuple[float, float]) -> tuple[float, float]:
    """(rtol, atol) for a reference output of this element type: float32 (and float64) the
    backend's, float16 and bfloat16 the float16 bound, integers and bools exact."""
    if dtype.kind == "O":  # sequences and maps (ai.onnx.ml): their numbers are float32
        return fp32
    if dtype.kind not in "fc":
        return 0.0, 0.0
    if dtype.name in ("float16", "bfloat16"):
        return max(fp16[0], fp32[0]), max(fp16[1], fp32[1])
    return fp32


def judge_output(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> dict:
    """One output against its reference, element by element (numpy.allclose: |out - ref| <=
    atol + rtol * |ref|, NaN only against NaN; integers and bools equal). Result max_abs,
    max_rel, share_off (the share of elements outside tolerance), ok and problem."""
    if ref.dtype.kind == "O" or out.dtype.kind == "O":
        return _judge_objects(out, ref, rtol, atol)
    if ref.dtype.kind in "iub" and out.dtype.kind in "iub":
        out = out.astype(ref.dtype)  # a backend's int32 for int64 is no error; the values must be equal
    row = TOL.compare_arrays(np, out, ref, atol, rtol)
    size = row["size"] or 1
    return {
        "max_abs": row["max_abs"],
        "max_rel": row["max_rel"],
        "share_off": row["off"] / size if row["size"] else 0.0,
        "ok": not row["problem"],
        "problem": row["problem"],
        "rtol": rtol,
        "atol": atol,
    }


def _same(a, b, rtol: float, atol: float) -> bool:
    """Sequence and map values (ai.onnx.ml's ZipMap: a list of {label: probability}),
    numbers within tolerance, the rest equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], rtol, atol) for k in a)
    if isinstance(a, (list, tuple, np.ndarray)) and isinstance(b, (list, tuple, np.ndarray)):
        return len(a) == len(b) and all(_same(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, (float, np.floating)) or isinstance(b, (float, np.floating)):
        return bool(np.isclose(float(a), float(b), rtol=rtol, atol=atol))
    return a == b


def _judge_objects(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> dict:
    """An object output (a sequence of maps) against its reference: all or nothing."""
    ok = out.shape == ref.shape and _same(out.tolist(), ref.tolist(), rtol, atol)
    return {
        "max_abs": 0.0,
        "max_rel": 0.0,
        "share_off": 0.0 if ok else 1.0,
        "ok": ok,
        "problem": "" if ok else "the sequence/map output differs",
        "rtol": rtol,
        "atol": atol,
    }


def compare(
    outputs: list[np.ndarray],
    refs: list[np.ndarray],
    rtol: float,
    atol: float,
    fp16: tuple[float, float] = (1e-2, 1e-2),
) -> dict:
    """Each output against its reference, element by element with its element type's
    tolerance (tolerance()): rtol/atol are float32's, fp16 the (rtol, atol) of float16
    outputs. Result match (every output within tolerance), max_abs_err (the worst over the
    outputs), per_output (each output's max abs and rel error and share of elements off)
    and why (the first output off, and layout notes)."""
    if len(outputs) != len(refs):
        return {"match": False, "max_abs_err": None, "why": f"{len(outputs)} outputs, expected {len(refs)}"}
    worst, notes, match, per_output, first_off = 0.0, [], True, [], ""
    for i, (out, ref) in enumerate(zip(outputs, refs)):
        out, ref = np.asarray(out), np.asarray(ref)
        candidates = _layouts(out, ref)
        if not candidates:
            return {
                "match": False,
                "max_abs_err": None,
                "per_output": per_output,
                "why": f"output {i}: shape {list(out.shape)}, expected {list(ref.shape)}",
            }
        r, a = tolerance(ref.dtype, (rtol, atol), fp16)
        judged = [(judge_output(c, ref, r, a), note) for c, note in candidates]
        # The layout that passes, else the one with the fewest elements off.
        j, note = next((x for x in judged if x[0]["ok"]), min(judged, key=lambda x: x[0]["share_off"]))
        if note:
            notes.append(f"output {i}: {note}")
        per_output.append({k: j[k] for k in ("max_abs", "max_rel", "share_off", "ok", "rtol", "atol")})
        worst = max(worst, j["max_abs"])
        if not j["ok"]:
            match = False
            if not first_off:
                first_off = (
                    f"output {i}: {j['problem']} (max abs {j['max_abs']:.2e}, max rel {j['max_rel']:.2e}, "
                    f"{100 * j['share_off']:.3g}% of elements off)"
                )
    return {
        "match": match,
        "max_abs_err": worst,
        "per_output": per_output,
        "why": "; ".join([first_off, *notes] if first_off else notes),
    }


# --------------------------------------------------------------------------- rewriting


def available_targets(cli: Path) -> set[str]:
    """The profiles `onnxsurgeon targets` lists (empty before the planner exists)."""
    try:
        proc = subprocess.run([str(cli), "targets"], capture_output=True, text=True, timeout=60)
    except OSError:
        return set()
    if proc.returncode != 0:
        return set()
    return {line.split()[0] for line in proc.stdout.splitlines() if line.strip() and not line.startswith(" ")}


def rewrite_command(
    cli: Path, backend: Backend, model: CorpusModel, out: Path, targets: set[str]
) -> tuple[list[str], str]:
    target = next((t for t in backend.targets if t in targets), None)
    if target:
        cmd = [str(cli), "--target", target]
        if backend.static:
            cmd += ["--input-shapes", model.shapes_option()]
        return cmd + [str(model.path), "-o", str(out)], f"--target {target}"
    pipeline = backend.pipeline.replace("{shapes}", model.shapes_option())
    return [str(cli), "--pass", pipeline, str(model.path), "-o", str(out)], "hand pipeline"


def rewrite(cmd: list[str]) -> dict:
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [l for l in proc.stderr.splitlines() if l.strip()]
    # The op types of the blockers --target says remain (its grouped "still blocks" lines:
    # "      OP 'node' in main graph: reason").
    blocked = sorted({m.group(1) for l in lines if (m := re.match(r"^\s{6}([\w.:]+) '[^']*' in ", l))})
    return {
        "blocked_ops": blocked,
        "exit": proc.returncode,
        "seconds": round(time.perf_counter() - start, 2),
        "message": (lines[-1] if lines else "")[:400] if proc.returncode else "",
        "command": " ".join(shlex.quote(c) for c in cmd),
    }


# --------------------------------------------------------------------------- the run


def cli_version(cli: Path) -> str:
    """Which onnxsurgeon a run used: the repository's commit when the CLI is its build."""
    cli = cli.resolve()
    if cli.is_relative_to(ROOT):
        proc = subprocess.run(
            ["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=7"], capture_output=True, text=True
        )
        if proc.returncode == 0:
            return f"at git {proc.stdout.strip()}"
    return f"from {cli.name} (outside this repository)"


def tolerances(backend: Backend, model: CorpusModel) -> tuple[float, float, tuple[float, float]]:
    """(rtol, atol) of float32 outputs and (rtol, atol) of float16 ones: the backend's, or the
    corpus model's where larger. A model that computes in float16 (tag fp16: a float16
    conversion, float32 inputs and outputs kept or not) gets float16's bound on every output,
    as tests/judging/judge.py judges it: its reference carries float16 rounding too."""
    rtol, atol = max(backend.rtol, model.rtol), max(backend.atol, model.atol)
    fp16 = (max(backend.fp16_rtol, rtol), max(backend.fp16_atol, atol))
    if "fp16" in model.manifest.get("tags", []):
        rtol, atol = fp16
    return rtol, atol, fp16


def check_one(
    backend: Backend,
    python: Path,
    model: CorpusModel,
    cli: Path,
    targets: set[str],
    work: Path,
    probe: bool = False,
    facts: bool = False,
) -> dict:
    row = {"backend": backend.name, "model": model.name}
    wd = work / backend.name / model.name
    inputs, inputs_path = model.inputs(), model.inputs_path
    cut = first_batch_item(model) if backend.batch_one else None
    if cut is not None:
        inputs, inputs_path = cut, wd / "inputs.batch1.npz"
        inputs_path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(inputs_path, **cut)
        row["inputs"] = "first batch item"
    try:
        refs, ref_source = reference_outputs(model, inputs, cut is not None)
    except RuntimeError as e:
        row.update(verdict="no reference", why=str(e))
        return row
    row["reference"] = ref_source
    rtol, atol, fp16 = tolerances(backend, model)
    row["tolerance"] = {
        "rtol": rtol,
        "atol": atol,
        "fp16_rtol": fp16[0],
        "fp16_atol": fp16[1],
        "elementwise": True,
        "note": backend.tolerance_note,
    }

    def judged(result: dict) -> dict:
        outputs = result.pop("outputs", None)
        if outputs is not None:
            result.update(compare(outputs, refs, rtol, atol, fp16))
        return result

    original = judged(run_backend(backend, python, model.path, inputs_path, wd / "original"))
    row["original"] = original
    out = wd / "rewritten.onnx"
    cmd, mode = rewrite_command(cli, backend, model, out, targets)
    rw = rewrite(cmd)
    rw["mode"] = mode
    row["rewrite"] = rw
    if rw["exit"] == 0 and mode.startswith("--target"):
        # --target must never write what its own check --target rejects.
        shapes = cmd[3:5] if backend.static else []
        check = [str(cli), "check", "--target", mode.split()[1], *shapes, str(out)]
        proc = subprocess.run(check, capture_output=True, text=True, timeout=300)
        rw["check_exit"] = proc.returncode
        rw["check_says"] = (proc.stdout.strip().splitlines() or [""])[0][:300]
    if rw["exit"] != 0:
        rewritten = None
    else:
        rewritten = judged(run_backend(backend, python, out, inputs_path, wd / "rewritten"))
    row["rewritten"] = rewritten
    row["verdict"], row["why"] = verdict(original, rw, rewritten)
    if probe and row["verdict"] == "named by --target":
        row["probe"] = probe_blockers(backend, python, cmd, original, inputs_path, judged, wd)
        proven = row["probe"]["proven"]
        row["verdict"] = "named (probed)" if proven else "named (unproven)"
        row["why"] = f"{row['why']}; probe: {row['probe']['says']}"
    if facts and mode.startswith("--target"):
        shapes = ["--input-shapes", model.shapes_option()] if backend.static else []
        row["facts"] = probe_facts(cli, mode.split()[1], model.path, shapes)
    return row


def probe_blockers(
    backend: Backend, python: Path, cmd: list[str], original: dict, inputs_path: Path, judged, wd: Path
) -> dict:
    """Is a blocker --target named real? The same rewrite with --allow-remaining (the plan
    runs, the named blockers stay in the written model) goes to the backend: it proves the
    blockers when the backend refuses that model or computes it wrong; it matching means
    the profile refused a model the backend runs. When --allow-remaining cannot write a
    model either, the original (where the blockers also are) is the probe."""
    out = wd / "probe.onnx"
    i = cmd.index("-o")
    probe_cmd = [*cmd[:i], "--allow-remaining", "-o", str(out)]
    rw = rewrite(probe_cmd)
    if rw["exit"] == 0:
        result, model = judged(run_backend(backend, python, out, inputs_path, wd / "probe")), "--allow-remaining output"
    else:
        result, model = original, "the original (--allow-remaining wrote nothing: " + rw["message"][:200] + ")"
    ops = rw.get("blocked_ops", [])
    named = [op for op in ops if op.split(":")[-1].lower() in result.get("message", "").lower()]
    if result["status"] != "ok":
        says = f"{backend.name} refuses {model} at {result['stage']}: {result['message']}"
        if ops and not named:
            says += f" (the message names none of the blocked ops {', '.join(ops)}: another reason may come first)"
    elif not result.get("match"):
        says = f"{backend.name} computes {model} wrong: {result.get('why', '')}"
    else:
        says = f"{backend.name} runs {model} and matches (max abs err {result.get('max_abs_err')}): the blocker is not shown"
    return {
        "model": model,
        "command": rw["command"],
        "status": result["status"],
        "match": bool(result.get("match")),
        "max_abs_err": result.get("max_abs_err"),
        "proven": result["status"] != "ok" or not result.get("match"),
        # Whether the refusal names an op a blocker is about (a refusal for another reason
        # shows the model cannot run, not that this blocker is real).
        "names_blocked_op": bool(named),
        "says": says[:500],
    }


FACT_VERDICTS = {"real": "probed-real", "false": "probed-false"}


def probe_facts(cli: Path, target: str, model_path: Path, shapes: list[str]) -> list[dict]:
    """--probe-facts: each fact `check --target` finds in the model, proven alone. For each,
    `check --target T --probe --allow FACT` runs the target's plan with only that fact
    allowed (every other blocker removed as usual) and the backend on the result:
    probed-real when the backend refuses it or computes it wrong, probed-false when it runs
    and matches (the fact must be narrowed or removed), unproven when no model isolates the
    fact (another fact no step removes still blocks, or the plan leaves nothing under it)."""
    check = subprocess.run(
        [str(cli), "check", "--target", target, "--json", *shapes, str(model_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        found = json.loads(check.stdout)
    except ValueError:
        why = (check.stderr.strip().splitlines() or [f"exit {check.returncode}"])[-1]
        return [{"fact": "(check --target failed)", "verdict": "unproven", "why": why[:400]}]
    prefix = f"{target}: "
    facts = sorted({b["fact"].removeprefix(prefix) for b in found["blockers"]})
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    out = []
    for fact in facts:
        cmd = [str(cli), "check", "--target", target, "--probe", "--allow", fact, "--json", *shapes, str(model_path)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1200, env=env)
        except subprocess.TimeoutExpired:
            out.append({"fact": fact, "verdict": "unproven", "why": "the probe did not finish in 1200 s"})
            continue
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
            result = {"verdict": "unproven", "why": why}
        verdict = FACT_VERDICTS.get(result.get("verdict"), "unproven")
        out.append({"fact": fact, "verdict": verdict, "why": str(result.get("why", ""))[:400]})
    return out


def verdict(original: dict, rw: dict, rewritten: dict | None) -> tuple[str, str]:
    """One word for the row, and whether it is a failure of onnxsurgeon (see failed())."""
    orig_ok = original["status"] == "ok" and original.get("match")
    orig_wrong = original["status"] == "ok" and not original.get("match")
    if rw["exit"] != 0:
        # --target's planned refusal: what blocks is named with its profile fact (the
        # judge accepts that where no rewrite can reach the backend), not a failed step.
        if rw.get("mode", "").startswith("--target") and "blocker(s) remain" in rw["message"]:
            return "named by --target", rw["message"]
        return "rewrite failed", rw["message"]
    if rewritten["status"] != "ok":
        return "still refused", f"{rewritten['stage']}: {rewritten['message']}"
    if not rewritten.get("match"):
        return "wrong after rewrite", f"max abs err {rewritten.get('max_abs_err')} {rewritten.get('why', '')}".strip()
    if rw.get("check_exit", 0) != 0:
        return "check rejects output", f"runs, but check --target exits {rw['check_exit']}: {rw.get('check_says', '')}"
    if orig_ok:
        return "ok as is", ""
    if orig_wrong:
        return "fixed (was wrong)", f"original max abs err {original.get('max_abs_err')}"
    return "fixed (was refused)", f"{original['stage']}: {original['message']}"


# "named by --target" rows are not failures unless --probe shows the blocker is not real
# ("named (unproven)": the backend runs the model with the blocker and matches).
FAILURES = {
    "rewrite failed",
    "still refused",
    "wrong after rewrite",
    "no reference",
    "check rejects output",
    "named (unproven)",
}


def report_corpus(path: Path) -> str:
    """Which corpus a result file (docs/results/NAME.json) holds."""
    import report as report_md

    return report_md.corpus_of(json.loads(path.read_text()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", help=f"comma-separated, default all: {','.join(BACKENDS)}")
    parser.add_argument("--models", help="comma-separated corpus model names (default all)")
    parser.add_argument("--corpus", type=Path, action="append", help="corpus folder(s) of NAME.onnx + NAME.inputs.npz")
    parser.add_argument(
        "--judging",
        action="store_true",
        help="the judging corpus (tests/judging/generate.py's models) instead of the development one; its "
        "result files (--results) hold that corpus only: make backends-judging gives docs/results/judging",
    )
    parser.add_argument("--out", type=Path, help="default build/backends (build/backends-judging with --judging)")
    parser.add_argument("--cli", type=Path, default=ROOT / "build/onnxsurgeon")
    parser.add_argument("--smoke", action="store_true", help="one small model per backend (its smoke_model)")
    parser.add_argument("--markdown", type=Path, help="also write the markdown table here")
    parser.add_argument(
        "--results", type=Path, help="merge the rows into DIR/NAME.json and .md per backend (docs/results)"
    )
    parser.add_argument(
        "--probe",
        action="store_true",
        help="for rows where --target named a blocker, run the backend on the --allow-remaining output: "
        "'named (probed)' when it refuses or computes wrong, 'named (unproven)' (a failure) when it matches",
    )
    parser.add_argument(
        "--probe-facts",
        action="store_true",
        help="for every --target row, prove each fact check --target finds in the original alone (check --target "
        "--probe --allow FACT): probed-real, probed-false (a failure: the fact must be narrowed) or unproven",
    )
    args = parser.parse_args(argv)

    names = args.backends.split(",") if args.backends else list(BACKENDS)
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        parser.error(f"unknown backend(s) {', '.join(unknown)}; known: {', '.join(BACKENDS)}")
    if not args.cli.is_file():
        parser.error(f"no CLI at {args.cli} (make build)")
    if args.judging and args.corpus:
        parser.error("--judging is the judging corpus: give it or --corpus, not both")
    if args.judging and not any(JUDGING_CORPUS.glob("*.onnx")):
        parser.error(f"no judging models in {JUDGING_CORPUS} (make judging-corpus)")
    corpora = [JUDGING_CORPUS] if args.judging else args.corpus or DEFAULT_CORPORA
    corpus_label = "judging" if args.judging else "development"
    args.out = args.out or ROOT / ("build/backends-judging" if args.judging else "build/backends")
    if args.results and not args.smoke:
        # One result file holds one corpus: refuse before measuring anything.
        for name in names:
            held = args.results / f"{name}.json"
            if held.is_file() and report_corpus(held) != corpus_label:
                parser.error(
                    f"{held} holds the {report_corpus(held)} corpus; this run measures the {corpus_label} corpus "
                    "(--results docs/results for the development corpus, docs/results/judging with --judging)"
                )
    if args.models:
        models = find_models(corpora, args.models.split(","))
    elif args.smoke:
        models = find_models(corpora, sorted({BACKENDS[n].smoke_model for n in names}))
    else:
        models = find_models(corpora, None)
    if not models:
        parser.error("no corpus models found (make models)")
    targets = available_targets(args.cli)
    args.out.mkdir(parents=True, exist_ok=True)
    work = args.out / "work"

    rows, unavailable = [], {}
    import report as report_md

    # How this run was started, without the machine's paths (it goes into docs/results).
    command = report_md.relative(
        " ".join(shlex.quote(a) for a in ["python", "tests/backends/harness.py", *sys.argv[1:]])
    )
    run = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cli": cli_version(args.cli),
        "command": command,
    }

    def write_report() -> None:
        """Written after every row, so an interrupted run still leaves what it measured."""
        versions = {}
        for name in names:
            freeze = BACKENDS_DIR / name / "freeze.txt"
            versions[name] = freeze.read_text().split() if freeze.is_file() else []
        report = {
            "command": command,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "targets_available": sorted(targets),
            "unavailable": unavailable,
            "backends": {n: BACKENDS[n].summary for n in names},
            "versions": versions,
            "rows": rows,
        }
        (args.out / "results.json").write_text(json.dumps(report, indent=1, default=float))
        text = report_md.markdown(report)
        (args.out / "results.md").write_text(text)
        if args.markdown:
            args.markdown.write_text(text)

    for name in names:
        backend = BACKENDS[name]
        python, why = backend_python(backend)
        if python is None:
            unavailable[name] = why
            print(f"{name:12s} UNAVAILABLE: {why}", flush=True)
            continue
        for model in models:
            if args.smoke and not args.models and model.name != backend.smoke_model:
                continue
            row = check_one(backend, python, model, args.cli, targets, work, probe=args.probe, facts=args.probe_facts)
            rows.append(row)
            write_report()
            print(f"{name:12s} {model.name:28s} {row['verdict']:20s} {row.get('why', '')[:150]}", flush=True)
            for f in row.get("facts", []):
                print(f"{'':12s}   fact {f['fact']!r}: {f['verdict']}: {f['why'][:200]}", flush=True)
    write_report()
    if args.results and not args.smoke:
        report = json.loads((args.out / "results.json").read_text())
        for path in report_md.update_results(args.results, report, run, corpus_label):
            print(f"harness: wrote {report_md.relative(str(path.resolve()))}")
    # A fact the backend shows false is a failure: the profile refuses what the backend runs.
    failed = [
        r for r in rows if r["verdict"] in FAILURES or any(f["verdict"] == "probed-false" for f in r.get("facts", []))
    ]
    fact_counts = {}
    for r in rows:
        for f in r.get("facts", []):
            fact_counts[f["verdict"]] = fact_counts.get(f["verdict"], 0) + 1
    if args.probe_facts:
        print(
            "harness: facts probed alone: " + (", ".join(f"{v} {k}" for k, v in sorted(fact_counts.items())) or "none")
        )
    counts = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print(
        f"harness: {len(rows)} runs: "
        + ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
        + f"; unavailable backends: {', '.join(unavailable) or 'none'}; results in {args.out}"
    )
    if args.smoke and unavailable:
        print(
            "harness: --smoke needs every requested backend installed: "
            + "; ".join(f"{k}: {v}" for k, v in unavailable.items()),
            file=sys.stderr,
        )
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
