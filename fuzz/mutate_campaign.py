"""Mutation campaign: mutates the project's test models and runs the CLI on each
mutant with several pipelines, flagging every broken promise:

  crash        the CLI died by a signal, or printed "internal error"
  hang         no exit within --timeout seconds (default 20)
  wrote        a failed run (exit != 0) left the output file behind
  invalid      exit 0, the input passes onnx.checker.check_model(full_check=True) and the
               output does not
  multiline    a failed run printed more than one line on stderr
  differs      (scope mutants) exit 0, and the output computes something else than the
               mutant in onnxruntime on the seed's input sets, or fails (or crashes it) where
               the mutant runs, with onnxruntime's graph optimizations off
  (reported apart: ort_optimizer, an output that fails only with onnxruntime's
   optimizations on, while its input runs with them: a defect of onnxruntime's)

Mutations: bit flips and truncation of the serialized model; protobuf field mutations with
onnx's Python API (dims, element types, attribute values and types, ir_version, opset
versions, names); node surgery (delete, duplicate, swap inputs, rewire an input, change
the op type). A share of the mutants (--scope-rate) are scope mutations of the seeds with
subgraphs (fuzz/scope_mutators.py, fuzz/scope_seeds.py): names reused across sibling
branches and a subgraph and its parent, one dim_param on inputs of different sizes, If
branches wrapped in another If; they keep what the model computes, so the output is also
compared with the mutant. Mutants come from a seeded generator, so a run is reproducible;
every finding is saved under --out with its command line.

Usage: python fuzz/mutate_campaign.py --cli build/onnxsurgeon --count 2000 --out /tmp/campaign
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

import onnx
import onnx.parser

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "fuzz"))
import scope_mutators  # noqa: E402
from make_seeds import golden_cases  # noqa: E402
from ort_compare import Comparator, compare  # noqa: E402
from scope_seeds import scope_seeds  # noqa: E402

PIPELINES = [
    "simplify",
    "fold-constants,dce",
    "fix-layernorm,decompose-layernorm,simplify",
    "downgrade-opset=13",
    "extract-constants,cse,dedupe-initializers,toposort",
    "fuse-reshapes,fuse-gelu,fuse-conv-bn",
    "inline-functions,resolve-shapes",
]
# Scope mutants also run these: the passes that walk subgraphs, move values between scopes
# or read dims (a different list, so runs without scope mutants replay as before).
SCOPE_PIPELINES = PIPELINES + [
    "loop-carry-outer-values,simplify",
    "cse,dce,resolve-shapes,fold-constants",
    "infer-shapes,fix-declared-shapes,simplify",
    "upgrade-opset=21",
    "target=ort-1.14",
    "target=openvino",
]
MAX_BYTES = 512 * 1024
OPS = [
    "Add",
    "MatMul",
    "Reshape",
    "Slice",
    "Gather",
    "Concat",
    "Transpose",
    "LayerNormalization",
    "Constant",
    "Cast",
    "Shape",
    "Expand",
    "Unsqueeze",
    "Squeeze",
    "ConstantOfShape",
    "Range",
    "If",
    "Identity",
    "Gemm",
]
EXTREMES = [0, 1, -1, 2, 3, 2**31 - 1, 2**31, -(2**31), 2**63 - 1, -(2**63), 10**12]


def seed_models() -> list[tuple[str, bytes]]:
    out = []
    for name, _pipeline, text in golden_cases():
        try:
            out.append((f"golden-{name}", onnx.parser.parse_model(text).SerializeToString()))
        except Exception:
            pass
    corpus = ROOT / "tests" / "models" / ".generated"
    for path in sorted(corpus.glob("*.onnx")) if corpus.exists() else []:
        if path.stat().st_size <= MAX_BYTES:
            out.append((f"corpus-{path.stem}", path.read_bytes()))
    for path in sorted((ROOT / "examples").glob("*.onnx")):
        out.append((f"example-{path.stem}", path.read_bytes()))
    return out


def all_graphs(g: onnx.GraphProto):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from all_graphs(a.g)
            for sub in a.graphs:
                yield from all_graphs(sub)


def mutate_proto(m: onnx.ModelProto, rng: random.Random) -> str:
    """One structured mutation in place; returns what it did."""
    graphs = list(all_graphs(m.graph))
    g = rng.choice(graphs)
    kind = rng.choice(
        [
            "dims",
            "elem",
            "attr",
            "attr-type",
            "ir",
            "opset",
            "delete",
            "dup",
            "swap",
            "rewire",
            "optype",
            "init-dims",
            "init-type",
            "output",
            "name",
        ]
    )
    nodes = list(g.node)
    if kind == "ir":
        m.ir_version = rng.choice([0, 1, 3, 4, 7, 10, 11, 99, -1 & 0xFFFFFFFF])
    elif kind == "opset" and m.opset_import:
        rng.choice(m.opset_import).version = rng.choice([0, 1, 7, 11, 13, 17, 18, 21, 99])
    elif kind in ("dims", "elem", "output"):
        vis = list(g.input) + list(g.output) + list(g.value_info)
        if not vis:
            return "nothing"
        vi = rng.choice(vis)
        tt = vi.type.tensor_type
        if kind == "dims":
            if tt.shape.dim and rng.random() < 0.7:
                rng.choice(tt.shape.dim).dim_value = rng.choice(EXTREMES + [10**12])
            else:
                tt.shape.dim.add().dim_value = rng.choice(EXTREMES)
        elif kind == "elem":
            tt.elem_type = rng.choice([0, 1, 2, 6, 7, 9, 10, 11, 16, 8, 40])
        else:
            g.output.append(copy.deepcopy(vi))
    elif kind in ("init-dims", "init-type") and g.initializer:
        t = rng.choice(g.initializer)
        if kind == "init-dims":
            if t.dims and rng.random() < 0.7:
                t.dims[rng.randrange(len(t.dims))] = rng.choice(EXTREMES)
            else:
                t.dims.append(rng.choice(EXTREMES))
        else:
            t.data_type = rng.choice([0, 1, 6, 7, 10, 11, 16, 9, 8, 30])
    elif not nodes:
        return "nothing"
    else:
        n = rng.choice(nodes)
        if kind == "attr" and n.attribute:
            a = rng.choice(n.attribute)
            if a.type == onnx.AttributeProto.INT:
                a.i = rng.choice(EXTREMES)
            elif a.type == onnx.AttributeProto.INTS:
                a.ints[:] = [rng.choice(EXTREMES) for _ in range(rng.randrange(0, 5))]
            elif a.type == onnx.AttributeProto.FLOAT:
                a.f = rng.choice([0.0, -1.0, float("nan"), float("inf"), 1e30])
            elif a.type == onnx.AttributeProto.TENSOR:
                a.t.dims.append(rng.choice(EXTREMES))
            else:
                n.attribute.remove(a)
        elif kind == "attr-type" and n.attribute:
            rng.choice(n.attribute).type = rng.choice(list(range(0, 15)))
        elif kind == "delete":
            g.node.remove(n)
        elif kind == "dup":
            g.node.insert(rng.randrange(len(g.node) + 1), copy.deepcopy(n))
        elif kind == "swap" and len(n.input) >= 2:
            i, j = rng.sample(range(len(n.input)), 2)
            n.input[i], n.input[j] = n.input[j], n.input[i]
        elif kind == "rewire":
            names = (
                [o for x in nodes for o in x.output]
                + [i.name for i in g.input]
                + [t.name for t in g.initializer]
                + [""]
            )
            if n.input and rng.random() < 0.7:
                n.input[rng.randrange(len(n.input))] = rng.choice(names)
            elif rng.random() < 0.5 and n.input:
                del n.input[rng.randrange(len(n.input))]
            else:
                n.input.append(rng.choice(names))
        elif kind == "optype":
            n.op_type = rng.choice(OPS)
        elif kind == "name":
            if n.output:
                n.output[rng.randrange(len(n.output))] = rng.choice([o for x in nodes for o in x.output] or ["x"])
    return kind


def mutate_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    b = bytearray(data)
    if rng.random() < 0.2 and len(b) > 1:
        return bytes(b[: rng.randrange(1, len(b))]), "truncate"
    for _ in range(rng.randrange(1, 8)):
        if b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    return bytes(b), "bitflip"


def checker_ok(path: Path) -> bool | None:
    try:
        onnx.checker.check_model(str(path), full_check=True)
        return True
    except Exception:
        return False


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", type=Path, default=ROOT / "build" / "onnxsurgeon")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--out", type=Path, default=Path("/tmp/onnxsurgeon-campaign"))
    ap.add_argument("--scope-rate", type=float, default=0.3, help="share of scope mutants (0 for none, 1 for only)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    seeds = seed_models()
    scoped = scope_seeds() if args.scope_rate > 0 else []
    shutil.rmtree(args.out, ignore_errors=True)
    work = args.out / "work"
    work.mkdir(parents=True)
    counts = {
        "runs": 0,
        "exit0": 0,
        "exit1": 0,
        "exit2": 0,
        "crash": 0,
        "hang": 0,
        "wrote": 0,
        "invalid": 0,
        "multiline": 0,
        "differs": 0,
        "scope_mutants": 0,
        "scope_mutants_checker_valid": 0,
        "input_sets_compared": 0,
    }
    findings, refusals, ort_optimizer = [], [], []
    comparator = Comparator(work)

    def keep(case_name: str, mutant: bytes, info: dict) -> None:
        """Saves a case: the mutant and its command line."""
        case = args.out / case_name
        case.mkdir()
        (case / "in.onnx").write_bytes(mutant)
        (case / "cmd.json").write_text(json.dumps(info, indent=1))

    seed_verdicts: dict[tuple[str, str], bool] = {}

    def seed_passes(seed, pipeline: str) -> bool:
        """Whether the scope seed itself gets through `pipeline` (memoized)."""
        if (seed.name, pipeline) not in seed_verdicts:
            (work / "seed.onnx").write_bytes(seed.data)
            run = [str(args.cli), "--pass", pipeline, str(work / "seed.onnx"), "-o", str(work / "seed-out.onnx")]
            proc = subprocess.run(run, capture_output=True, timeout=args.timeout)
            seed_verdicts[seed.name, pipeline] = proc.returncode == 0
        return seed_verdicts[seed.name, pipeline]

    start = time.time()
    for i in range(args.count):
        name, data = rng.choice(seeds)
        input_sets = None  # the seed's inputs, for a mutant that computes what its seed does
        if scoped and rng.random() < args.scope_rate:
            # Each kind as often as the others: the kind first, then a seed it fits.
            kind, what = rng.choice(sorted(scope_mutators.MUTATORS)), None
            for seed in rng.sample(scoped, len(scoped)):
                m = onnx.ModelProto()
                m.ParseFromString(seed.data)
                if what := scope_mutators.mutate(m, rng, kind):
                    break
            if what is None:
                continue
            for _ in range(rng.choice([0, 0, 1, 2])):  # sometimes stacked: deeper nesting, more clashes
                what += "+" + (scope_mutators.mutate(m, rng) or "nothing")
            name, mutant, input_sets = seed.name, m.SerializeToString(), seed.input_sets
            counts["scope_mutants"] += 1
            counts[f"scope:{kind}"] = counts.get(f"scope:{kind}", 0) + 1
        elif rng.random() < 0.35:
            mutant, what = mutate_bytes(data, rng)
        else:
            m = onnx.ModelProto()
            m.ParseFromString(data)
            what = "+".join(mutate_proto(m, rng) for _ in range(rng.randrange(1, 4)))
            try:
                mutant = m.SerializeToString()
            except Exception:
                continue
        src = work / "in.onnx"
        src.write_bytes(mutant)
        valid_scope_mutant = input_sets is not None and checker_ok(src)
        counts["scope_mutants_checker_valid"] += valid_scope_mutant
        pipeline = rng.choice(SCOPE_PIPELINES if input_sets is not None else PIPELINES)
        out = work / "out.onnx"
        out.unlink(missing_ok=True)
        argv = [str(args.cli), "--pass", pipeline, str(src), "-o", str(out)]
        if rng.random() < 0.1:
            argv = [str(args.cli), "inspect", "--json", str(src)]
        counts["runs"] += 1
        problem = None
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=args.timeout)
            rc, stderr = proc.returncode, proc.stderr
        except subprocess.TimeoutExpired:
            rc, stderr, problem = None, "", "hang"
        if rc is not None:
            counts[f"exit{rc}" if rc in (0, 1, 2) else "crash"] = counts.get(
                f"exit{rc}" if rc in (0, 1, 2) else "crash", 0
            ) + (0 if rc not in (0, 1, 2) else 1)
            if rc < 0 or rc not in (0, 1, 2) or "internal error" in stderr:
                problem = "crash"
            elif rc != 0 and out.exists():
                problem = "wrote"
            elif rc != 0 and len([l for l in stderr.splitlines() if l.strip()]) > 1:
                problem = "multiline"
            elif rc == 0 and argv[1] == "--pass" and not checker_ok(out) and checker_ok(src):
                problem = "invalid"
            elif rc == 0 and argv[1] == "--pass" and input_sets:
                compared, why, optimizer = compare(comparator, src, out, input_sets)
                counts["input_sets_compared"] += compared
                if why:
                    problem, stderr = "differs", why
                elif optimizer:
                    ort_optimizer.append((name, what, pipeline, optimizer))
                    keep(f"ort-optimizer-{i:05d}", mutant, {"seed": name, "mutation": what, "argv": argv[1:]})
                    (args.out / f"ort-optimizer-{i:05d}" / "out.onnx").write_bytes(out.read_bytes())
            elif rc == 1 and valid_scope_mutant and argv[1] == "--pass" and seed_passes(seed, pipeline):
                # Not a broken promise, but a valid model refused where its seed is not:
                # listed, for the leniency review.
                refusals.append((name, what, pipeline, (stderr.strip().splitlines() or [""])[-1][:200]))
                keep(f"refused-{i:05d}", mutant, {"seed": name, "mutation": what, "argv": argv[1:]})
        if problem:
            counts[problem] += 1
            info = {"seed": name, "mutation": what, "argv": argv[1:], "exit": rc, "stderr": stderr[-2000:]}
            keep(f"{problem}-{i:05d}", mutant, info)
            findings.append((problem, name, what, pipeline, (stderr.strip().splitlines() or [""])[-1][:200]))
    counts["seconds"] = round(time.time() - start, 1)
    counts["seed_models"] = len(seeds)
    comparator.close()
    counts["scope_refusals"] = len(refusals)
    counts["ort_optimizer"] = len(ort_optimizer)
    print(json.dumps(counts))
    for f in findings:
        print(" | ".join(map(str, f)))
    for r in refusals:
        print("refused (valid scope mutant) | " + " | ".join(map(str, r)))
    for r in ort_optimizer:
        print("onnxruntime's optimizers fail on the output | " + " | ".join(map(str, r)))
    summary = {"counts": counts, "findings": findings, "scope_refusals": refusals, "ort_optimizer": ort_optimizer}
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    bad = sum(counts[k] for k in ("crash", "hang", "wrote", "invalid", "differs"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
