"""The harness's markdown: one model x backend table, then every refusal with its message."""

from __future__ import annotations


def _err(x) -> str:
    return "-" if x is None else f"{x:.1e}"


def _wrong(result: dict) -> str:
    """A mismatch: its error, or why there is none (missing outputs, other shapes)."""
    err = result.get("max_abs_err")
    return f"**wrong** {_err(err)}" if err is not None else f"**wrong** ({result.get('why', '')})"


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
        for r in sub:
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
            if lines:
                out.append(f"- {r['model']}: " + "; ".join(lines))
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


if __name__ == "__main__":
    import json
    import sys

    if len(sys.argv) < 2:
        sys.exit("usage: report.py RESULTS.json [RESULTS.json ...]   (prints one markdown table)")
    print(markdown(merge([json.load(open(p)) for p in sys.argv[1:]])))
