"""Small torch exports with LSTM, GRU and RNN nodes (and ConvTranspose), for the tests of
unroll-rnn, split-rnn-batch and convtranspose-to-conv: every direction, initial states or
none, batch_first, several layers, a CRNN; each exported with random weights from a fixed
seed. `export(name, path)` writes one; NAMES lists them; `inputs(name)` gives its feeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

INPUT, HIDDEN = 5, 6


class Recurrent(nn.Module):
    """cell(...) over x, with initial states when `states`; returns (y, h[, c]) or y alone."""

    def __init__(self, kind, *, bidirectional=False, batch_first=False, layers=1, states=False, y_only=False):
        super().__init__()
        cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
        self.kind, self.states, self.y_only = kind, states, y_only
        self.cell = cls(INPUT, HIDDEN, num_layers=layers, bidirectional=bidirectional, batch_first=batch_first)
        self.head = nn.Linear(HIDDEN * (2 if bidirectional else 1), 3)

    def forward(self, x, *state):
        if self.states:
            st = (state[0], state[1]) if self.kind == "lstm" else state[0]
            y, h = self.cell(x, st)
        else:
            y, h = self.cell(x)
        y = self.head(y)  # Y feeds another op (the form nncase's GRU got wrong)
        if self.y_only:
            return y
        return (y, *h) if self.kind == "lstm" else (y, h)


class Crnn(nn.Module):
    """Conv features -> BiLSTM over the width -> Linear, as OCR models write it."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d((4, 1)))
        self.rnn = nn.LSTM(8 * 2, 8, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(16, 5)

    def forward(self, x):  # x: [B, 1, 8, W]
        f = self.conv(x)  # [B, 8, 2, W]
        b, c, h, w = f.shape
        f = f.permute(0, 3, 1, 2).reshape(b, w, c * h)
        y, _ = self.rnn(f)
        return self.fc(y).log_softmax(-1)


# name: (kind, options, seq, batch)
RNN_CASES = {
    "lstm_fwd": ("lstm", {}, 4, 2),
    "lstm_bidir": ("lstm", {"bidirectional": True}, 3, 2),
    "lstm_states": ("lstm", {"states": True}, 5, 3),
    "lstm_bidir_states_bf": ("lstm", {"bidirectional": True, "states": True, "batch_first": True}, 4, 2),
    "lstm_2layers": ("lstm", {"layers": 2, "bidirectional": True}, 3, 1),
    "lstm_seq1": ("lstm", {}, 1, 2),
    "gru_fwd": ("gru", {}, 4, 2),
    "gru_bidir": ("gru", {"bidirectional": True}, 3, 1),
    "gru_states_bf": ("gru", {"states": True, "batch_first": True}, 4, 2),
    "gru_2layers": ("gru", {"layers": 2}, 6, 1),
    "rnn_fwd": ("rnn", {}, 4, 2),
    "rnn_bidir_states": ("rnn", {"bidirectional": True, "states": True}, 3, 2),
}
NAMES = [*RNN_CASES, "crnn"]


def _feeds(name: str, rng) -> dict[str, np.ndarray]:
    if name == "crnn":
        return {"x": rng.standard_normal((2, 1, 8, 6)).astype(np.float32)}
    kind, opts, seq, batch = RNN_CASES[name]
    shape = (batch, seq, INPUT) if opts.get("batch_first") else (seq, batch, INPUT)
    feeds = {"x": rng.standard_normal(shape).astype(np.float32)}
    if opts.get("states"):
        n = opts.get("layers", 1) * (2 if opts.get("bidirectional") else 1)
        feeds["h0"] = rng.standard_normal((n, batch, HIDDEN)).astype(np.float32)
        if kind == "lstm":
            feeds["c0"] = rng.standard_normal((n, batch, HIDDEN)).astype(np.float32)
    return feeds


def inputs(name: str, seed: int = 1) -> dict[str, np.ndarray]:
    return _feeds(name, np.random.default_rng(seed))


def export(name: str, path: Path, opset: int = 13) -> Path:
    torch.manual_seed(0)
    if name == "crnn":
        module = Crnn()
    else:
        kind, opts, _, _ = RNN_CASES[name]
        module = Recurrent(kind, **opts)
    module.eval()
    feeds = inputs(name)
    args = tuple(torch.from_numpy(v) for v in feeds.values())
    with torch.no_grad():
        torch.onnx.export(module, args, str(path), input_names=list(feeds), opset_version=opset, dynamo=False)
    return path
