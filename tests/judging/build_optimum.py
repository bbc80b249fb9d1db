"""Judging-corpus models from the optimum venv (scripts/exporter-venv.sh optimum): decoder
families other than the development corpus's LLaMA, onnxruntime's transformer-optimizer
outputs and onnxruntime's quantizer outputs, each made the way deployment guides say.

  dec_ARCH_with_past / dec_ARCH_merged  optimum's decoder_with_past_model.onnx and
      decoder_model_merged.onnx (tests/models/exporters/corpus_optimum.py's export_family);
      input sets: every branch (use_cache_branch False, True at two past lengths),
      expected outputs from transformers.
  ortopt_*   onnxruntime.transformers.optimizer.optimize_model on an optimum export (BERT
      fp32 and fp16, GPT-2): fused Attention / SkipLayerNormalization / FastGelu
      (com.microsoft) as users ship them.
  quant_*    onnxruntime.quantization: quantize_dynamic, quantize_static QDQ per-channel
      and QOperator, MatMulNBits int4 (MatMulNBitsQuantizer).
Expected outputs: the framework (transformers) for exports; onnxruntime on the model
itself for optimizer/quantizer outputs (there the float model is not the reference: a
quantized model computes something else by design).
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import onnx
from corpus_common import default_opset
from corpus_optimum import export_family, input_sets
from exporter_lib import Exported, InputSet, versions

SMALL = dict(vocab_size=128, max_position_embeddings=64)


def _config(arch: str):
    import transformers as t

    common = dict(attn_implementation="eager", **SMALL)
    if arch == "gpt2":
        return t.GPT2LMHeadModel, t.GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=2, n_head=4)
    if arch == "qwen2":
        return t.Qwen2ForCausalLM, t.Qwen2Config(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=2,
            **common,
        )
    if arch == "mistral":
        return t.MistralForCausalLM, t.MistralConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            sliding_window=None,
            **common,
        )
    if arch == "phi":
        return t.PhiForCausalLM, t.PhiConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            partial_rotary_factor=0.5,
            **common,
        )
    if arch == "gemma":
        return t.GemmaForCausalLM, t.GemmaConfig(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=2,
            num_attention_heads=4,
            num_key_value_heads=1,
            head_dim=8,
            **common,
        )
    if arch == "opt":
        return t.OPTForCausalLM, t.OPTConfig(
            hidden_size=32, ffn_dim=64, num_hidden_layers=2, num_attention_heads=4, word_embed_proj_dim=32, **common
        )
    if arch == "gpt_neox":
        return t.GPTNeoXForCausalLM, t.GPTNeoXConfig(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, rotary_pct=0.5, **common
        )
    raise KeyError(arch)


@functools.lru_cache(maxsize=None)
def _family(arch: str):
    import torch
    import transformers

    transformers.logging.set_verbosity_error()
    torch.manual_seed(11)
    model_cls, config = _config(arch)
    model = model_cls(config).eval()
    folder = Path(tempfile.mkdtemp(prefix=f"judging-{arch}-"))
    return model, export_family(model, folder)


def _versions_note() -> str:
    return f"versions: {versions('torch', 'transformers', 'optimum', 'optimum-onnx', 'onnxruntime')}"


def _decoder(arch: str, part: str) -> Exported:
    model, paths = _family(arch)
    graph = onnx.load(paths[part])
    sets = input_sets(part, model, graph, 5)
    outputs = [o.name for o in graph.graph.output]
    label, feeds, expected = sets[0]
    return Exported(
        model=graph,
        inputs=feeds,
        expected=[expected[n] for n in outputs],
        exporter="optimum",
        framework="optimum-onnx",
        modules={},
        opset=default_opset(graph),
        tags=["decoder", *(["merged-decoder"] if part == "merged" else [])],
        label=label,
        more_sets=[InputSet(lab, f, [e[n] for n in outputs]) for lab, f, e in sets[1:]],
        rtol=1e-3,
        atol=1e-4,
        notes=["expected outputs: transformers (torch)", _versions_note()],
    )


def _make_decoder_builders():
    built = {}
    for arch in ("gpt2", "qwen2", "mistral", "phi", "gemma", "opt", "gpt_neox"):
        for part in ("decoder_with_past", "merged"):
            built[f"dec_{arch}_{part}"] = functools.partial(_decoder, arch, part)
    return built


DECODERS = _make_decoder_builders()


# ------------------------------------------------- onnxruntime optimizer / quantizer


@functools.lru_cache(maxsize=None)
def _bert_export() -> tuple[Path, dict]:
    """A BERT encoder exported by optimum's main_export (feature-extraction), and inputs."""
    import torch
    import transformers as t
    from optimum.exporters.onnx import main_export

    t.logging.set_verbosity_error()
    torch.manual_seed(3)
    config = t.BertConfig(
        vocab_size=128,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    folder = Path(tempfile.mkdtemp(prefix="judging-bert-"))
    t.BertModel(config).eval().save_pretrained(folder / "src")
    main_export(
        str(folder / "src"), folder / "out", task="feature-extraction", do_validation=False, library_name="transformers"
    )
    rng = np.random.default_rng(3)
    mask = np.ones((2, 8), np.int64)
    mask[1, 6:] = 0
    feeds = {
        "input_ids": rng.integers(0, 128, (2, 8)).astype(np.int64),
        "attention_mask": mask,
        "token_type_ids": np.zeros((2, 8), np.int64),
    }
    return folder / "out" / "model.onnx", feeds


def _run(model: onnx.ModelProto, feeds: dict) -> list[np.ndarray]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


def _from_runtime(model: onnx.ModelProto, feeds: dict, exporter: str, tags, notes, rtol=1e-3, atol=1e-4) -> Exported:
    initializers = {i.name for i in model.graph.initializer}
    order = [i.name for i in model.graph.input if i.name not in initializers]
    feeds = {n: feeds[n] for n in order}
    return Exported(
        model=model,
        inputs=feeds,
        expected=_run(model, feeds),
        exporter=exporter,
        framework="onnxruntime",
        modules={},
        opset=default_opset(model),
        tags=list(tags),
        rtol=rtol,
        atol=atol,
        notes=[*notes, "expected outputs: onnxruntime on this model (no framework computes it)", _versions_note()],
    )


def ortopt_bert_fp32(seed: int) -> Exported:
    from onnxruntime.transformers.optimizer import optimize_model

    path, feeds = _bert_export()
    optimized = optimize_model(str(path), model_type="bert", num_heads=4, hidden_size=32, opt_level=1)
    return _from_runtime(optimized.model, feeds, "ort-transformers-optimizer", ["ort-optimized", "encoder"], [])


def ortopt_bert_fp16(seed: int) -> Exported:
    from onnxruntime.transformers.optimizer import optimize_model

    path, feeds = _bert_export()
    optimized = optimize_model(str(path), model_type="bert", num_heads=4, hidden_size=32, opt_level=1)
    optimized.convert_float_to_float16(keep_io_types=True)
    return _from_runtime(
        optimized.model,
        feeds,
        "ort-transformers-optimizer",
        ["ort-optimized", "fp16", "encoder"],
        [],
        rtol=1e-2,
        atol=1e-3,
    )


def ortopt_gpt2(seed: int) -> Exported:
    from onnxruntime.transformers.optimizer import optimize_model

    model, paths = _family("gpt2")
    optimized = optimize_model(
        str(paths["decoder_with_past"]), model_type="gpt2", num_heads=4, hidden_size=32, opt_level=1
    )
    graph = onnx.load(paths["decoder_with_past"])
    _, feeds, _ = input_sets("decoder_with_past", model, graph, 5)[0]
    return _from_runtime(optimized.model, feeds, "ort-transformers-optimizer", ["ort-optimized", "decoder"], [])


def quant_dynamic_bert(seed: int) -> Exported:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    path, feeds = _bert_export()
    out = path.with_name("dynamic.onnx")
    quantize_dynamic(str(path), str(out), weight_type=QuantType.QInt8)
    return _from_runtime(
        onnx.load(out), feeds, "ort-quantize-dynamic", ["quantized", "encoder"], [], rtol=1e-3, atol=1e-4
    )


class _Reader:
    """Calibration data for quantize_static: a few random input sets."""

    def __init__(self, feeds: dict, count: int = 4):
        rng = np.random.default_rng(0)
        self.items = iter(
            [
                {
                    k: (v if v.dtype.kind != "f" else rng.standard_normal(v.shape).astype(v.dtype))
                    for k, v in feeds.items()
                }
                for _ in range(count)
            ]
        )

    def get_next(self):
        return next(self.items, None)


def _static(fmt: str, per_channel: bool) -> Exported:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    path, feeds = _cnn_export()
    pre = path.with_name("pre.onnx")
    quant_pre_process(str(path), str(pre))
    out = path.with_name(f"static_{fmt}_{per_channel}.onnx")
    quantize_static(
        str(pre),
        str(out),
        _Reader(feeds),
        quant_format=QuantFormat.QDQ if fmt == "qdq" else QuantFormat.QOperator,
        per_channel=per_channel,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
    )
    return _from_runtime(
        onnx.load(out), feeds, f"ort-quantize-static-{fmt}", ["quantized", "cnn"], [], rtol=1e-3, atol=1e-4
    )


@functools.lru_cache(maxsize=None)
def _cnn_export() -> tuple[Path, dict]:
    """A small ResNet-style CNN (torch.onnx, opset 17, batch 1) to quantize statically."""
    import torch
    from torch import nn

    torch.manual_seed(4)

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.a, self.b = nn.Conv2d(c, c, 3, 1, 1), nn.Conv2d(c, c, 3, 1, 1)

        def forward(self, x):
            return torch.relu(x + self.b(torch.relu(self.a(x))))

    net = nn.Sequential(
        nn.Conv2d(3, 16, 3, 2, 1),
        nn.ReLU(),
        Block(16),
        nn.MaxPool2d(2),
        Block(16),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(16, 10),
    ).eval()
    folder = Path(tempfile.mkdtemp(prefix="judging-cnn-"))
    x = torch.randn(1, 3, 32, 32)
    torch.onnx.export(
        net, (x,), folder / "cnn.onnx", input_names=["x"], output_names=["y"], opset_version=17, dynamo=False
    )
    return folder / "cnn.onnx", {"x": x.numpy()}


def quant_static_qdq_per_channel(seed: int) -> Exported:
    return _static("qdq", True)


def quant_static_qoperator(seed: int) -> Exported:
    return _static("qoperator", False)


def quant_matmulnbits_int4(seed: int) -> Exported:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    path, feeds = _bert_export()
    model = onnx.load(path)
    quantizer = MatMulNBitsQuantizer(model, block_size=16, is_symmetric=True)
    quantizer.process()
    return _from_runtime(
        quantizer.model.model, feeds, "ort-matmulnbits", ["quantized", "int4", "encoder"], [], rtol=1e-3, atol=1e-4
    )


def __getattr__(name: str):
    """dec_* builders are made from a table (run.py looks builders up by name)."""
    if name in DECODERS:
        return lambda seed: DECODERS[name]()
    raise AttributeError(name)
