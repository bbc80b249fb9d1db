#!/usr/bin/env python3
"""Which form of attention's linear layers simplify should leave: measured, not guessed.

    .venv/bin/python bench/linear_forms.py [--models REGEX] [--rounds 20] [--threads 1] [--write-docs]

Three forms of every model of the wide corpus (bench/.data/wide, plus the tf2onnx/jax2onnx/paddle2onnx
models of tests/models/.generated when made; the list of bench/simplify_wide_bench.py):
  simplify   `onnxsurgeon --pass simplify`, what simplify leaves today;
  +fuse-qkv  `--pass simplify,fuse-qkv,simplify`: MatMuls of one input fused into one MatMul + Split;
  +gemm      every rank>=3 MatMul(x, W[K,N]) + Add(b[N]) of the simplify output rewritten as
             onnxslim/onnxsim leave it, Reshape(x, [-1,K]) -> Gemm -> Reshape(back), the back shape
             a constant where x's leading dims are static, else Concat(Shape(x)[:-1], [N]); then
             simplify again, so shared and chained Reshapes and Shapes merge (cse, reshape-chain).
Per model: node counts of the three, and every output checked in onnxruntime against the original on
the model's inputs. Then onnxruntime CPU latency of the three forms of one BERT-like encoder (BERT-base
widths, 4 layers, sequence 128, random weights, exported by torch at opset 17), sessions at the default
ORT_ENABLE_ALL, runs interleaved round by round so load on the machine hits each form alike, and the ops
onnxruntime's own fusions leave (Attention, SkipLayerNormalization, ...), read from its optimized model.

--fusions [--corpus DIR ...]: for every transformer of the wide corpus, of tests/models/.generated (tags
"transformer" and "decoder") and of each DIR (NAME.onnx; the batch-1 backend corpus of
tests/backends/batch1_corpus.py, bench/fusion_exports.py's dev exports, or a held-out corpus to measure),
the fused ops onnxruntime's transformer optimizer makes (bench/ort_fusions.py: model_type gpt2 for
decoders, else bert) of the raw export, of simplify's output and of onnxsim's (bench/.venv-anchors;
less the com.microsoft ops onnxsim wrote itself), and the ops where simplify fuses fewer. Only that
table is printed.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import simplify_bench as sb  # noqa: E402  (count_nodes, check_outputs, DOCS)
import simplify_wide_bench as wide  # noqa: E402  (models)

CLI = os.path.join(ROOT, "build", "onnxsurgeon")
OUTDIR = os.path.join(HERE, ".data", "linear-forms")
FORMS = ("simplify", "+fuse-qkv", "+gemm")
BEGIN, END = "<!-- linear-forms:begin -->", "<!-- linear-forms:end -->"
SECTION = "## Linear-layer forms: Q/K/V fusion and Gemm through Reshapes"


def osg(pipeline: str, src: str, dst: str) -> None:
    proc = subprocess.run([CLI, "-q", "--pass", pipeline, src, "-o", dst], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"onnxsurgeon --pass {pipeline} {src}: {proc.stderr.strip()[:300]}")


def gemm_through_reshapes(src: str, dst: str) -> int:
    """Writes src with every rank>=3 MatMul + constant bias Add as Reshape -> Gemm -> Reshape. Result count."""
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.shape_inference.infer_shapes(onnx.load(src))
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    inits = {i.name: i for i in g.initializer}
    types = {v.name: v.type.tensor_type for v in list(g.value_info) + list(g.input) + list(g.output)}
    readers = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            readers[i].append(n)
    outputs = {o.name for o in g.output}

    def dims(name):
        t = types.get(name)
        if t is None or not t.HasField("shape"):
            return None
        return [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]

    new_nodes, dropped, extra_inits, count = [], set(), [], 0
    uid = iter(range(1 << 30))
    for n in g.node:
        if id(n) in dropped:
            continue
        x_dims = dims(n.input[0]) if n.op_type == "MatMul" else None
        w = inits.get(n.input[1]) if n.op_type == "MatMul" else None
        rd = readers[n.output[0]] if n.op_type == "MatMul" else []
        add = rd[0] if len(rd) == 1 and rd[0].op_type == "Add" and n.output[0] not in outputs else None
        bias = None
        if add is not None:
            other = add.input[1] if add.input[0] == n.output[0] else add.input[0]
            bias = inits.get(other)
        ok = (
            x_dims is not None
            and len(x_dims) >= 3
            and w is not None
            and len(w.dims) == 2
            and bias is not None
            and list(bias.dims) == [w.dims[1]]
            and w.data_type == onnx.TensorProto.FLOAT
        )
        if not ok:
            new_nodes.append(n)
            continue
        k, m = w.dims
        tag = f"gemm_form_{next(uid)}"
        flat = f"{tag}_flat"
        extra_inits.append(numpy_helper.from_array(np.array([-1, k], np.int64), flat))
        new_nodes.append(helper.make_node("Reshape", [n.input[0], flat], [f"{tag}_x2"]))
        new_nodes.append(helper.make_node("Gemm", [f"{tag}_x2", n.input[1], bias.name], [f"{tag}_y2"]))
        lead = x_dims[:-1]
        if all(d is not None for d in lead):
            extra_inits.append(numpy_helper.from_array(np.array(lead + [m], np.int64), f"{tag}_back"))
        else:
            extra_inits.append(numpy_helper.from_array(np.array([m], np.int64), f"{tag}_n"))
            if opset >= 15:
                new_nodes.append(helper.make_node("Shape", [n.input[0]], [f"{tag}_lead"], end=-1))
            else:
                extra_inits.append(numpy_helper.from_array(np.array([0], np.int64), f"{tag}_s0"))
                extra_inits.append(numpy_helper.from_array(np.array([-1], np.int64), f"{tag}_s1"))
                new_nodes.append(helper.make_node("Shape", [n.input[0]], [f"{tag}_shape"]))
                new_nodes.append(helper.make_node("Slice", [f"{tag}_shape", f"{tag}_s0", f"{tag}_s1"], [f"{tag}_lead"]))
            new_nodes.append(helper.make_node("Concat", [f"{tag}_lead", f"{tag}_n"], [f"{tag}_back"], axis=0))
        new_nodes.append(helper.make_node("Reshape", [f"{tag}_y2", f"{tag}_back"], [add.output[0]]))
        dropped.add(id(add))
        count += 1
    del g.node[:]
    g.node.extend(new_nodes)
    g.initializer.extend(extra_inits)
    del g.value_info[:]
    onnx.save(model, dst)
    return count


def corpus_rows(regex: str) -> list[dict]:
    rows = []
    os.makedirs(OUTDIR, exist_ok=True)
    for label, path, inputs, rtol, atol in wide.models(regex):
        base = os.path.join(OUTDIR, sb.slug(label))
        files = {f: f"{base}.{sb.slug(f)}.onnx" for f in FORMS}
        row = {"model": label, "forms": {}}
        try:
            osg("simplify", path, files["simplify"])
            osg("simplify,fuse-qkv,simplify", path, files["+fuse-qkv"])
            raw = f"{base}.gemm-raw.onnx"
            row["gemms"] = gemm_through_reshapes(files["simplify"], raw)
            osg("simplify", raw, files["+gemm"])
        except Exception as e:  # noqa: BLE001  (reported per model)
            row["error"] = str(e)[:300]
            print(f"  {label}: {row['error']}", file=sys.stderr)
            rows.append(row)
            continue
        checks = sb.check_outputs(path, list(files.values()), inputs, rtol, atol, 600)
        for f, p in files.items():
            n, hist, _ = sb.count_nodes(p)
            row["forms"][f] = {"nodes": n, "hist": hist, "check": checks.get(p, {"status": "check-missing"})}
        print(
            f"  {label:24s} "
            + "  ".join(f"{f}={row['forms'][f]['nodes']} ({row['forms'][f]['check']['status']})" for f in FORMS),
            file=sys.stderr,
            flush=True,
        )
        rows.append(row)
    return rows


TRANSFORMER_WIDE = re.compile(
    r"^(distilbert|roberta|albert|electra|bart|bloom|llama|phi|clip_text|vit|deit|swin|segformer|mobilevit|clip_vision|wav2vec2)_"
)


def looks_like_transformer(path: str) -> bool:
    """True when the graph (If/Loop bodies included) has attention's Softmax beside MatMuls and a
    normalization: decomposed (ReduceMean), native, or already fused by onnxruntime."""
    import onnx

    ops: set[str] = set()

    def walk(g):
        for n in g.node:
            ops.add(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)

    walk(onnx.load(path, load_external_data=False).graph)
    fused = {"Attention", "MultiHeadAttention", "GroupQueryAttention"}
    norms = {"LayerNormalization", "ReduceMean", "SimplifiedLayerNormalization", "SkipLayerNormalization"}
    return bool(ops & fused) or ("Softmax" in ops and "MatMul" in ops and bool(ops & norms))


def model_type(path: str, tags: list[str]) -> str:
    """gpt2 (onnxruntime's GPT attention fusion on top of BERT's) for decoders: tagged so, or
    with past key/value inputs; else bert."""
    import onnx

    if "decoder" in tags:
        return "gpt2"
    names = [i.name for i in onnx.load(path, load_external_data=False).graph.input]
    return "gpt2" if any("past" in n for n in names) else "bert"


def transformer_models(regex: str, corpora: list[str] = ()) -> list[tuple[str, str, str]]:
    """(label, path, model_type) of every transformer: wide-corpus architectures, corpus models
    tagged transformer or decoder, and the transformers (looks_like_transformer) of each --corpus
    directory (NAME.onnx, with NAME.json's tags where there is one)."""
    import glob
    import json

    found = [(label, path, "bert") for label, path, *_ in wide.models(regex) if TRANSFORMER_WIDE.match(label)]
    for manifest in sorted(glob.glob(os.path.join(ROOT, "tests", "models", ".generated", "*.json"))):
        name = os.path.basename(manifest)[:-5]
        path = manifest[:-5] + ".onnx"
        tags = json.load(open(manifest)).get("tags", [])
        if ({"transformer", "decoder"} & set(tags)) and os.path.exists(path):
            if not regex or re.search(regex, f"corpus:{name}"):
                found.append((f"corpus:{name}", path, model_type(path, tags)))
    for corpus in corpora:
        tag = os.path.basename(os.path.normpath(corpus))
        for path in sorted(glob.glob(os.path.join(corpus, "*.onnx"))):
            name = os.path.basename(path)[:-5]
            if regex and not re.search(regex, f"{tag}:{name}"):
                continue
            manifest = path[:-5] + ".json"
            tags = json.load(open(manifest)).get("tags", []) if os.path.exists(manifest) else []
            if "transformer" in tags or "decoder" in tags or looks_like_transformer(path):
                found.append((f"{tag}:{name}", path, model_type(path, tags)))
    return found


def fusion_rows(regex: str, corpora: list[str] = ()) -> str:
    """Per transformer, the fused ops (ort_fusions.OPS) onnxruntime's optimizer makes of the raw
    export, simplify's output and onnxsim's, and the ops simplify's output has fewer of
    (ort_fusions.fewer_ops: each op counted with the fused ops that contain it)."""
    import ort_fusions as of

    py = of.onnxsim_python()
    out = [
        "| model | raw | simplify | onnxsim | simplify fuses fewer than |",
        "|---|---|---|---|---|",
    ]
    short = {op: "".join(c for c in op if c.isupper()) for op in of.OPS}  # SkipLayerNormalization: SLN
    short["SimplifiedLayerNormalization"] = "RMS"  # not SLN twice
    fmt = lambda f: " ".join(f"{short[k]}={v}" for k, v in f.items() if v) or "0" if f else "-"  # noqa: E731
    worse, failed = [], []
    for label, path, mtype in transformer_models(regex, corpora):
        base = os.path.join(OUTDIR, sb.slug(label))
        ours, theirs = f"{base}.fusions-simplify.onnx", f"{base}.fusions-onnxsim.onnx"
        try:
            osg("simplify", path, ours)
            f = {"raw": of.fused_ops(path, mtype), "simplify": of.fused_ops(ours, mtype), "onnxsim": None}
        except Exception as e:  # noqa: BLE001  (reported per model)
            failed.append(f"{label}: {str(e)[:200]}")
            continue
        if py:
            try:
                of.run_onnxsim(py, path, theirs)
                f["onnxsim"] = of.fused_by_onnxruntime(theirs, path, mtype)
            except Exception as e:  # noqa: BLE001
                print(f"  {label}: onnxsim failed: {str(e)[:200]}", file=sys.stderr)
        lost = [
            f"{a}: {','.join(of.fewer_ops(f['simplify'], f[a]))}"
            for a in ("raw", "onnxsim")
            if f[a] and of.fewer_ops(f["simplify"], f[a])
        ]
        if lost:
            worse.append(label)
        out.append(
            f"| {label} ({mtype}) | {fmt(f['raw'])} | {fmt(f['simplify'])} | {fmt(f['onnxsim'])} |"
            f" {'; '.join(lost) or '-'} |"
        )
        print(out[-1], file=sys.stderr, flush=True)
    out.append("")
    out.append("Abbreviations: " + ", ".join(f"{v} {k}" for k, v in short.items()) + ".")
    out.append(f"Transformers: {len(out) - 4}; where simplify fuses fewer of some op than raw or onnxsim: {len(worse)}")
    out.extend(f"- {w}" for w in worse)
    out.extend(f"- failed: {w}" for w in failed)
    return "\n".join(out)


def bert_encoder() -> tuple[str, dict]:
    """The latency model: BERT-base widths, 4 layers, seq 128 (cached)."""
    import numpy as np

    path = os.path.join(OUTDIR, "bert_base_l4_op17.onnx")
    rng = np.random.default_rng(0)
    feeds = {
        "input_ids": rng.integers(0, 30522, (1, 128), dtype=np.int64),
        "attention_mask": np.ones((1, 128), np.int64),
    }
    if os.path.exists(path):
        return path, feeds
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    model = BertModel(BertConfig(num_hidden_layers=4)).eval()

    class Wrap(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]

    args = tuple(torch.from_numpy(feeds[k]) for k in ("input_ids", "attention_mask"))
    torch.onnx.export(
        Wrap(),
        args,
        path,
        input_names=["input_ids", "attention_mask"],
        output_names=["hidden"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}},
        opset_version=17,
        dynamo=False,
    )
    return path, feeds


def latency(rounds: int, threads: int) -> dict:
    import numpy as np
    import onnxruntime as ort

    path, feeds = bert_encoder()
    files = {f: os.path.join(OUTDIR, f"bert_base_l4.{sb.slug(f)}.onnx") for f in FORMS}
    osg("simplify", path, files["simplify"])
    osg("simplify,fuse-qkv,simplify", path, files["+fuse-qkv"])
    raw = os.path.join(OUTDIR, "bert_base_l4.gemm-raw.onnx")
    gemm_through_reshapes(files["simplify"], raw)
    osg("simplify", raw, files["+gemm"])
    sessions, fused, ref = {}, {}, None
    for f, p in files.items():
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        so.optimized_model_filepath = p[:-5] + ".ort-optimized.onnx"
        sessions[f] = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
        fused[f] = sb.count_nodes(so.optimized_model_filepath)[1]
        out = sessions[f].run(None, feeds)[0]
        if ref is None:
            ref = out
        elif not np.allclose(out, ref, rtol=1e-3, atol=1e-4):
            raise RuntimeError(f"{f}: output differs from simplify's")
        for _ in range(3):
            sessions[f].run(None, feeds)
    # With one intra-op thread onnxruntime computes on the calling thread, so that thread's CPU
    # time is the work done, whatever else the machine runs; wall time is kept beside it.
    times = {f: [] for f in FORMS}
    cpu = {f: [] for f in FORMS}
    for _ in range(rounds):
        for f in FORMS:
            t, c = time.perf_counter(), time.thread_time()
            sessions[f].run(None, feeds)
            cpu[f].append((time.thread_time() - c) * 1e3)
            times[f].append((time.perf_counter() - t) * 1e3)
    # onnxruntime's offline transformer optimizer, what BERT deployments on onnxruntime run.
    from onnxruntime.transformers import optimizer

    offline = {}
    raw_qkv = os.path.join(OUTDIR, "bert_base_l4.export-fuse-qkv.onnx")
    osg("fuse-qkv", path, raw_qkv)
    for f, p in [*files.items(), ("export", path), ("export, fuse-qkv", raw_qkv)]:
        opt = optimizer.optimize_model(p, model_type="bert", num_heads=12, hidden_size=768, opt_level=0)
        offline[f] = collections.Counter(n.op_type for n in opt.model.graph.node)
    return {
        "model": path,
        "nodes": {f: sb.count_nodes(p)[0] for f, p in files.items()},
        "offline": offline,
        "ms": {f: (statistics.median(cpu[f]), min(cpu[f]), statistics.median(v)) for f, v in times.items()},
        "ort_ops": fused,
        "rounds": rounds,
        "threads": threads,
        "ort": ort.__version__,
    }


def report(rows: list[dict], lat: dict | None, args, started: float) -> str:
    git = subprocess.run(
        ["git", "-C", ROOT, "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    out = [
        f"Produced on {datetime.date.today()} by `.venv/bin/python bench/linear_forms.py --write-docs` "
        f"({time.time() - started:.0f} s; {os.cpu_count()} cores shared with other jobs; CLI at git {git}).",
        "",
    ]
    good = [
        r for r in rows if "error" not in r and all(r["forms"][f]["check"]["status"] in ("ok", "n/a") for f in FORMS)
    ]
    bad = [r for r in rows if r not in good]
    out.append(f"Models: {len(rows)}; all three forms equivalent to the original in onnxruntime: {len(good)}.")
    for r in bad:
        why = r.get("error") or "; ".join(
            f"{f}: {r['forms'][f]['check']['status']} {r['forms'][f]['check'].get('detail', '')}"
            for f in FORMS
            if r["forms"][f]["check"]["status"] not in ("ok", "n/a")
        )
        out.append(f"- {r['model']}: {why[:200]}")
    out.append("")
    out.append("| form | total nodes | fewer than simplify on | more on |")
    out.append("|---|---:|---:|---:|")
    for f in FORMS:
        total = sum(r["forms"][f]["nodes"] for r in good)
        fewer = sum(r["forms"][f]["nodes"] < r["forms"]["simplify"]["nodes"] for r in good)
        more = sum(r["forms"][f]["nodes"] > r["forms"]["simplify"]["nodes"] for r in good)
        out.append(f"| {f} | {total} | {fewer} | {more} |")
    out.append("")
    out.append("| model | simplify | +fuse-qkv | +gemm (MatMul+Add pairs rewritten) |")
    out.append("|---|---:|---:|---:|")
    for r in good:
        s = r["forms"]
        if s["+fuse-qkv"]["nodes"] == s["simplify"]["nodes"] == s["+gemm"]["nodes"]:
            continue
        out.append(
            f"| {r['model']} | {s['simplify']['nodes']} | {s['+fuse-qkv']['nodes']} | "
            f"{s['+gemm']['nodes']} ({r['gemms']}) |"
        )
    out.append("")
    out.append("Models not listed leave the same count in all three forms.")
    if lat:
        out.append("")
        out.append(
            f"onnxruntime {lat['ort']} CPU latency of `{os.path.relpath(lat['model'], ROOT)}` (BERT-base widths, "
            f"4 layers, batch 1, sequence 128), ORT_ENABLE_ALL, {lat['threads']} intra-op thread(s), "
            f"{lat['rounds']} interleaved rounds:"
        )
        out.append("")
        keys = sorted(
            {
                k
                for f in FORMS
                for k in lat["ort_ops"][f]
                if k
                in (
                    "Attention",
                    "MultiHeadAttention",
                    "SkipLayerNormalization",
                    "BiasGelu",
                    "FastGelu",
                    "Gelu",
                    "FusedMatMul",
                    "Gemm",
                    "MatMul",
                    "Split",
                    "Reshape",
                )
            }
        )
        out.append(
            "| form | nodes | CPU ms, median | CPU ms, min | wall ms, median | ops after onnxruntime's fusions: "
            + ", ".join(keys)
            + " | Attention after onnxruntime.transformers.optimizer |"
        )
        out.append("|---|---:|---:|---:|---:|---|---:|")
        for f in FORMS:
            cmed, cmin, wmed = lat["ms"][f]
            ops = ", ".join(str(lat["ort_ops"][f].get(k, 0)) for k in keys)
            out.append(
                f"| {f} | {lat['nodes'][f]} | {cmed:.1f} | {cmin:.1f} | {wmed:.1f} | {ops} | {lat['offline'][f].get('Attention', 0)} |"
            )
        out.append("")
        out.append(
            "Attention nodes onnxruntime.transformers.optimizer (model_type bert) makes of the export itself: "
            f"{lat['offline']['export'].get('Attention', 0)}; of the export after fuse-qkv alone: "
            f"{lat['offline']['export, fuse-qkv'].get('Attention', 0)}."
        )
    return "\n".join(out)


def write_docs(text: str) -> None:
    sb.write_docs(text, BEGIN, END, SECTION)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-latency", action="store_true")
    ap.add_argument("--write-docs", action="store_true")
    ap.add_argument("--fusions", action="store_true", help="only the onnxruntime fusion table of every transformer")
    ap.add_argument(
        "--corpus",
        action="append",
        default=[],
        help="--fusions: also every transformer of this directory of NAME.onnx (repeatable)",
    )
    args = ap.parse_args()
    if args.fusions:
        os.makedirs(OUTDIR, exist_ok=True)
        print(fusion_rows(args.models, args.corpus))
        return 0
    if not os.path.exists(CLI):
        sys.exit(f"{CLI} is missing: build first (make build)")
    started = time.time()
    rows = corpus_rows(args.models)
    lat = None if args.no_latency else latency(args.rounds, args.threads)
    text = report(rows, lat, args, started)
    print(text)
    if args.write_docs:
        write_docs(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
