#!/usr/bin/env python3
"""The judge: every judging model through every pass, the mission pipelines, two opset
conversions and `--target` for every profile, judged strictly.

    .venv/bin/python tests/judging/judge.py [--corpus DIR] [--cli PATH] [--results FILE]
        [--only REGEX] [--pipelines REGEX] [--jobs N] [--timeout S] [--smoke] [--fresh]
    .venv/bin/python tests/judging/judge.py --summary [--results FILE] [--markdown]

Per model, the original's verdict is recorded first (pipeline "(original)"): onnx's full
checker, whether onnxruntime loads it, and how it compares with the expected outputs (the
framework's, or onnxruntime's for wheel models) on every input set. Then per pipeline the
CLI runs with a timeout, and the run is one of
  ok        exit 0; the output passes onnx.checker.check_model(full_check=True) whenever the
            input did; onnxruntime computes every output of the original, on every input
            set (every If branch), within per-dtype tolerances (exact for ints, bools,
            strings); onnxsurgeon.testing.compare_outputs gives the share of elements off
            and the max abs/rel error per output
  refused   exit 1 with its one-line reason (never counted as success)
  wrong     exit 0 but an output differs, is missing, or cannot be computed
  invalid   exit 0 but the checker rejects an output whose input it accepted, or
            onnxruntime cannot load an output whose original it loads
  crash     any other exit (a signal, a usage error) or no output written
  timeout   the CLI ran longer than --timeout
The reference is the original model run in the same onnxruntime (no graph optimizations,
one thread). A model tagged fp16 is compared with float16 tolerances on every output, and
convert-float16 with its own corpus test's (it changes results by design).
Results are JSON lines (default build/judging/results.jsonl), one per (model, pipeline),
keyed by the CLI's and the model's hashes so an interrupted run resumes where it stopped;
--summary regenerates the table per pipeline from them.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO / "python"), str(HERE)]

STATUSES = ("ok", "refused", "wrong", "invalid", "crash", "timeout")
MISSION_PIPELINES = (
    "fix-layernorm,decompose-layernorm,simplify",
    "fix-layernorm,simplify,strip-identity-cast,extract-constants(to=constant)",
    "simplify,fuse-qkv,simplify",
    "convert-opset=13",
    "convert-opset=21",
)
SMOKE_PIPELINES = ("simplify", "convert-opset=13", "--target ort")
# convert-float16 changes results within float16's precision by design: compared with the
# tolerances of its own corpus test (tests/python/test_convert_float16.py).
PRECISION_CHANGING = {"convert-float16": (5e-2, 1e-2)}


def _oracle():
    try:
        from onnxsurgeon import testing
    except ImportError:  # the extension is not built: the oracle is pure Python
        import importlib.util

        spec = importlib.util.spec_from_file_location(
            "onnxsurgeon_testing", REPO / "python" / "onnxsurgeon" / "testing.py"
        )
        testing = importlib.util.module_from_spec(spec)
        sys.modules["onnxsurgeon_testing"] = testing
        spec.loader.exec_module(testing)
    return testing


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pipelines(cli: Path) -> list[str]:
    """Every registered pass but `target`, the mission pipelines, `--target NAME` per profile."""
    passes = json.loads(
        subprocess.run([str(cli), "passes", "--json"], capture_output=True, text=True, check=True).stdout
    )
    names = [p["name"] for p in passes if p["name"] != "target"]
    listing = subprocess.run([str(cli), "targets"], capture_output=True, text=True, check=True).stdout
    targets = [line.split()[0] for line in listing.splitlines() if line and not line[0].isspace()]
    return names + [p for p in MISSION_PIPELINES if p not in names] + [f"--target {t}" for t in targets]


# ----------------------------------------------------------------------- models


class JudgedModel:
    """A judging model with its manifest, input sets and original-run outputs."""

    def __init__(self, directory: Path, name: str):
        import numpy as np

        self.name = name
        self.manifest = json.loads((directory / f"{name}.json").read_text())
        self.path = directory / self.manifest["model"]
        self.stamp = (directory / f"{name}.stamp").read_text().split()[0]
        entries = self.manifest.get("input_sets") or [
            {
                "label": "default",
                "inputs": self.manifest["inputs"],
                "expected_outputs": self.manifest["expected_outputs"],
            }
        ]
        self.sets = []
        for entry in entries:
            with np.load(directory / entry["inputs"]) as data:
                inputs = {k: data[k] for k in self.manifest["input_names"]}
            with np.load(directory / entry["expected_outputs"]) as data:
                expected = {k: data[k] for k in data.files}
            self.sets.append((entry["label"], inputs, expected))
        self.reference: list[dict] | None = None  # the original's onnxruntime outputs per set
        self.original: dict = {}

    def input_shapes(self) -> str:
        """set-input-shape's value for the first input set (scalars left out)."""
        _, inputs, _ = self.sets[0]
        return ";".join(f"{k}:{'x'.join(map(str, v.shape))}" for k, v in inputs.items() if v.ndim > 0)


def node_count(path: Path) -> int:
    import onnx

    model = onnx.load(str(path), load_external_data=False)

    def count(graph) -> int:
        total = 0
        for node in graph.node:
            total += 1
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    total += count(attr.g)
                for sub in attr.graphs:
                    total += count(sub)
        return total

    return count(model.graph)


def checker_error(path: Path) -> str | None:
    import onnx

    try:
        onnx.checker.check_model(str(path), full_check=True)
    except Exception as exc:  # ValidationError, or a protobuf error on a broken file
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return None


def judge_original(model: JudgedModel, testing) -> dict:
    """The original's verdict: checker, onnxruntime load, and agreement with the expected."""
    record = {"checker_error": checker_error(model.path), "node_count": node_count(model.path)}
    try:
        outputs = [testing.run_model(model.path, inputs) for _, inputs, _ in model.sets]
    except Exception as exc:
        record["onnxruntime_error"] = str(exc).strip().splitlines()[0][:300]
        model.reference = None
        return record
    model.reference = outputs
    sets = []
    for (label, _, expected), got in zip(model.sets, outputs):
        rtol, atol = model.manifest.get("rtol"), model.manifest.get("atol")
        found = {k: v for k, v in got.items() if k in expected}
        comparisons = testing.compare_outputs(
            found, expected, rtol, atol, actual_label="onnxruntime", desired_label="expected"
        )
        sets.append({"label": label, "outputs": [_summary(c) for c in comparisons]})
    record["vs_expected"] = sets
    record["matches_expected"] = all(o["ok"] for s in sets for o in s["outputs"])
    return record


def _summary(c) -> dict:
    return {
        "name": c.name,
        "dtype": c.dtype,
        "ok": c.ok,
        "off": c.off,
        "share_off": round(c.share_off, 6),
        "max_abs": c.max_abs,
        "max_rel": c.max_rel,
        "rtol": c.rtol,
        "atol": c.atol,
        **({"problem": c.problem[:400]} if c.problem else {}),
    }


# --------------------------------------------------------------------- one run


def run_one(model: JudgedModel, pipeline: str, cli: Path, timeout: float, testing, workdir: Path) -> dict:
    out = workdir / f"{model.name}.{hashlib.sha1(pipeline.encode()).hexdigest()[:10]}.onnx"
    shown = pipeline
    if pipeline.startswith("--target "):
        command = [str(cli), "--target", pipeline.split(" ", 1)[1], str(model.path), "-o", str(out)]
    else:
        if pipeline == "set-input-shape":
            shown = f"set-input-shape={model.input_shapes()}"
        command = [str(cli), "--pass", shown, str(model.path), "-o", str(out)]
    record = {"pipeline": pipeline, "command_pipeline": shown, "nodes_before": model.original.get("node_count")}
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        record.update(
            status="timeout", reason=f"no exit after {timeout:g}s", seconds=round(time.perf_counter() - start, 2)
        )
        out.unlink(missing_ok=True)
        return record
    record["seconds"] = round(time.perf_counter() - start, 2)
    record["rc"] = proc.returncode
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    if proc.returncode == 1:
        errors = [line for line in lines if "error" in line.lower()] or lines
        record.update(status="refused", reason=(errors[0] if errors else "(no message)")[:400], stderr_lines=len(lines))
        return record
    if proc.returncode != 0 or not out.is_file():
        tail = " | ".join(lines[-3:])[:400]
        record.update(
            status="crash", reason=f"exit {proc.returncode}: {tail}" if proc.returncode else "exit 0, no output"
        )
        return record
    try:
        record.update(_judge_output(model, pipeline, out, testing))
    finally:
        out.unlink(missing_ok=True)
        for extra in workdir.glob(out.name + "*"):
            extra.unlink(missing_ok=True)
    return record


def _judge_output(model: JudgedModel, pipeline: str, out: Path, testing) -> dict:
    result = {"nodes_after": node_count(out)}
    error = checker_error(out)
    result["output_checker_error"] = error
    if error and not model.original.get("checker_error"):
        return {**result, "status": "invalid", "reason": f"onnx checker: {error}"}
    if model.reference is None:
        return {**result, "status": "ok", "reason": "original does not run in onnxruntime: validity judged only"}
    # A model that computes in float16 (tag fp16) is compared with float16's tolerances
    # whatever its output dtype: keep_io_types puts float32 outputs after half arithmetic.
    rtol, atol = testing.default_tolerance("float16") if "fp16" in model.manifest.get("tags", []) else (None, None)
    rtol, atol = PRECISION_CHANGING.get(pipeline.split("(")[0].split("=")[0], (rtol, atol))
    fixed_shapes = pipeline == "set-input-shape"
    sets, problems = [], []
    for (label, inputs, _), reference in zip(model.sets, model.reference):
        if fixed_shapes and any(v.shape != model.sets[0][1][k].shape for k, v in inputs.items()):
            sets.append({"label": label, "skipped": "shapes differ from the first set's, which the pass fixed"})
            continue
        try:
            got = testing.run_model(out, inputs)
        except Exception as exc:
            message = str(exc).strip().splitlines()[0][:300]
            if "cannot load" in message:
                return {**result, "status": "invalid", "reason": f"onnxruntime: {message}"}
            problems.append(f"set {label}: onnxruntime run failed: {message}")
            sets.append({"label": label, "run_error": message})
            continue
        comparisons = testing.compare_outputs(got, reference, rtol, atol)
        sets.append({"label": label, "outputs": [_summary(c) for c in comparisons]})
        problems += [f"set {label}: {c.problem}" for c in comparisons if not c.ok]
    result["sets"] = sets
    if problems:
        return {**result, "status": "wrong", "reason": problems[0][:400], "problems": len(problems)}
    return {**result, "status": "ok", "reason": ""}


# ----------------------------------------------------------------------- driver


def load_results(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    records = []
    for line in path.read_text().splitlines():
        if line.strip():
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut by an interrupted run
    return records


def judge(args) -> int:
    testing = _oracle()
    cli = args.cli.resolve()
    cli_hash = sha256_of(cli)[:16]
    corpus = args.corpus.resolve()
    names = sorted(p.name[: -len(".stamp")] for p in corpus.glob("*.stamp"))
    errors = sorted(p.name[: -len(".error")] for p in corpus.glob("*.error"))
    if args.smoke:
        import generate

        names = [n for n in names if n in generate.SMOKE]
    if args.only:
        names = [n for n in names if re.search(args.only, n)]
    todo_pipelines = list(SMOKE_PIPELINES) if args.smoke else pipelines(cli)
    if args.pipelines:
        todo_pipelines = [p for p in todo_pipelines if re.search(args.pipelines, p)]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    if args.fresh:
        args.results.unlink(missing_ok=True)
    done_stamps = {
        (r["model"], r["pipeline"]): r.get("stamp") for r in load_results(args.results) if r.get("cli") == cli_hash
    }
    lock = threading.Lock()
    sink = args.results.open("a")
    counts = collections.Counter()
    start = time.perf_counter()

    def write(record: dict) -> None:
        with lock:
            sink.write(json.dumps(record, sort_keys=True) + "\n")
            sink.flush()
            counts[record["status"]] += 1

    print(
        f"judge: {len(names)} models x {len(todo_pipelines)} pipelines, cli {cli} ({cli_hash}), "
        f"results {args.results}; {len(errors)} models failed to generate: {', '.join(errors) or 'none'}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="judge-") as tmp, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        workdir = Path(tmp)
        for number, name in enumerate(names):
            model = JudgedModel(corpus, name)
            todo = [p for p in ["(original)", *todo_pipelines] if done_stamps.get((name, p)) != model.stamp]
            if not todo:
                continue
            model.original = judge_original(model, testing)
            base = {"model": name, "stamp": model.stamp, "cli": cli_hash, "tags": model.manifest.get("tags", [])}
            if "(original)" in todo:
                write({**base, "pipeline": "(original)", "status": "ok", **model.original})
                todo.remove("(original)")
            futures = {pool.submit(run_one, model, p, cli, args.timeout, testing, workdir): p for p in todo}
            for future in concurrent.futures.as_completed(futures):
                try:
                    record = future.result()
                except Exception as exc:  # the judge's own failure: recorded, never hidden
                    record = {"pipeline": futures[future], "status": "crash", "reason": f"judge error: {exc!r}"[:400]}
                write({**base, **record})
            elapsed = time.perf_counter() - start
            print(f"judge: [{number + 1}/{len(names)}] {name}: {dict(counts)} ({elapsed:.0f}s)", flush=True)
    sink.close()
    print(f"judge: done in {time.perf_counter() - start:.0f}s: {dict(counts)}", flush=True)
    return 0


def summary(results: Path, markdown: bool) -> str:
    """Per pipeline: ok / refused / wrong / invalid / crash / timeout and node counts."""
    records = load_results(results)
    latest = {}
    for r in records:
        latest[(r["model"], r["pipeline"])] = r  # a resumed run's later record wins
    rows = collections.defaultdict(lambda: collections.Counter())
    nodes = collections.defaultdict(lambda: [0, 0])
    originals = [r for (m, p), r in latest.items() if p == "(original)"]
    for (model, pipeline), r in latest.items():
        if pipeline == "(original)":
            continue
        rows[pipeline][r["status"]] += 1
        if r["status"] == "ok" and r.get("nodes_before") is not None and r.get("nodes_after") is not None:
            nodes[pipeline][0] += r["nodes_before"]
            nodes[pipeline][1] += r["nodes_after"]
    header = ["pipeline", *STATUSES, "nodes before -> after (ok runs)"]
    lines = []
    if markdown:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("| " + " | ".join("---" for _ in header) + " |")
    else:
        lines.append(
            f"{'pipeline':74s} " + " ".join(f"{s:>8s}" for s in STATUSES) + "  nodes before -> after (ok runs)"
        )
    totals = collections.Counter()
    for pipeline in sorted(rows, key=lambda p: (p.startswith("--target"), p)):
        c = rows[pipeline]
        totals.update(c)
        before, after = nodes[pipeline]
        cells = [str(c[s]) for s in STATUSES]
        if markdown:
            lines.append(f"| `{pipeline}` | " + " | ".join(cells) + f" | {before} -> {after} |")
        else:
            lines.append(f"{pipeline[:74]:74s} " + " ".join(f"{x:>8s}" for x in cells) + f"  {before} -> {after}")
    cells = [str(totals[s]) for s in STATUSES]
    lines.append(
        ("| **all** | " + " | ".join(cells) + " | |")
        if markdown
        else f"{'all':74s} " + " ".join(f"{x:>8s}" for x in cells)
    )
    runs_ort = sum(1 for r in originals if "onnxruntime_error" not in r)
    valid = sum(1 for r in originals if not r.get("checker_error"))
    matches = sum(1 for r in originals if r.get("matches_expected"))
    lines.append("")
    lines.append(
        f"originals: {len(originals)} models; {valid} pass onnx's full checker, {runs_ort} run in onnxruntime, "
        f"{matches} match their expected outputs on every input set"
    )
    return "\n".join(lines)


DOC = REPO / "docs" / "judging.md"
DOC_BEGIN = "<!-- judge table: tests/judging/judge.py --write-docs (from build/judging/results.jsonl) -->\n"
DOC_END = "<!-- end of judge table -->"


def write_docs(table: str) -> None:
    """Replaces the table between the markers of docs/judging.md."""
    text = DOC.read_text()
    head, rest = text.split(DOC_BEGIN, 1)
    _, tail = rest.split(DOC_END, 1)
    DOC.write_text(head + DOC_BEGIN + table + "\n" + DOC_END + tail)
    print(f"updated {DOC}")


def main(argv: list[str] | None = None) -> int:
    import generate

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=generate.DEFAULT_OUT)
    parser.add_argument(
        "--cli", type=Path, default=Path(os.environ.get("ONNXSURGEON_CLI") or REPO / "build" / "onnxsurgeon")
    )
    parser.add_argument("--results", type=Path, default=REPO / "build" / "judging" / "results.jsonl")
    parser.add_argument("--only", help="regular expression on model names")
    parser.add_argument("--pipelines", help="regular expression on pipelines")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--smoke", action="store_true", help=f"the smoke models and {', '.join(SMOKE_PIPELINES)}")
    parser.add_argument("--fresh", action="store_true", help="start a new results file instead of resuming")
    parser.add_argument("--summary", action="store_true", help="print the table of --results and exit")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--write-docs", action="store_true", help="put the markdown table in docs/judging.md")
    args = parser.parse_args(argv)
    if args.write_docs:
        write_docs(summary(args.results, True))
        return 0
    if args.summary:
        print(summary(args.results, args.markdown))
        return 0
    return judge(args)


if __name__ == "__main__":
    sys.exit(main())
