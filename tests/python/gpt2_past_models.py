"""A GPT-2 with past as transformers 4.6 wrote it, the layout onnxruntime's GPT-2 attention
fusion (onnxruntime/transformers/fusion_gpt_attention.py) matches: past_i [2, B, N, P, H] in,
present_i stacked out, the causal mask sliced from a bool buffer by the scores' shape, the
input mask as (1 - mask) * -10000. Today's transformers GPT-2 exports a mask the fusion does
not match (and onnxruntime's own gpt2 convert_to_onnx fails under torch 2.x tracing), so the
model is written here; exported by TorchScript and optimized it gives com.microsoft Attention
with past and present (and EmbedLayerNormalization, SkipLayerNormalization, FastGelu)."""

from __future__ import annotations

import math

import torch
from torch import nn
from transformers.pytorch_utils import Conv1D

E, N, L, V, P = 64, 4, 2, 128, 64
H = E // N


class Attn(nn.Module):
    def __init__(s):
        super().__init__()
        s.register_buffer("bias", torch.tril(torch.ones((P, P), dtype=torch.bool)).view(1, 1, P, P))
        s.register_buffer("masked_bias", torch.tensor(-1e4))
        s.c_attn, s.c_proj = Conv1D(3 * E, E), Conv1D(E, E)

    def heads(s, x, k=False):
        x = x.view(x.size()[:-1] + (N, H))
        return x.permute(0, 2, 3, 1) if k else x.permute(0, 2, 1, 3)

    def forward(s, x, past, mask):
        q, k, v = s.c_attn(x).split(E, dim=2)
        q, k, v = s.heads(q), s.heads(k, True), s.heads(v)
        k = torch.cat((past[0].transpose(-2, -1), k), dim=-1)
        v = torch.cat((past[1], v), dim=-2)
        present = torch.stack((k.transpose(-2, -1), v))
        w = torch.matmul(q, k) / math.sqrt(H)
        shape = torch._shape_as_tensor(w)
        nd, ns = shape[-2:-1].squeeze(0), shape[-1:].squeeze(0)
        causal = s.bias[:, :, ns - nd : ns, :ns]
        w = torch.where(causal, w, s.masked_bias.to(w.dtype))
        w = w + mask
        a = torch.matmul(torch.softmax(w, dim=-1), v)
        a = a.permute(0, 2, 1, 3).contiguous()
        a = a.view(a.size()[:-2] + (E,))
        return s.c_proj(a), present


class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.ln_1, s.ln_2, s.attn = nn.LayerNorm(E), nn.LayerNorm(E), Attn()
        s.fc, s.proj = Conv1D(4 * E, E), Conv1D(E, 4 * E)

    def forward(s, x, past, mask):
        a, present = s.attn(s.ln_1(x), past, mask)
        x = x + a
        h = s.fc(s.ln_2(x))
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * torch.pow(h, 3.0))))
        return x + s.proj(h), present


class GPT2(nn.Module):
    def __init__(s):
        super().__init__()
        s.wte, s.wpe = nn.Embedding(V, E), nn.Embedding(P, E)
        s.h = nn.ModuleList(Block() for _ in range(L))
        s.ln_f = nn.LayerNorm(E)

    def forward(s, input_ids, position_ids, attention_mask, *past):
        x = s.wte(input_ids) + s.wpe(position_ids)
        mask = attention_mask.view(input_ids.size(0), -1)[:, None, None, :].to(x.dtype)
        mask = (1.0 - mask) * -10000.0
        presents = []
        for block, p in zip(s.h, past):
            x, present = block(x, p, mask)
            presents.append(present)
        return (torch.matmul(s.ln_f(x), s.wte.weight.t()),) + tuple(presents)


def export_optimized(path_prefix):
    """Writes PREFIX_raw.onnx (TorchScript, opset 14) and PREFIX_opt.onnx (onnxruntime's
    transformer optimizer, model_type gpt2); returns the optimized model's path."""
    from onnxruntime.transformers import optimizer

    torch.manual_seed(0)
    model = GPT2().eval()
    for p in model.parameters():
        nn.init.normal_(p, std=0.2)
    B, S, PL = 2, 3, 4
    ids = torch.randint(0, V, (B, S))
    pos = torch.arange(PL, PL + S).expand(B, S)
    mask = torch.ones(B, PL + S, dtype=torch.int64)
    past = [torch.randn(2, B, N, PL, H) for _ in range(L)]
    names = [f"past_{i}" for i in range(L)]
    outs = ["logits"] + [f"present_{i}" for i in range(L)]
    dyn = {
        "input_ids": {0: "batch", 1: "seq"},
        "position_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "total"},
        "logits": {0: "batch", 1: "seq"},
    }
    dyn.update({n: {1: "batch", 3: "past"} for n in names})
    dyn.update({o: {1: "batch", 3: "total"} for o in outs[1:]})
    raw, opt = f"{path_prefix}_raw.onnx", f"{path_prefix}_opt.onnx"
    torch.onnx.export(
        model,
        (ids, pos, mask, *past),
        raw,
        input_names=["input_ids", "position_ids", "attention_mask", *names],
        output_names=outs,
        dynamic_axes=dyn,
        opset_version=14,
        dynamo=False,
    )
    optimizer.optimize_model(raw, model_type="gpt2", num_heads=N, hidden_size=E, opt_level=0).save_model_to_file(opt)
    return opt
