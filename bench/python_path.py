#!/usr/bin/env python3
"""The Python ModelProto path against the CLI, on the same model and pipeline.

`osg.run(onnx.ModelProto, PIPELINE)` must cost at most 1.5x `onnxsurgeon --pass PIPELINE
IN -o OUT`. The Python rows start from a ModelProto already in memory (what a
user holds after torch.onnx.export or onnx.load; loading it is not timed) and end with
the result as a ModelProto; the CLI row is the whole process, file to file.

Each measurement is a fresh child process, one warm-up run, then the median of --runs:

  cli                 `onnxsurgeon --pass P IN -o OUT`, wall time of the process
  osg.run(proto)      in-process time of `osg.run(proto, P)`, split into
                        from_proto: the big initializers deferred (their raw_data stays in
                                    the input proto, not read), the rest serialized by
                                    protobuf, `_core._load_parts`
                        run:        the passes (a pass that needs a deferred tensor's bytes
                                    reads its raw_data then: one copy)
                        to_proto:   C++ serializes without the big payloads, ParseFromString
                                    on that, each untouched big tensor `CopyFrom` its source
                                    TensorProto (one copy), any other's raw_data set (one copy)
  Model.from_proto    the path a kept Model takes (and osg.run's until the deferred path):
                      every big raw_data read in (one copy), set out (one copy)
  whole serialization the alternative the issue suggests, measured on the same build:
                      `load_buffer(proto.SerializeToString())` (protobuf serializes every
                      weight) and one C++ serialization of everything parsed once by
                      `ModelProto.ParseFromString` (the path until this change)

Models: bench/.data/large_inline.onnx (bench/make_large_model.py, ~500 MB of weights, few
nodes: the worst case, the CLI has nothing to do but map and write), bench/.data/gpt2_6l.onnx
(bench/make_transformer_model.py, a ~480 MB GPT-2 export, 517 nodes: simplify has work) and
the largest export in tests/models/.generated (many nodes, small weights).

  .venv/bin/python bench/python_path.py [--runs N] [--pipeline P] [--write-docs]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import roundtrip  # noqa: E402  (shared helpers: child processes, machine facts)

ROOT = roundtrip.ROOT
DOCS = roundtrip.DOCS
BEGIN, END = "<!-- python-path:begin -->", "<!-- python-path:end -->"

CHILD = r"""
import json, sys, time
import onnx
import onnxsurgeon as osg
from onnxsurgeon import _core
src, pipeline, mode = sys.argv[1], sys.argv[2], sys.argv[3]
def _prod(dims):
    n = 1
    for d in dims:
        n *= d
    return n
proto = onnx.load(src)
c0 = time.process_time()
t0 = time.perf_counter()
if mode == "run":
    out = osg.run(proto, pipeline)
    t1 = time.perf_counter()
    print(json.dumps({"total": t1 - t0, "total_cpu": time.process_time() - c0, "nodes": len(out.graph.node)}))
    sys.exit(0)
if mode == "copies":  # what protobuf's Python API costs on the big initializers alone
    from onnxsurgeon import _proto
    big = [t for t in proto.graph.initializer if _proto._is_big(t)]
    c1 = time.process_time()
    raw = [t.raw_data for t in big]
    c2 = time.process_time()
    fresh = [onnx.TensorProto() for _ in big]
    for f, r in zip(fresh, raw):
        f.raw_data = r
    c3 = time.process_time()
    del raw, fresh
    c4 = time.process_time()
    clones = [onnx.TensorProto() for _ in big]
    for c, t in zip(clones, big):
        c.CopyFrom(t)
    c5 = time.process_time()
    print(json.dumps({"total": 0.0, "total_cpu": 0.0, "read_cpu": c2 - c1, "set_cpu": c3 - c2,
                      "clone_cpu": c5 - c4, "count": len(big),
                      "big_mb": sum(onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize * _prod(t.dims)
                                    for t in big) / 1e6,
                      "nodes": len(proto.graph.node)}))
    sys.exit(0)
if mode == "split":  # what osg.run does: big weights deferred, untouched ones copied once
    from onnxsurgeon import _proto
    m = _proto.from_proto(proto, defer=True)
    t1 = time.perf_counter()
    m.run(pipeline)
    t2 = time.perf_counter()
    out = _proto.to_proto(m)
elif mode == "eager":  # Model.from_proto (raw_data read) + to_proto (raw_data set): two copies
    m = osg.Model.from_proto(proto)
    t1 = time.perf_counter()
    m.run(pipeline)
    t2 = time.perf_counter()
    out = m.to_proto()
else:  # "whole": one protobuf serialization in, one C++ serialization parsed once out
    m = _core.load_buffer(proto.SerializeToString())
    t1 = time.perf_counter()
    m.run(pipeline)
    t2 = time.perf_counter()
    out = onnx.ModelProto()
    out.ParseFromString(memoryview(m._to_parts(1 << 62)[0]))  # nothing apart: every weight inline
t3 = time.perf_counter()
print(json.dumps({"total": t3 - t0, "total_cpu": time.process_time() - c0,
                  "from_proto": t1 - t0, "run": t2 - t1, "to_proto": t3 - t2,
                  "nodes": len(out.graph.node)}))
"""


def run_cpu(argv: list[str]) -> dict:
    """One child: wall time, CPU time (user + sys, from its rusage) and peak RSS; plus the
    JSON line a Python child prints."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"command failed: {' '.join(argv)}\n{err.decode()}")
    res = {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss_kib": ru.ru_maxrss}
    lines = out.decode().strip().splitlines()
    if lines and lines[-1].startswith("{"):
        res.update(json.loads(lines[-1]))
    return res


def measure(argv: list[str], runs: int) -> dict:
    run_cpu(argv)  # warm-up
    results = [run_cpu(argv) for _ in range(runs)]
    keys = [k for k in results[0] if isinstance(results[0][k], (int, float))]
    return {k: statistics.median(r[k] for r in results) for k in keys} | {
        "min_wall": min(r["wall"] for r in results),
        "max_wall": max(r["wall"] for r in results),
    }


def bench_model(src: str, pipeline: str, runs: int) -> dict:
    out_dir = roundtrip.fresh_tmp()
    cli = measure(
        [roundtrip.CLI, "--quiet", "--pass", pipeline, src, "-o", os.path.join(out_dir, "o.onnx")]
        if _cli_has_quiet()
        else [roundtrip.CLI, "--pass", pipeline, src, "-o", os.path.join(out_dir, "o.onnx")],
        runs,
    )
    rows = {"cli": cli}
    for mode in ("run", "split", "eager", "whole", "copies"):
        rows[mode] = measure([roundtrip.PY, "-c", CHILD, src, pipeline, mode], runs)
    return rows


_QUIET = None


def _cli_has_quiet() -> bool:
    global _QUIET
    if _QUIET is None:
        help_text = subprocess.run([roundtrip.CLI, "--help"], capture_output=True, text=True)
        _QUIET = "--quiet" in help_text.stdout + help_text.stderr
    return _QUIET


def corpus_model() -> str | None:
    folder = os.path.join(ROOT, "tests", "models", ".generated")
    if not os.path.isdir(folder):
        return None
    best = None
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".onnx") and os.path.isfile(path):
            if best is None or os.path.getsize(path) > os.path.getsize(best):
                best = path
    return best


def table(name: str, src: str, pipeline: str, rows: dict) -> list[str]:
    cli = rows["cli"]["wall"]
    size = os.path.getsize(src) / 1e6
    lines = [
        f"**{name}**: `{os.path.relpath(src, ROOT)}`, {size:.0f} MB, pipeline `{pipeline}`, "
        f"{int(rows['run']['nodes'])} nodes after",
        "",
        "| command | time median (s) | vs CLI | CPU (s) | CPU vs CLI | from_proto (s) | run (s) | to_proto (s) | peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        f"| `onnxsurgeon --pass {pipeline} IN -o OUT` (whole process) | {cli:.3f} | 1.00x | "
        f"{rows['cli']['cpu']:.3f} | 1.00x | – | – | – | {rows['cli']['rss_kib'] / 1024:.0f} |",
    ]
    cli_cpu = rows["cli"]["cpu"]
    labels = {
        "run": f'`osg.run(proto, "{pipeline}")`',
        "split": "same, step by step",
        "eager": "`Model.from_proto(proto)` + `run` + `to_proto()` (raw_data read in, set out: two copies)",
        "whole": "whole serialization: `load_buffer(SerializeToString())` + `ParseFromString(C++ bytes)`",
    }
    for key in ("run", "split", "eager", "whole"):
        r = rows[key]
        part = lambda k: f"{r[k]:.3f}" if k in r else "–"  # noqa: E731
        lines.append(
            f"| {labels[key]} | {r['total']:.3f} | {r['total'] / cli:.2f}x | {r['total_cpu']:.3f} | "
            f"{r['total_cpu'] / cli_cpu:.2f}x | {part('from_proto')} | "
            f"{part('run')} | {part('to_proto')} | {r['rss_kib'] / 1024:.0f} |"
        )
    c = rows["copies"]
    if c["count"]:
        lines += [
            "",
            f"protobuf's Python API alone on the {int(c['count'])} initializers that go apart "
            f"({c['big_mb']:.0f} MB), CPU seconds: reading every `raw_data` {c['read_cpu']:.3f} (what "
            f"`Model.from_proto` copies), setting each into a new TensorProto {c['set_cpu']:.3f} (what "
            f"its `to_proto` copies), `CopyFrom` of each into a new TensorProto {c['clone_cpu']:.3f} (the one "
            f"copy any new ModelProto holding these weights costs: what `osg.run(proto)` pays for an "
            f"untouched one).",
        ]
    return lines + [""]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pipeline", default="simplify")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--command", default=".venv/bin/python bench/python_path.py --write-docs")
    args = ap.parse_args()
    t_start = time.perf_counter()
    load_before = os.getloadavg()[0]
    models = [
        ("large MLP", roundtrip.MODELS["inline"][0]),
        ("GPT-2, 6 layers (real transformer)", os.path.join(HERE, ".data", "gpt2_6l.onnx")),
    ]
    if (c := corpus_model()) is not None:
        models.append(("largest corpus export", c))
    out = []
    for name, src in models:
        if not os.path.exists(src):
            print(
                f"python_path: {src} is missing (run bench/make_large_model.py and bench/make_transformer_model.py)",
                file=sys.stderr,
            )
            continue
        rows = bench_model(src, args.pipeline, args.runs)
        out += table(name, src, args.pipeline, rows)
        print("\n".join(table(name, src, args.pipeline, rows)))
    facts = roundtrip.machine_facts() + [
        ("load average (1 min) before / after the run", f"{load_before:.2f} / {os.getloadavg()[0]:.2f}")
    ]
    head = [
        f"Produced by `{args.command}` on {datetime.date.today()} "
        f"({time.perf_counter() - t_start:.0f} s for the whole run).",
        "",
        f"Median of {args.runs} runs after one warm-up run, each a fresh process, warm page caches. "
        "Python times are in-process and start from a ModelProto already loaded (not timed); "
        "the CLI time is its whole process, file to file. *CPU* is user + sys time (in-process "
        "`time.process_time()` for the Python rows, the child's rusage for the CLI): on a shared "
        "machine it moves less than wall time.",
        "",
    ]
    head += [f"- {k}: {v}" for k, v in facts] + [""]
    section = "\n".join([BEGIN] + head + out + [END])
    if args.write_docs:
        with open(DOCS) as f:
            text = f.read()
        if BEGIN in text:
            text = text[: text.index(BEGIN)] + section + text[text.index(END) + len(END) :]
        else:
            text += (
                "\n## Python ModelProto path vs the CLI\n\n`bench/python_path.py`: `osg.run(onnx.ModelProto, ...)` "
                "against the CLI on the same file (goal: at most 1.5x).\n\n" + section + "\n"
            )
        with open(DOCS, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
