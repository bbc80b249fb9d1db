"""What the batch-1 corpus builders share: a wrapper that keeps one output of a Hugging Face
model, and the input spec format.

A builder returns (module, inputs, output_names, opset); inputs maps each graph input to
(kind, shape): "randn" (image, audio, features) or "tokens" (int64 ids in 1..99, so every
text config has vocab_size >= 100).
"""

from __future__ import annotations

import contextlib


def picked(model, key: str = "last_hidden_state"):
    """The model with only `key` of its output (a ModelOutput or tuple), so the graph has one
    output; `key` an int picks by position."""
    from torch import nn

    class Picked(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *args):
            out = self.inner(*args)
            return out[key] if isinstance(key, str) else out[key]

    return Picked()


def image(size: int = 32, channels: int = 3, name: str = "pixel_values") -> dict:
    return {name: ("randn", (1, channels, size, size))}


def tokens(length: int = 8, name: str = "input_ids") -> dict:
    return {name: ("tokens", (1, length))}


@contextlib.contextmanager
def traceable_causal_masks():
    """transformers >= 4.53 builds causal masks with torch.vmap, which the TorchScript tracer
    rejects ("unordered_map::at"); its pre-torch-2.6 implementation traces (as
    tests/models/corpus_hf.py does). Harmless for models without a causal mask."""
    import transformers.masking_utils as masking

    saved = masking.sdpa_mask
    masking.sdpa_mask = masking.sdpa_mask_older_torch
    try:
        yield
    finally:
        masking.sdpa_mask = saved
