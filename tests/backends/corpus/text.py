"""Text encoders and decoders (transformers, small random configs), batch 1, input_ids only
(single-sequence deployments feed no mask). Decoders run without past key/values: logits
for a fixed sequence."""

from __future__ import annotations

from common import picked, tokens

SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)


def _distilbert(opset):
    from transformers import DistilBertConfig, DistilBertModel

    cfg = DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=32)
    return picked(DistilBertModel(cfg)), tokens(), ["last_hidden_state"], opset


def _roberta(opset):
    from transformers import RobertaConfig, RobertaModel

    cfg = RobertaConfig(vocab_size=100, max_position_embeddings=40, pad_token_id=0, **SMALL)
    return picked(RobertaModel(cfg, add_pooling_layer=False)), tokens(), ["last_hidden_state"], opset


def _albert(opset):
    from transformers import AlbertConfig, AlbertModel

    cfg = AlbertConfig(vocab_size=100, embedding_size=16, max_position_embeddings=32, **SMALL)
    return picked(AlbertModel(cfg, add_pooling_layer=False)), tokens(), ["last_hidden_state"], opset


def _electra(opset):
    from transformers import ElectraConfig, ElectraModel

    cfg = ElectraConfig(vocab_size=100, embedding_size=16, max_position_embeddings=32, **SMALL)
    return picked(ElectraModel(cfg)), tokens(), ["last_hidden_state"], opset


def _t5_encoder(opset):
    from transformers import T5Config, T5EncoderModel

    cfg = T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4)
    return picked(T5EncoderModel(cfg)), tokens(), ["last_hidden_state"], opset


def _decoder(model):
    """Logits for input_ids alone, with the all-ones mask made inside the graph: without a
    mask transformers looks for packed sequences in the positions, which does not trace."""
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, input_ids):
            return self.inner(input_ids=input_ids, attention_mask=torch.ones_like(input_ids)).logits

    return Decoder()


def _gpt2(opset):
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(
        vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=4, use_cache=False, attn_implementation="eager"
    )
    return _decoder(GPT2LMHeadModel(cfg)), tokens(), ["logits"], opset


def _llama(opset):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(
        vocab_size=100,
        num_key_value_heads=2,
        max_position_embeddings=32,
        use_cache=False,
        attn_implementation="eager",
        **SMALL,
    )
    return _decoder(LlamaForCausalLM(cfg)), tokens(), ["logits"], opset


def _qwen2(opset):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(
        vocab_size=100,
        num_key_value_heads=2,
        max_position_embeddings=32,
        use_cache=False,
        attn_implementation="eager",
        **SMALL,
    )
    return _decoder(Qwen2ForCausalLM(cfg)), tokens(), ["logits"], opset


MODELS = {
    "distilbert_op14_b1": lambda: _distilbert(14),
    "roberta_op14_b1": lambda: _roberta(14),
    "albert_op14_b1": lambda: _albert(14),
    "electra_op17_b1": lambda: _electra(17),
    "t5_encoder_op14_b1": lambda: _t5_encoder(14),
    "gpt2_op14_b1": lambda: _gpt2(14),
    "llama_op17_b1": lambda: _llama(17),
    "qwen2_op17_b1": lambda: _qwen2(17),
}
