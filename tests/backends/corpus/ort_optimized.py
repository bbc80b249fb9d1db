"""Text encoders and decoders as onnxruntime's transformer optimizer and quantizer leave
them: the com.microsoft ops (EmbedLayerNormalization, Attention, SkipLayerNormalization,
BiasGelu, FastGelu, SkipSimplifiedLayerNormalization...) and the default-domain
SimplifiedLayerNormalization that only onnxruntime runs, which `--target` must lower for
every other backend.

Each model is a small random-config transformers export (TorchScript, dynamic batch and
sequence: the optimizer's attention fusions match only the dynamic-shape graph), fed at
batch 1 with the last two of 8 positions padding (the harness fixes the shapes for static
backends), then
  - `_ortopt`: optimizer.optimize_model(model_type bert or gpt2, opt_level 1, CPU),
  - `_ortopt_fp16`: the same, then convert_float_to_float16(keep_io_types=True) (float32
    inputs and outputs, float16 inside: onnxruntime's CPU kernels run it),
  - `_ortopt_q8`: the optimizer's output through quantize_dynamic (int8 weights; MatMuls
    become DynamicQuantizeLinear + MatMulInteger, Attention QAttention),
and a decoder with a KV cache, `gpt2_past_op14_ortopt_b1`: a GPT-2 with past through the
optimizer (Attention with past and present; tests/python/gpt2_past_models.py), fed 4
cached positions. Each is checked with one onnxruntime run (finite outputs; onnx's checker
refuses what the optimizer writes in the default domain, LayerNormalization below opset 17
and SimplifiedLayerNormalization, which only onnxruntime registers) before it is written;
the float16 ones carry float16's tolerance (1e-2) in NAME.json, the harness's per-model
tolerance."""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from pathlib import Path

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
HEADS, HIDDEN, LENGTH = 4, 32, 8


def _picked(model, names, key):
    """The model called with keyword inputs (GPT-2's second positional input is the cache),
    keeping one output."""
    from torch import nn

    class Picked(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *args):
            return self.inner(**dict(zip(names, args)))[key]

    return Picked()


def _bert():
    from transformers import BertConfig, BertModel

    cfg = BertConfig(vocab_size=100, max_position_embeddings=32, attn_implementation="eager", **SMALL)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    return _picked(BertModel(cfg, add_pooling_layer=False), names, "last_hidden_state"), names, "bert"


def _distilbert():
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=32)
    cfg._attn_implementation = "eager"
    names = ["input_ids", "attention_mask"]
    return _picked(DistilBertModel(cfg), names, "last_hidden_state"), names, "bert"


def _roberta():
    from transformers import RobertaConfig, RobertaModel

    cfg = RobertaConfig(
        vocab_size=100, max_position_embeddings=40, pad_token_id=0, attn_implementation="eager", **SMALL
    )
    names = ["input_ids", "attention_mask"]
    return _picked(RobertaModel(cfg, add_pooling_layer=False), names, "last_hidden_state"), names, "bert"


def _gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=4, use_cache=False, attn_implementation="eager"
    )
    names = ["input_ids", "attention_mask"]
    return _picked(GPT2LMHeadModel(cfg), names, "logits"), names, "gpt2"


def _llama():
    """The optimizer has no llama type; model_type bert fuses its RMSNorms into
    SimplifiedLayerNormalization and SkipSimplifiedLayerNormalization."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=100,
        num_key_value_heads=2,
        max_position_embeddings=32,
        use_cache=False,
        attn_implementation="eager",
        **SMALL,
    )
    names = ["input_ids", "attention_mask"]
    return _picked(LlamaForCausalLM(cfg), names, "logits"), names, "bert"


ARCHS = {"bert": (_bert, 14), "distilbert": (_distilbert, 14), "roberta": (_roberta, 14), "gpt2": (_gpt2, 14)}
ARCHS["llama"] = (_llama, 17)

# name -> (architecture, variant)
MODELS = {
    f"{arch}_op{ARCHS[arch][1]}_ortopt{'' if v == 'opt' else '_' + v}_b1": (arch, v)
    for arch, variants in {
        "bert": ("opt", "fp16", "q8"),
        "distilbert": ("opt", "q8"),
        "roberta": ("opt",),
        "gpt2": ("opt", "fp16", "q8"),
        "llama": ("opt", "fp16"),
    }.items()
    for v in variants
}


# A GPT-2 with past through the optimizer (com.microsoft Attention with past and present;
# tests/python/gpt2_past_models.py), fed a cache of PAST positions.
DECODERS = {"gpt2_past_op14_ortopt_b1": 4}
ALL = [*MODELS, *DECODERS]


def _decoder_feeds(past: int):
    import numpy as np
    from gpt2_past_models import H, L, N, V

    rng, seq = np.random.default_rng(0), 3
    feeds = {
        "input_ids": rng.integers(0, V, (1, seq)).astype(np.int64),
        "position_ids": np.arange(past, past + seq, dtype=np.int64)[None],
        "attention_mask": np.ones((1, past + seq), np.int64),
    }
    feeds.update({f"past_{i}": rng.standard_normal((2, 1, N, past, H)).astype(np.float32) for i in range(L)})
    return feeds


def _build_decoder(name: str, tmp: Path) -> tuple[Path, dict]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # tests/python
    from gpt2_past_models import export_optimized

    return Path(export_optimized(str(tmp / "gpt2"))), _decoder_feeds(DECODERS[name])


def _feeds(names):
    import numpy as np

    rng = np.random.default_rng(0)
    values = {
        "input_ids": rng.integers(1, 100, (1, LENGTH)).astype(np.int64),
        # the last two positions padding: the masks' lowerings are exercised, not only ones
        "attention_mask": (np.arange(LENGTH) < LENGTH - 2).astype(np.int64)[None],
        "token_type_ids": np.zeros((1, LENGTH), np.int64),
    }
    return {k: values[k] for k in names}


def _export(arch: str, path: Path):
    import torch
    from common import traceable_causal_masks

    build, opset = ARCHS[arch]
    torch.manual_seed(0)
    model, names, model_type = build()
    model.eval()
    feeds = _feeds(names)
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    with torch.no_grad(), traceable_causal_masks():
        torch.onnx.export(
            model,
            tuple(torch.from_numpy(feeds[n]) for n in names),
            str(path),
            opset_version=opset,
            dynamo=False,
            input_names=names,
            output_names=["output"],
            dynamic_axes={**axes, "output": {0: "batch", 1: "sequence"}},
        )
    return feeds, model_type


def _optimize(raw: Path, model_type: str, variant: str, out: Path) -> None:
    import onnx
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime.transformers").setLevel(logging.ERROR)
    optimized = optimize_model(
        str(raw), model_type=model_type, num_heads=HEADS, hidden_size=HIDDEN, opt_level=1, use_gpu=False
    )
    if variant == "fp16":
        optimized.convert_float_to_float16(keep_io_types=True)
    if variant != "q8":
        optimized.save_model_to_file(str(out))
        return
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fp32 = out.with_name(out.name + ".fp32.onnx")
    optimized.save_model_to_file(str(fp32))
    # The optimizer's com.microsoft outputs have no inferred type: say they are float.
    quantize_dynamic(
        str(fp32), str(out), weight_type=QuantType.QInt8, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT}
    )


def build_one(name: str, out: Path) -> None:
    """Exports, optimizes and checks one model, then writes NAME.onnx, NAME.inputs.npz and
    (float16) NAME.json; a model that fails leaves nothing behind."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    with tempfile.TemporaryDirectory() as tmp:
        if name in DECODERS:
            partial, feeds = _build_decoder(name, Path(tmp))
            variant = "opt"
        else:
            arch, variant = MODELS[name]
            raw, partial = Path(tmp) / "raw.onnx", Path(tmp) / "optimized.onnx"
            feeds, model_type = _export(arch, raw)
            _optimize(raw, model_type, variant, partial)
        # No onnx checker: the optimizer writes ops onnx has no schema for at the model's
        # opset (LayerNormalization at 14, SimplifiedLayerNormalization): onnxruntime's own.
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(partial), options, providers=["CPUExecutionProvider"])
        outputs = session.run(None, feeds)
        if not all(np.isfinite(o).all() for o in outputs if o.dtype.kind == "f"):
            raise RuntimeError("onnxruntime gives non-finite outputs")
        if not any(n.domain == "com.microsoft" for n in onnx.load(str(partial)).graph.node):
            raise RuntimeError("the optimizer fused nothing into com.microsoft ops")
        np.savez(out / f"{name}.inputs.npz", **feeds)
        if variant == "fp16":
            (out / f"{name}.json").write_text(json.dumps({"name": name, "rtol": 1e-2, "atol": 1e-2}, indent=1) + "\n")
        partial.replace(out / f"{name}.onnx")
