"""Decoder families as Hugging Face optimum exports them (scripts/exporter-venv.sh optimum).

optimum writes a decoder-only LM three ways: decoder_model.onnx (no past in, present
out), decoder_with_past_model.onnx (past in) and decoder_model_merged.onnx, where
optimum.onnx.merge_decoders puts both graphs in the branches of one If on
`use_cache_branch`. Both branches reuse hundreds of value names with different shapes:
valid ONNX (each branch is its own scope), and exactly what broke `simplify` on users'
models. optimum-onnx 0.1.0's main_export writes a single with-past model for decoders, so
the family is made with its own pieces, as its post-processing did: export() once per
OnnxConfig (use_past_in_inputs False, then True), then merge_decoders.

Expected outputs come from the transformers model itself (logits and the present keys and
values), on every input set: the merged decoder with use_cache_branch False (past ignored,
fed empty) and True at two past lengths, so both branches run.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import onnx
from corpus_common import default_opset
from exporter_lib import Exported, InputSet

FAMILY_FILES = {
    "decoder": "decoder_model.onnx",
    "decoder_with_past": "decoder_with_past_model.onnx",
    "merged": "decoder_model_merged.onnx",
}


def _llama(seed: int):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attn_implementation="eager",
    )
    return LlamaForCausalLM(config).eval()


def export_family(model, out: Path, opset: int | None = None) -> dict[str, Path]:
    """Exports `model` (a transformers causal LM) as optimum's decoder family into `out`."""
    from optimum.exporters.onnx import export
    from optimum.exporters.tasks import TasksManager
    from optimum.onnx import merge_decoders

    constructor = TasksManager.get_exporter_config_constructor(
        exporter="onnx", model=model, task="text-generation-with-past", library_name="transformers"
    )
    without_past = constructor(model.config, task="text-generation", use_past=True, use_past_in_inputs=False)
    with_past = constructor(model.config, task="text-generation", use_past=True, use_past_in_inputs=True)
    opset = opset or without_past.DEFAULT_ONNX_OPSET
    paths = {part: out / name for part, name in FAMILY_FILES.items()}
    export(model=model, config=without_past, output=paths["decoder"], opset=opset)
    export(model=model, config=with_past, output=paths["decoder_with_past"], opset=opset)
    merge_decoders(paths["decoder"], paths["decoder_with_past"], save_path=paths["merged"])
    return paths


def _torch_step(model, input_ids, past_length: int, seed: int):
    """One forward step of the transformers model: past of `past_length` tokens made by
    running the model on random earlier tokens (a real cache, not noise), then the new
    tokens. Returns (feeds without past, past tensors by ONNX name, outputs by ONNX name)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    vocab = model.config.vocab_size
    batch, length = input_ids.shape
    past = None
    past_feeds = {}
    if past_length:
        earlier = torch.randint(0, vocab, (batch, past_length), generator=generator)
        with torch.no_grad():
            past = model(earlier, use_cache=True).past_key_values
        legacy = past.to_legacy_cache() if hasattr(past, "to_legacy_cache") else past
        for layer, (key, value) in enumerate(legacy):
            past_feeds[f"past_key_values.{layer}.key"] = key.numpy()
            past_feeds[f"past_key_values.{layer}.value"] = value.numpy()
    attention_mask = torch.ones(batch, past_length + length, dtype=torch.int64)
    position_ids = torch.arange(past_length, past_length + length, dtype=torch.int64).expand(batch, length)
    with torch.no_grad():
        result = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            position_ids=position_ids,
            past_key_values=past,
            use_cache=True,
        )
    present = result.past_key_values
    present = present.to_legacy_cache() if hasattr(present, "to_legacy_cache") else present
    outputs = {"logits": result.logits.numpy()}
    for layer, (key, value) in enumerate(present):
        outputs[f"present.{layer}.key"] = key.numpy()
        outputs[f"present.{layer}.value"] = value.numpy()
    feeds = {
        "input_ids": input_ids.numpy(),
        "attention_mask": attention_mask.numpy(),
        "position_ids": position_ids.numpy(),
    }
    return feeds, past_feeds, outputs


def _empty_past(model, batch: int) -> dict[str, np.ndarray]:
    """Past inputs of length 0, as optimum's ORTModelForCausalLM feeds the no-cache branch."""
    config = model.config
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    shape = (batch, heads, 0, head_dim)
    return {
        f"past_key_values.{layer}.{kind}": np.zeros(shape, np.float32)
        for layer in range(config.num_hidden_layers)
        for kind in ("key", "value")
    }


def input_sets(part: str, model, graph: onnx.ModelProto, seed: int) -> list[tuple[str, dict, dict]]:
    """(label, feeds in graph-input order, expected by output name) for one family member."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    vocab = model.config.vocab_size
    cases = []
    if part in ("decoder", "merged"):
        ids = torch.randint(0, vocab, (1, 5), generator=generator)
        feeds, _, outputs = _torch_step(model, ids, 0, seed)
        if part == "merged":
            feeds.update(_empty_past(model, 1))
            feeds["use_cache_branch"] = np.array([False])
        cases.append(("no_cache" if part == "merged" else "prompt5", feeds, outputs))
    if part in ("decoder_with_past", "merged"):
        for past_length in (3, 7):
            ids = torch.randint(0, vocab, (1, 1), generator=generator)
            feeds, past, outputs = _torch_step(model, ids, past_length, seed + past_length)
            feeds.update(past)
            if part == "merged":
                feeds["use_cache_branch"] = np.array([True])
            cases.append((f"past{past_length}", feeds, outputs))
    initializers = {i.name for i in graph.graph.initializer}
    order = [i.name for i in graph.graph.input if i.name not in initializers]
    outputs_order = [o.name for o in graph.graph.output]
    return [
        (label, {n: feeds[n] for n in order}, {n: outputs[n] for n in outputs_order}) for label, feeds, outputs in cases
    ]


@functools.lru_cache(maxsize=None)
def _family(architecture: str, seed: int):
    """Exports a family once per process (run.py builds the three members in one process)."""
    model = {"llama": _llama}[architecture](seed)
    folder = Path(tempfile.mkdtemp(prefix=f"optimum-{architecture}-"))
    return model, export_family(model, folder)


def _member(architecture: str, part: str, seed: int, tags: list[str]) -> Exported:
    model, paths = _family(architecture, seed)
    graph = onnx.load(paths[part])
    sets = input_sets(part, model, graph, seed)
    label, feeds, expected = sets[0]
    outputs = [o.name for o in graph.graph.output]
    return Exported(
        model=graph,
        inputs=feeds,
        expected=[expected[n] for n in outputs],
        exporter="optimum",
        framework="optimum-onnx",
        modules={"RMSNorm": 2 * model.config.num_hidden_layers + 1, "SiLU": model.config.num_hidden_layers},
        opset=default_opset(graph),
        tags=tags + ["decoder", *(["merged-decoder"] if part == "merged" else [])],
        label=label,
        more_sets=[InputSet(lab, f, [e[n] for n in outputs]) for lab, f, e in sets[1:]],
        rtol=1e-4,
        atol=1e-4,
        notes=[
            "expected outputs: the transformers model (torch), with a real cache for the past inputs",
            f"torch {_version('torch')}, transformers {_version('transformers')}",
        ],
    )


def _version(package: str) -> str:
    import importlib.metadata

    return importlib.metadata.version(package)


def llama_decoder(seed: int) -> Exported:
    return _member("llama", "decoder", 7, [])


def llama_decoder_with_past(seed: int) -> Exported:
    return _member("llama", "decoder_with_past", 7, [])


def llama_merged(seed: int) -> Exported:
    return _member("llama", "merged", 7, [])


# ---- CLIP text tower -----------------------------------------------------------------------


def _clip_text_projection(seed: int):
    import torch
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection

    torch.manual_seed(seed)
    config = CLIPTextConfig(
        vocab_size=1000,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=77,
        projection_dim=16,
        eos_token_id=2,
        output_hidden_states=True,
    )
    return CLIPTextModelWithProjection(config).eval()


def _clip_ids(generator, batch: int, length: int, eos: int):
    """Token ids with the end-of-text token at the end of the first row and earlier in the
    others (the pooled output gathers each row's hidden state there)."""
    import torch

    ids = torch.randint(3, 1000, (batch, length), generator=generator)
    ids[0, -1] = eos
    ids[1:, length // 2] = eos
    return ids


def clip_text_projection(seed: int) -> Exported:
    """CLIPTextModelWithProjection as optimum exports Stable Diffusion XL's second text
    encoder (CLIPTextWithProjectionOnnxConfig, output_hidden_states): input_ids alone, the
    projected text_embeds, last_hidden_state and every layer's hidden state as outputs.
    optimum declares text_embeds [batch_size, sequence_length] while it computes
    [batch_size, projection_dim]: a declared dim that names the input's sequence length
    and contradicts the computation. Two input sets, at sequence lengths 7 and 16 (the
    projection dim), so that a rule binding the sequence length to 16 is caught."""
    import torch
    from optimum.exporters.onnx import export
    from optimum.exporters.onnx.model_configs import CLIPTextWithProjectionOnnxConfig

    model = _clip_text_projection(seed)
    folder = Path(tempfile.mkdtemp(prefix="optimum-clip-"))
    path = folder / "text_encoder_2.onnx"
    onnx_config = CLIPTextWithProjectionOnnxConfig(model.config, task="feature-extraction")
    export(model=model, config=onnx_config, output=path, opset=onnx_config.DEFAULT_ONNX_OPSET)
    graph = onnx.load(path)
    outputs = [o.name for o in graph.graph.output]
    generator = torch.Generator().manual_seed(seed)
    sets = []
    for label, batch, length in (("seq7", 2, 7), ("seq16", 3, 16)):
        ids = _clip_ids(generator, batch, length, model.config.eos_token_id)
        with torch.no_grad():
            result = model(input_ids=ids, output_hidden_states=True)
        by_name = {"text_embeds": result.text_embeds, "last_hidden_state": result.last_hidden_state}
        by_name.update({f"hidden_states.{i}": h for i, h in enumerate(result.hidden_states)})
        sets.append((label, {"input_ids": ids.numpy()}, [by_name[n].numpy() for n in outputs]))
    (label, feeds, expected), rest = sets[0], sets[1:]
    return Exported(
        model=graph,
        inputs=feeds,
        expected=expected,
        exporter="optimum",
        framework="optimum-onnx",
        modules={"LayerNorm": 2 * model.config.num_hidden_layers + 1},
        opset=default_opset(graph),
        tags=["transformer", "clip", "causal-mask", "layernorm", "stale-declaration"],
        label=label,
        more_sets=[InputSet(lab, f, e) for lab, f, e in rest],
        notes=[
            "expected outputs: the transformers model (torch)",
            "text_embeds declared [batch_size, sequence_length] by optimum; it is [batch_size, 16]",
            f"torch {_version('torch')}, transformers {_version('transformers')}",
        ],
    )
