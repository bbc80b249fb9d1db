"""transformers models built from tiny configs with random weights (no hub downloads).

Wrappers give each model a fixed positional signature and a single tensor output, so
that graph input/output names are stable and the torch reference is one array.
Attention is "eager" everywhere: it is what the exporters turn into plain ONNX ops.
"""

from __future__ import annotations

import contextlib

import torch
from corpus_lib import DYNAMO, TORCHSCRIPT, Spec
from torch import nn

VOCAB = 99
BATCH, SEQ = 2, 8


def _quiet_transformers() -> None:
    import transformers

    transformers.logging.set_verbosity_error()


def _ids(seq: int = SEQ) -> torch.Tensor:
    return torch.randint(0, VOCAB, (BATCH, seq))


def _mask(seq: int = SEQ) -> torch.Tensor:
    """Right padding on the second sequence, so masking is exercised."""
    mask = torch.ones(BATCH, seq, dtype=torch.long)
    mask[1, seq - 3 :] = 0
    return mask


class TextWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]


class Seq2SeqWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask, decoder_input_ids):
        return self.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            return_dict=False,
        )[0]


class ImageWrapper(nn.Module):
    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, pixel_values):
        return self.model(pixel_values=pixel_values, return_dict=False)[0]


@contextlib.contextmanager
def _traceable_causal_masks():
    """Lets the TorchScript tracer through transformers' causal-mask code.

    transformers >= 4.53 builds masks with torch.vmap, which jit tracing rejects
    ("unordered_map::at"); its pre-torch-2.6 implementation is traceable.  Only used on
    the TorchScript path, i.e. when the dynamo export of a causal model has failed.
    """
    import transformers.masking_utils as masking

    saved = masking.sdpa_mask
    masking.sdpa_mask = masking.sdpa_mask_older_torch
    try:
        yield
    finally:
        masking.sdpa_mask = saved


def _bert() -> nn.Module:
    from transformers import BertConfig, BertModel

    _quiet_transformers()
    config = BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_act="gelu",
        attn_implementation="eager",
    )
    return TextWrapper(BertModel(config, add_pooling_layer=False))


_TEXT_AXES = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}


def bert_op14() -> Spec:
    return Spec(
        module=_bert(),
        args=(_ids(), _mask()),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        exporter=TORCHSCRIPT,
        opset=14,
        dynamic_axes={**_TEXT_AXES, "last_hidden_state": {0: "batch", 1: "seq"}},
        tags=["transformer", "bert", "layernorm", "layernorm-decomposed", "gelu-erf"],
    )


def bert_dynamo18() -> Spec:
    return Spec(
        module=_bert(),
        args=(_ids(), _mask()),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state"],
        exporter=DYNAMO,
        opset=18,
        tags=["transformer", "bert", "layernorm", "layernorm-op", "gelu-erf"],
    )


def gpt2_dynamo18() -> Spec:
    from transformers import GPT2Config, GPT2LMHeadModel

    _quiet_transformers()
    config = GPT2Config(
        vocab_size=VOCAB,
        n_embd=32,
        n_layer=2,
        n_head=2,
        n_positions=64,
        activation_function="gelu_new",
        use_cache=False,
        attn_implementation="eager",
    )
    return Spec(
        module=TextWrapper(GPT2LMHeadModel(config)),
        args=(_ids(), _mask()),
        input_names=["input_ids", "attention_mask"],
        output_names=["logits"],
        exporter=DYNAMO,
        opset=18,
        context=_traceable_causal_masks,
        tags=["transformer", "gpt2", "causal", "layernorm", "layernorm-op", "gelu-tanh", "gelu-tanh-pow"],
    )


def vit_op14() -> Spec:
    from transformers import ViTConfig, ViTModel

    _quiet_transformers()
    config = ViTConfig(
        image_size=16,
        patch_size=4,
        num_channels=3,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_act="gelu",
        attn_implementation="eager",
    )
    return Spec(
        module=ImageWrapper(ViTModel(config, add_pooling_layer=False)),
        args=(torch.randn(BATCH, 3, 16, 16),),
        input_names=["pixel_values"],
        output_names=["last_hidden_state"],
        exporter=TORCHSCRIPT,
        opset=14,
        tags=["transformer", "vit", "layernorm", "layernorm-decomposed", "gelu-erf"],
    )


def t5_op14() -> Spec:
    from transformers import T5Config, T5ForConditionalGeneration

    _quiet_transformers()
    config = T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=16,
        d_ff=64,
        num_layers=1,
        num_decoder_layers=1,
        num_heads=2,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=16,
        use_cache=False,
        attn_implementation="eager",
    )
    return Spec(
        module=Seq2SeqWrapper(T5ForConditionalGeneration(config)),
        args=(_ids(), _mask(), _ids(5)),
        input_names=["input_ids", "attention_mask", "decoder_input_ids"],
        output_names=["logits"],
        exporter=TORCHSCRIPT,
        opset=14,
        tags=["transformer", "t5", "encoder-decoder", "rmsnorm", "must-not-fuse-layernorm"],
        notes=["T5LayerNorm is an RMSNorm (no mean subtraction): it must never become LayerNormalization"],
    )


def llama_dynamo18() -> Spec:
    from transformers import LlamaConfig, LlamaForCausalLM

    _quiet_transformers()
    config = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        hidden_act="silu",
        use_cache=False,
        tie_word_embeddings=False,
        attn_implementation="eager",
    )
    return Spec(
        module=TextWrapper(LlamaForCausalLM(config)),
        args=(_ids(), _mask()),
        input_names=["input_ids", "attention_mask"],
        output_names=["logits"],
        exporter=DYNAMO,
        opset=18,
        context=_traceable_causal_masks,
        tags=["transformer", "llama", "causal", "rmsnorm", "silu", "must-not-fuse-layernorm"],
        notes=["LlamaRMSNorm: no mean subtraction; must never become LayerNormalization"],
    )


class ClipTextWrapper(nn.Module):
    """CLIPTextModel: causal mask over the tokens, and the pooled output, which gathers the
    hidden state at each row's end-of-text token (the argmax of input_ids for the original
    vocabulary, eos_token_id=2 in ours)."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        out = self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)
        return out[0], out[1]


def clip_text_op17() -> Spec:
    from transformers import CLIPTextConfig, CLIPTextModel

    _quiet_transformers()
    config = CLIPTextConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=16,
        projection_dim=16,
        hidden_act="quick_gelu",
        eos_token_id=2,
        attn_implementation="eager",
    )
    ids = torch.randint(3, VOCAB, (BATCH, SEQ))
    ids[0, -1] = 2  # end-of-text at the end of the first row, earlier in the second
    ids[1, SEQ - 3] = 2
    return Spec(
        module=ClipTextWrapper(CLIPTextModel(config)),
        args=(ids, _mask()),
        input_names=["input_ids", "attention_mask"],
        output_names=["last_hidden_state", "pooler_output"],
        exporter=TORCHSCRIPT,
        opset=17,
        dynamic_axes={**_TEXT_AXES, "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": {0: "batch"}},
        tags=["transformer", "clip", "causal-mask", "layernorm"],
        context=_traceable_causal_masks,
    )


class ClipProjectionWrapper(nn.Module):
    """CLIPTextModelWithProjection called with input_ids alone: text_embeds, last_hidden_state."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, input_ids):
        out = self.model(input_ids=input_ids, return_dict=False)
        return out[0], out[1]


def clip_text_sdpa_static_op14() -> Spec:
    """The CLIP text tower in the forms clip_text_op17 lacks: torch's
    scaled_dot_product_attention (sdpa), the projection head, input_ids alone, and static
    shapes (batch 1, 77 tokens: what a single-prompt pipeline exports)."""
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection

    _quiet_transformers()
    config = CLIPTextConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=77,
        projection_dim=32,
        eos_token_id=2,
        attn_implementation="sdpa",
    )
    ids = torch.randint(3, VOCAB, (1, 77))
    ids[0, 40] = 2
    return Spec(
        module=ClipProjectionWrapper(CLIPTextModelWithProjection(config)),
        args=(ids,),
        input_names=["input_ids"],
        output_names=["text_embeds", "last_hidden_state"],
        exporter=TORCHSCRIPT,
        opset=14,
        tags=["transformer", "clip", "causal-mask", "layernorm", "sdpa", "static-shape"],
        context=_traceable_causal_masks,
    )
