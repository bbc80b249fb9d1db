#!/usr/bin/env python3
"""Exports the Kokoro-82M TTS architecture, from kokoro's own model code (PyPI `kokoro`,
pinned below) with a small config and random weights, for the backend harness.

    python tests/backends/kokoro_corpus.py [--out DIR]     (default build/backends/corpus)

Writes kokoro_predictor_op17.onnx and .inputs.npz (the harness's corpus layout). The model
is KModel.forward_with_tokens up to the vocoder: the ALBERT text encoder, the prosody
predictor (DurationEncoder with AdaLayerNorm and packed BiLSTMs, duration head), the
F0/energy predictor (AdaIN residual blocks with a ConvTranspose1d upsample) and the
TextEncoder (Conv1d + channels-first LayerNorm + BiLSTM), with the alignment that
the predicted durations make given as an input. The vocoder is left out: its SineGen
draws noise at run time (torch.rand, torch.randn_like -> RandomUniformLike,
RandomNormalLike), so no two runtimes can be compared on its output.

kokoro's package __init__ imports its G2P front end (misaki, spacy); the model modules
do not, so they are imported from the unpacked wheel without running it. The wheel is
fetched with pip into .backends/kokoro-src (nothing is installed into any venv).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KOKORO = "kokoro==0.9.4"
SRC = ROOT / ".backends" / "kokoro-src"
NAME = "kokoro_predictor_op17"


def kokoro_modules():
    if not (SRC / "kokoro" / "modules.py").is_file():
        SRC.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(SRC), KOKORO], check=True)
        wheel = next(SRC.glob("kokoro-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            z.extractall(SRC)
    try:  # custom_stft.py starts with a stray, unused `from attr import attr` (attrs)
        import attr  # noqa: F401
    except ImportError:
        sys.modules["attr"] = types.SimpleNamespace(attr=None)
    package = types.ModuleType("kokoro")  # the package without its __init__ (see above)
    package.__path__ = [str(SRC / "kokoro")]
    sys.modules["kokoro"] = package
    from kokoro import modules

    return modules


def build():
    import torch
    from transformers import AlbertConfig

    m = kokoro_modules()
    hidden, style, n_token = 64, 128, 64  # style 128: forward_with_tokens slices ref_s at 128

    class KokoroPredictor(torch.nn.Module):
        """KModel.forward_with_tokens without the vocoder, alignment given (see above)."""

        def __init__(self):
            super().__init__()
            self.bert = m.CustomAlbert(
                AlbertConfig(
                    vocab_size=n_token,
                    embedding_size=32,
                    hidden_size=hidden,
                    num_attention_heads=2,
                    intermediate_size=128,
                    num_hidden_layers=2,
                    max_position_embeddings=64,
                )
            )
            self.bert_encoder = torch.nn.Linear(hidden, hidden)
            self.predictor = m.ProsodyPredictor(style_dim=style, d_hid=hidden, nlayers=2, max_dur=20, dropout=0.2)
            self.text_encoder = m.TextEncoder(channels=hidden, kernel_size=5, depth=2, n_symbols=n_token)

        def forward(self, input_ids, ref_s, alignment):
            input_lengths = torch.full((input_ids.shape[0],), input_ids.shape[-1], dtype=torch.long)
            text_mask = torch.arange(input_ids.shape[-1]).unsqueeze(0).expand(input_ids.shape[0], -1)
            text_mask = torch.gt(text_mask + 1, input_lengths.unsqueeze(1))
            bert_dur = self.bert(input_ids, attention_mask=(~text_mask).int())
            d_en = self.bert_encoder(bert_dur).transpose(-1, -2)
            s = ref_s[:, 128:]
            d = self.predictor.text_encoder(d_en, s, input_lengths, text_mask)
            x, _ = self.predictor.lstm(d)
            duration = torch.sigmoid(self.predictor.duration_proj(x)).sum(axis=-1)
            en = d.transpose(-1, -2) @ alignment
            f0, n = self.predictor.F0Ntrain(en, s)
            asr = self.text_encoder(input_ids, input_lengths, text_mask) @ alignment
            return duration, f0, n, asr

    torch.manual_seed(0)
    model = KokoroPredictor().eval()
    tokens = 12
    durations = torch.randint(1, 4, (tokens,))
    frames = int(durations.sum())
    alignment = torch.zeros(1, tokens, frames)
    alignment[0, torch.repeat_interleave(torch.arange(tokens), durations), torch.arange(frames)] = 1
    input_ids = torch.randint(1, n_token, (1, tokens))
    ref_s = torch.randn(1, 256)
    return model, (input_ids, ref_s, alignment)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build/backends/corpus")
    args = parser.parse_args(argv)
    import numpy as np
    import torch

    model, inputs = build()
    args.out.mkdir(parents=True, exist_ok=True)
    names = ["input_ids", "ref_s", "alignment"]
    with torch.no_grad():
        torch.onnx.export(
            model,
            inputs,
            str(args.out / f"{NAME}.onnx"),
            opset_version=17,
            dynamo=False,
            input_names=names,
            output_names=["duration", "f0", "n", "asr"],
        )
    np.savez(args.out / f"{NAME}.inputs.npz", **{n: t.numpy() for n, t in zip(names, inputs)})
    print(f"kokoro: wrote {args.out / NAME}.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
