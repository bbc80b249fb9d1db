"""The harness's markdown: one model x backend table, then every refusal with its message;
and the result files of docs/results/ (one per backend: NAME.json, the rows, and NAME.md,
rendered from it), which `harness.py --results DIR` updates and tests/python/test_docs.py
checks are current renderings of their JSON."""

from __future__ import annotations

import json
import re
from pathlib import Path


def _err(x) -> str:
    return "-" if x is None else f"{x:.1e}"


def _message_line(r: dict) -> str | None:
    """The messages row of one run: why the original failed, and why the rewrite did not
    fix it; None when there is nothing to say."""
    o = r.get("original") or {}
    lines = []
    if o.get("status") == "refused":
        lines.append(f"original refused at {o['stage']}: `{o['message']}`")
    elif o.get("status") == "ok" and not o.get("match"):
        lines.append(
            f"original runs but is wrong: max abs err {_err(o.get('max_abs_err'))} {o.get('why', '')}".rstrip()
        )
    if r["verdict"] not in ("ok as is", "fixed (was refused)", "fixed (was wrong)"):
        lines.append(f"after rewrite: {r['verdict']}: `{r.get('why', '')}`")
    return f"- {r['model']}: " + "; ".join(lines) if lines else None


def _wrong(result: dict) -> str:
    """A mismatch: its error (and, judged element-wise, the worst output's share of
    elements off), or why there is none (missing outputs, other shapes)."""
    err = result.get("max_abs_err")
    if err is None:
        return f"**wrong** ({result.get('why', '')})"
    off = [o["share_off"] for o in result.get("per_output", []) if not o.get("ok", True)]
    return f"**wrong** {_err(err)}" + (f", {100 * max(off):.3g}% off" if off else "")


def _original(r: dict) -> str:
    o = r.get("original")
    if not o:
        return "?"
    if o["status"] != "ok":
        return f"refused ({o['stage']})"
    return "ok" if o.get("match") else _wrong(o)


def _after(r: dict) -> str:
    if r["verdict"] == "no reference":
        return "no reference"
    if r["verdict"] == "named by --target":
        return "refused by --target (blocker named)"
    if r["verdict"] == "named (probed)":
        return "refused by --target (blocker named, probe confirms)"
    if r["verdict"] == "named (unproven)":
        return "refused by --target (**blocker unproven**: the backend runs it)"
    if r["rewrite"]["exit"] != 0:
        return "**rewrite failed**"
    w = r["rewritten"]
    if w["status"] != "ok":
        return f"**refused** ({w['stage']})"
    return f"ok {_err(w.get('max_abs_err'))}" if w.get("match") else _wrong(w)


def markdown(report: dict) -> str:
    rows = report["rows"]
    backends = [b for b in report["backends"] if b not in report["unavailable"]]
    models = list(dict.fromkeys(r["model"] for r in rows))
    by = {(r["backend"], r["model"]): r for r in rows}
    modes = sorted({r["rewrite"]["mode"] for r in rows if "rewrite" in r})
    out = [
        f"Produced by `{report['command']}` on {report['date']}; rewrite: {', '.join(modes) or '-'}.",
        "Each cell: the original on the backend → after the rewrite (max abs error against "
        "onnxruntime on the original). Details and exact messages below the table.",
        "",
    ]
    out.append("| model | " + " | ".join(backends) + " |")
    out.append("| --- |" + " --- |" * len(backends))
    for m in models:
        cells = []
        for b in backends:
            r = by.get((b, m))
            cells.append("" if r is None else f"{_original(r)} → {_after(r)}")
        out.append(f"| {m} | " + " | ".join(cells) + " |")
    out.append("")
    for b, why in report["unavailable"].items():
        out.append(f"- **{b}**: not run: {why}")
    if report["unavailable"]:
        out.append("")
    for b in backends:
        sub = [by[(b, m)] for m in models if (b, m) in by]
        counts = {}
        for r in sub:
            counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
        out.append(f"### {b}: {report['backends'][b]}")
        out.append("")
        out.append(", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + ".")
        out.append("")
        out += [line for line in map(_message_line, sub) if line]
        out.append("")
    return "\n".join(out)


def merge(reports: list[dict]) -> dict:
    """Several harness runs (e.g. one per backend) as one report: their rows and commands."""
    merged = {
        "command": "`; `".join(r["command"] for r in reports),
        "date": max(r["date"] for r in reports),
        "unavailable": {},
        "backends": {},
        "versions": {},
        "rows": [],
        "targets_available": [],
    }
    rows = {}  # a later run of the same backend and model replaces an earlier one
    for r in reports:
        merged["unavailable"].update(r["unavailable"])
        merged["backends"].update(r["backends"])
        merged["versions"].update(r["versions"])
        for row in r["rows"]:
            rows[(row["backend"], row["model"])] = row
    merged["rows"] = list(rows.values())
    return merged


# ------------------------------------------------------------------ docs/results/NAME.{json,md}

ROOT = Path(__file__).resolve().parent.parent.parent
_KEEP = ("status", "stage", "message", "match", "max_abs_err", "per_output", "why")


def relative(text: str) -> str:
    """A message or command without the machine's paths: the repository's own prefix goes,
    other absolute folders become <abs>/ (tests/python/test_docs.py refuses them in docs)."""
    text = text.replace(str(ROOT) + "/", "")
    return re.sub(r"(?<![\w.~])/(?:work|home|tmp|root|Users|var/folders)/[^\s'\"`:;,)]*/", "<abs>/", text)


def slim(row: dict) -> dict:
    """What a result file keeps of a harness row: verdicts, errors and the backend's words."""
    out = {"model": row["model"], "verdict": row["verdict"], "why": relative(row.get("why", ""))}
    for side in ("original", "rewritten"):
        r = row.get(side)
        if r:
            out[side] = {k: (relative(r[k]) if isinstance(r[k], str) else r[k]) for k in _KEEP if k in r}
    if "rewrite" in row:
        out["rewrite"] = {"mode": row["rewrite"].get("mode", ""), "exit": row["rewrite"].get("exit", 0)}
    for key in ("inputs", "reference", "tolerance"):
        if key in row:
            out[key] = row[key]
    if "probe" in row:
        out["probe"] = {k: (relative(v) if isinstance(v, str) else v) for k, v in row["probe"].items()}
    if "facts" in row:
        out["facts"] = [{k: (relative(v) if isinstance(v, str) else v) for k, v in f.items()} for f in row["facts"]]
    return out


# The corpora a result file can hold (its "corpus" key; files written before it existed hold
# the development corpus): what a run measured, the folder its results go to, and the make
# target that regenerates them.
CORPORA = {
    "development": {
        "what": "the development corpus (tests/models and the batch-1 exports of tests/backends)",
        "make": "make backends",
        "results": "docs/results",
        "harness": "",
    },
    "judging": {
        "what": "the judging corpus (tests/judging: models no rule or fact is tuned on)",
        "make": "make backends-judging",
        "results": "docs/results/judging",
        "harness": " --judging --probe",
    },
}


def corpus_of(data: dict) -> str:
    return data.get("corpus", "development")


def regenerate_command(backend: str, corpus: str = "development") -> str:
    return f"{CORPORA[corpus]['make']} BACKENDS={backend}"


class MixedCorpora(ValueError):
    """A run's rows would go into a result file that holds another corpus's."""


def update_results(results: Path, report: dict, run: dict, corpus: str = "development") -> list[Path]:
    """Merges a harness report into results/NAME.json per backend it ran (a model's new row
    replaces its old one; models not run keep theirs, with the run that measured them) and
    rewrites NAME.md. One file holds one corpus: rows of another raise MixedCorpora before
    anything is written. Returns the files written."""
    backends = [b for b in report["backends"] if any(r["backend"] == b for r in report["rows"])]
    for backend in backends:
        path = results / f"{backend}.json"
        held = corpus_of(json.loads(path.read_text())) if path.is_file() else corpus
        if held != corpus:
            raise MixedCorpora(
                f"{relative(str(path.resolve()))} holds the {held} corpus, this run measured the {corpus} "
                f"corpus (its results go to {CORPORA[corpus]['results']})"
            )
    results.mkdir(parents=True, exist_ok=True)
    written = []
    for backend in backends:
        rows = [r for r in report["rows"] if r["backend"] == backend]
        path = results / f"{backend}.json"
        data = json.loads(path.read_text()) if path.is_file() else {"backend": backend, "runs": [], "rows": []}
        if corpus != "development":
            data["corpus"] = corpus
        data["summary"] = report["backends"][backend]
        run_id = max((r["id"] for r in data["runs"]), default=0) + 1
        this = dict(run, id=run_id, versions=report.get("versions", {}).get(backend, []))
        by_model = {r["model"]: r for r in data["rows"]}
        for r in rows:
            by_model[r["model"]] = dict(slim(r), run=run_id)
        data["rows"] = sorted(by_model.values(), key=lambda r: r["model"])
        used = {r["run"] for r in data["rows"]}
        data["runs"] = [r for r in data["runs"] if r["id"] in used] + [this]
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False, default=float) + "\n")
        md = results / f"{backend}.md"
        md.write_text(backend_markdown(data))
        written += [path, md]
    return written


def _counts(rows: list[dict]) -> str:
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    return ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def backend_markdown(data: dict) -> str:
    """docs/results/NAME.md: the current table of one backend, from NAME.json."""
    b = data["backend"]
    rows = data["rows"]
    corpus = CORPORA[corpus_of(data)]
    modes = sorted({r["rewrite"]["mode"] for r in rows if "rewrite" in r})
    several = len(data["runs"]) > 1
    on = "" if corpus_of(data) == "development" else f" on the {corpus_of(data)} corpus"
    out = [
        f"# Backend results{on}: `{b}`",
        "",
        "<!-- written by tests/backends/report.py from the JSON beside it: do not edit by hand -->",
        f"{data['summary']}{on and ', on ' + corpus['what']}. Regenerate with `{regenerate_command(b, corpus_of(data))}` "
        f"(tests/backends/harness.py --backends {b}{corpus['harness']} --results {corpus['results']}), which "
        f"rewrites this file and `{b}.json`; a run over some models (`--models`) replaces their rows only. "
        'Setup and tolerances: docs/targets.md, "Measured on real backends". Earlier measurements: the git '
        "history of these files.",
        "",
    ]
    for run in data["runs"]:
        label = f"Run {run['id']}: " if several else "Measured "
        out.append(f"{label}{run['date']}, onnxsurgeon {run['cli']}: `{run['command']}`.")
        if run.get("note"):
            out.append(run["note"])
        if run.get("versions"):
            out.append("Versions: " + ", ".join(run["versions"]) + ".")
        out.append("")
    out += [
        f"{len(rows)} models: {_counts(rows)}. Rewrite: {', '.join(modes) or '-'}.",
        "Each row: the original on the backend, then after the rewrite (max abs error against "
        "onnxruntime on the original).",
        "",
        "| model | original | after the rewrite |" + (" run |" if several else ""),
        "| --- | --- | --- |" + (" --- |" if several else ""),
    ]
    for r in rows:
        cells = [r["model"], _original(r), _after(r)] + ([str(r["run"])] if several else [])
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    if data.get("notes"):
        # What the failing rows are, from their triage (kept in the JSON across runs).
        out += ["", "## Notes", ""]
        out += [f"- {note}" for note in data["notes"]]
    out += ["", "## Messages", ""]
    out += [line for line in map(_message_line, rows) if line]
    return "\n".join(out) + "\n"


def stale_results(results: Path) -> list[str]:
    """Result files whose markdown is not the rendering of their JSON (or lacks one)."""
    problems = []
    for path in sorted(results.glob("*.json")):
        md = path.with_suffix(".md")
        want = backend_markdown(json.loads(path.read_text()))
        if not md.is_file() or md.read_text() != want:
            problems.append(
                f"{md.relative_to(ROOT)} is not the rendering of {path.name} (tests/backends/report.py --render)"
            )
    for md in sorted(results.glob("*.md")):
        if not md.with_suffix(".json").is_file():
            problems.append(f"{md.relative_to(ROOT)} has no {md.stem}.json")
    return problems


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--render"]:  # re-render docs/results/*.md from their JSON
        folder = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "docs" / "results"
        for path in sorted(folder.glob("*.json")):
            path.with_suffix(".md").write_text(backend_markdown(json.loads(path.read_text())))
            print(f"rendered {path.with_suffix('.md')}")
        sys.exit(0)
    if len(sys.argv) < 2:
        sys.exit(
            "usage: report.py RESULTS.json [RESULTS.json ...]   (prints one markdown table)\n"
            "       report.py --render [DIR]   (docs/results/*.md from their JSON)"
        )
    print(markdown(merge([json.load(open(p)) for p in sys.argv[1:]])))
