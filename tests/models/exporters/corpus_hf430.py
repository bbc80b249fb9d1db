"""transformers 4.30 exports (scripts/exporter-venv.sh hf430): attention as transformers
wrote it before its sdpa and eager_attention_forward rewrites.

CLIPAttention there scales q after its projection, splits heads with `_shape()` (view to
[bsz, seq, heads, head_dim], transpose), merges batch and heads with
`.view(bsz * num_heads, -1, head_dim)` and multiplies with torch.bmm on rank-3 values;
the causal mask is added on a [bsz, heads, tgt, src] view of the scores, which are then
viewed back to rank 3. The text tower is exported as diffusers' Stable Diffusion export
script does: int32 input_ids of batch 1 padded to 77 tokens, dynamic axes named on the
input only, TorchScript, opset 14; the outputs keep the shapes the exporter inferred.
"""

from __future__ import annotations

from corpus_common import default_opset
from exporter_lib import Exported, InputSet

EOS = 2
VOCAB = 1000


def _ids(generator, batch: int, length: int):
    """int32 ids, the end-of-text token at the end of the first row and earlier in the
    others: the pooled output gathers each row's hidden state there (input_ids.argmax for
    eos_token_id 2, the original CLIP's legacy rule)."""
    import torch

    ids = torch.randint(3, VOCAB, (batch, length), generator=generator, dtype=torch.int32)
    ids[0, -1] = EOS
    ids[1:, length // 2] = EOS
    return ids


def clip_text_bmm_op14(seed: int) -> Exported:
    import tempfile
    from pathlib import Path

    import onnx
    import torch
    import transformers
    from torch import nn

    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    config = transformers.CLIPTextConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        max_position_embeddings=77,
        projection_dim=16,
        eos_token_id=EOS,
    )
    model = transformers.CLIPTextModel(config).eval()

    class Outputs(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids):
            out = self.inner(input_ids=input_ids, return_dict=False)
            return out[0], out[1]

    wrapper = Outputs(model)
    generator = torch.Generator().manual_seed(seed)
    path = Path(tempfile.mkdtemp(prefix="hf430-clip-")) / "text_encoder.onnx"
    torch.onnx.export(
        wrapper,
        (_ids(generator, 1, 77),),
        str(path),
        input_names=["input_ids"],
        output_names=["last_hidden_state", "pooler_output"],
        dynamic_axes={"input_ids": {0: "batch", 1: "sequence"}},
        opset_version=14,
        do_constant_folding=True,
        dynamo=False,
    )
    sets = []
    for label, batch, length in (("b1s77", 1, 77), ("b3s9", 3, 9)):
        ids = _ids(generator, batch, length)
        with torch.no_grad():
            expected = [t.numpy() for t in wrapper(ids)]
        sets.append((label, {"input_ids": ids.numpy()}, expected))
    (label, feeds, expected), rest = sets[0], sets[1:]
    graph = onnx.load(path)
    return Exported(
        model=graph,
        inputs=feeds,
        expected=expected,
        exporter="torch.onnx (TorchScript)",
        framework="transformers",
        modules={"LayerNorm": 2 * config.num_hidden_layers + 1},
        opset=default_opset(graph),
        tags=["transformer", "clip", "causal-mask", "layernorm", "bmm-attention", "int32-ids"],
        label=label,
        more_sets=[InputSet(lab, f, e) for lab, f, e in rest],
        notes=[
            "expected outputs: the transformers model (torch)",
            f"torch {torch.__version__}, transformers {transformers.__version__}",
        ],
    )
