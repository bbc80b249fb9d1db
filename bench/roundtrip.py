#!/usr/bin/env python3
"""Load -> save round-trip benchmark on the ~500 MB models from bench/make_large_model.py.

For the inline model and the external-data model it measures, each in a fresh child
process (wall time around the child, peak RSS from os.wait4's rusage of that child):

  cp            copying the file(s): the floor (for external data, `cp -r` of the folder)
  cli           build/onnxsurgeon IN -o OUT (external data: OUT in another folder, so the
                data file is rewritten)
  onnx (Python) onnx.load + onnx.save / onnx.save_model(..., save_as_external_data=True)
  onnxsurgeon (Python) onnxsurgeon.load(IN).save(OUT)
  cli inspect   build/onnxsurgeon inspect IN (load + analysis, no save): a diagnostic row

Page caches cannot be dropped without root, so every command gets one warm-up run and the
median of --runs runs is reported: all numbers are with warm caches. Outputs go to
bench/.data/tmp and are deleted after every run. The CLI and onnxsurgeon-API outputs are
verified once per model (protobuf equality with onnx, data-file bytes for external data).

  .venv/bin/python bench/roundtrip.py [--runs N] [--write-docs]
"""

from __future__ import annotations

import argparse
import datetime
import filecmp
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, ".data")
TMP = os.path.join(DATA, "tmp")
CLI = os.path.join(ROOT, "build", "onnxsurgeon")
PY = os.path.join(ROOT, ".venv", "bin", "python")
DOCS = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- roundtrip:begin -->", "<!-- roundtrip:end -->"
EXT_LOCATION = "large.onnx.data"

MODELS = {
    # name: (model path, folder holding everything the model needs, or None when inline)
    "inline": (os.path.join(DATA, "large_inline.onnx"), None),
    "external": (os.path.join(DATA, "large_external", "large.onnx"), os.path.join(DATA, "large_external")),
}

# Python children print one JSON line: seconds spent importing, loading and saving.
PY_ONNX = r"""
import json, sys, time
t0 = time.perf_counter()
import onnx
t1 = time.perf_counter()
src, out, external, location = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4]
m = onnx.load(src)
t2 = time.perf_counter()
if external:
    onnx.save_model(m, out, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=location, size_threshold=1024)
else:
    onnx.save(m, out)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "save": t3 - t2}))
"""

PY_OSG = r"""
import json, sys, time
t0 = time.perf_counter()
import onnxsurgeon
t1 = time.perf_counter()
src, out = sys.argv[1], sys.argv[2]
m = onnxsurgeon.load(src)
t2 = time.perf_counter()
m.save(out)
t3 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "save": t3 - t2}))
"""

VERIFY = r"""
import sys, onnx
a = onnx.load(sys.argv[1], load_external_data=False)
b = onnx.load(sys.argv[2], load_external_data=False)
print("equal" if a == b else "DIFFERENT")
"""


def run_child(argv: list[str]) -> dict:
    """Runs argv (not measured); returns its wall seconds and stdout."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{err.decode()}")
    return {"wall": wall, "out": out.decode()}


def run_measured(argv: list[str]) -> dict:
    """Like run_child, but reaps the child with os.wait4 to get its own peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Outputs are small (one JSON line, or an inspect report of a few KiB), so reading
    # them to EOF before reaping cannot dead-lock on a full pipe.
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{err.decode()}")
    res = {"wall": wall, "rss_kib": ru.ru_maxrss}
    line = out.decode().strip().splitlines()[-1:] if out.strip() else []
    if line and line[0].startswith("{"):
        res.update(json.loads(line[0]))
    return res


def fresh_tmp() -> str:
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(os.path.join(TMP, "out"))
    return os.path.join(TMP, "out")


def commands(name: str, src: str, folder: str | None) -> list[tuple[str, str, callable]]:
    """(key, label, make_argv(out_dir)) for every measured command of one model."""
    ext = folder is not None
    base = os.path.basename(src)
    out_model = lambda d: os.path.join(d, base)  # noqa: E731
    rows = []
    if ext:
        rows.append(("cp", "`cp -r` of the folder (floor)", lambda d: ["cp", "-r", folder, os.path.join(d, "copy")]))
    else:
        rows.append(("cp", "`cp` of the file (floor)", lambda d: ["cp", src, out_model(d)]))
    rows.append(("cli", "`onnxsurgeon IN -o OUT`", lambda d: [CLI, src, "-o", out_model(d)]))
    rows.append(("osg", "Python `onnxsurgeon.load(IN).save(OUT)`", lambda d: [PY, "-c", PY_OSG, src, out_model(d)]))
    rows.append(
        (
            "onnx",
            "Python `onnx.load` + `onnx.save`" + (" (external)" if ext else ""),
            lambda d: [PY, "-c", PY_ONNX, src, out_model(d), "1" if ext else "0", EXT_LOCATION],
        )
    )
    rows.append(
        ("inspect", "diagnostic: `onnxsurgeon inspect IN` (load only, no save)", lambda d: [CLI, "inspect", src])
    )
    return rows


def verify(src: str, folder: str | None, make_argv) -> str:
    """Runs one round trip and checks the output against the input."""
    d = fresh_tmp()
    run_measured(make_argv(d))
    out = os.path.join(d, os.path.basename(src))
    res = run_child([PY, "-c", VERIFY, src, out])["out"].strip()
    msgs = [f"protobuf {res}"]
    ok = res == "equal"
    # Not required (protobuf does not fix the order of fields on the wire), only reported.
    msgs.append(".onnx bytes " + ("identical" if filecmp.cmp(src, out, shallow=False) else "differ"))
    if folder is not None:
        a, b = os.path.join(folder, EXT_LOCATION), os.path.join(d, EXT_LOCATION)
        same = os.path.exists(b) and filecmp.cmp(a, b, shallow=False)
        ok = ok and same
        msgs.append("data file bytes identical" if same else "data file DIFFERS")
    shutil.rmtree(TMP, ignore_errors=True)
    return ("OK: " if ok else "FAILED: ") + ", ".join(msgs)


def machine_facts() -> list[tuple[str, str]]:
    cpu = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "?"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    fs = subprocess.run(["df", "-T", DATA], capture_output=True, text=True).stdout.splitlines()[-1].split()
    ver = lambda code: subprocess.run([PY, "-c", code], capture_output=True, text=True).stdout.strip()  # noqa: E731
    rev = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True
    ).stdout.strip()
    return [
        ("CPU", f"{cpu}, nproc={os.cpu_count()}"),
        ("memory", mem),
        ("kernel", platform.release()),
        ("filesystem of bench/.data", f"{fs[1]} ({fs[0]})" if len(fs) > 1 else "?"),
        (
            "onnxsurgeon",
            subprocess.run([CLI, "--version"], capture_output=True, text=True).stdout.strip()
            + f", git {rev or '?'}{' (dirty tree)' if dirty else ''}",
        ),
        (
            "Python / onnx / numpy / protobuf",
            ver(
                "import sys, onnx, numpy, google.protobuf as p; "
                "print(sys.version.split()[0], onnx.__version__, numpy.__version__, p.__version__, sep=' / ')"
            ),
        ),
    ]


def fmt_s(x: float) -> str:
    return f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5, help="measured runs per command (median reported)")
    ap.add_argument("--write-docs", action="store_true", help=f"update the roundtrip section of {DOCS}")
    ap.add_argument(
        "--command", default=None, help="the command line recorded in the output (default: this invocation)"
    )
    args = ap.parse_args()

    for path, _ in MODELS.values():
        if not os.path.exists(path):
            raise SystemExit(f"{path} missing: run `.venv/bin/python bench/make_large_model.py` first")
    if not os.access(CLI, os.X_OK):
        raise SystemExit(f"{CLI} missing: run `make build` first")

    started = time.perf_counter()
    load_before = os.getloadavg()
    results: dict[str, list[dict]] = {}
    checks: dict[str, str] = {}
    sizes: dict[str, int] = {}
    for name, (src, folder) in MODELS.items():
        files = [src] if folder is None else [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
        sizes[name] = sum(os.path.getsize(f) for f in files)
        rows = []
        for key, label, make_argv in commands(name, src, folder):
            if key in ("cli", "osg"):
                checks[f"{name}/{key}"] = verify(src, folder, make_argv)
            samples = []
            for i in range(args.runs + 1):  # run 0 is the warm-up
                d = fresh_tmp()
                r = run_measured(make_argv(d))
                shutil.rmtree(TMP, ignore_errors=True)
                if i > 0:
                    samples.append(r)
            med = lambda k: statistics.median(s[k] for s in samples) if k in samples[0] else None  # noqa: E731
            row = {
                "key": key,
                "label": label,
                "wall": med("wall"),
                "wall_min": min(s["wall"] for s in samples),
                "wall_max": max(s["wall"] for s in samples),
                "rss_mib": statistics.median(s["rss_kib"] for s in samples) / 1024,
                "load": med("load"),
                "save": med("save"),
                "import": med("import"),
            }
            rows.append(row)
            print(
                f"  {name:8s} {key:8s} median {row['wall']:.3f}s  "
                f"(min {row['wall_min']:.3f}, max {row['wall_max']:.3f})  peak RSS {row['rss_mib']:.0f} MiB",
                file=sys.stderr,
                flush=True,
            )
        results[name] = rows
    elapsed = time.perf_counter() - started
    load_after = os.getloadavg()

    cmdline = args.command or ".venv/bin/python bench/" + " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    lines = [
        f"Produced by `{cmdline}` on {datetime.date.today().isoformat()} ({elapsed:.0f} s for the whole run).",
        "",
        f"Median of {args.runs} runs after one warm-up run each; **page caches are warm** (they cannot",
        "be dropped without root), so the input is read from memory and the output is written to the",
        "page cache (no fsync by any of the commands). Each command runs as a fresh process; *wall* is",
        "measured around it (process start-up included), *peak RSS* is that process's `ru_maxrss`",
        "(file pages of a memory-mapped input count as they are touched). For the Python rows,",
        "*import* / *load* / *save* are timed inside the process (the rest of *wall* is interpreter",
        "start-up and exit). *vs cp* is wall / wall of `cp`.",
        "",
    ]
    for k, v in machine_facts():
        lines.append(f"- {k}: {v}")
    lines.append(f"- load average (1 min) before / after the run: {load_before[0]:.2f} / {load_after[0]:.2f}")
    lines.append("")
    for name, rows in results.items():
        src, folder = MODELS[name]
        what = (
            "weights inline in one .onnx file"
            if folder is None
            else f"weights in one external data file (`{EXT_LOCATION}`), size threshold 1024"
        )
        lines.append(f"**{name}**: `{os.path.relpath(src, ROOT)}`, {sizes[name] / 1e6:.0f} MB, {what}")
        lines.append("")
        lines.append(
            "| command | wall median (s) | min–max (s) | vs cp | import (s) | load (s) | save (s) | peak RSS (MiB) |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        cp_wall = rows[0]["wall"]
        for r in rows:
            opt = lambda k: fmt_s(r[k]) if r[k] is not None else "–"  # noqa: E731
            lines.append(
                f"| {r['label']} | {fmt_s(r['wall'])} | {fmt_s(r['wall_min'])}–{fmt_s(r['wall_max'])} | "
                f"{r['wall'] / cp_wall:.2f}x | {opt('import')} | {opt('load')} | {opt('save')} | {r['rss_mib']:.0f} |"
            )
        lines.append("")
        for key in ("cli", "osg"):
            lines.append(f"- check, {key} output vs input: {checks[f'{name}/{key}']}")
        lines.append("")
    text = "\n".join(lines).rstrip() + "\n"
    print(text)

    if args.write_docs:
        write_docs(text)
        print(f"updated {os.path.relpath(DOCS, ROOT)}", file=sys.stderr)
    bad = [k for k, v in checks.items() if not v.startswith("OK")]
    if bad:
        print(f"verification FAILED for: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


def write_docs(text: str) -> None:
    section = f"{BEGIN}\n{text}{END}"
    if os.path.exists(DOCS):
        with open(DOCS) as f:
            doc = f.read()
    else:
        doc = (
            "# Benchmarks\n\n"
            "Numbers measured on a real machine by the scripts in `bench/`; `make bench` reruns them\n"
            "(it calls `bash bench/run.sh`). Each section below is rewritten by its script between\n"
            "its markers; text outside the markers is kept.\n\n"
            "## Load -> save round trip\n\n"
            "`bench/make_large_model.py` builds a ~500 MB model (30 x MatMul+Add+Relu, 2048x2048\n"
            "fp32 weights, fixed seed) twice: weights inline and weights in an external data file.\n"
            "`bench/roundtrip.py` times a plain load -> save of each against copying the files.\n\n"
        )
    if BEGIN in doc and END in doc and doc.index(BEGIN) < doc.index(END):
        head, rest = doc.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        doc = head + section + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + section + "\n"
    tmp = DOCS + ".tmp"
    with open(tmp, "w") as f:
        f.write(doc)
    os.replace(tmp, DOCS)


if __name__ == "__main__":
    sys.exit(main())
