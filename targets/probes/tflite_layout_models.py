"""Small torch exports behind the tflite fact on Gather when drops-leading-axis: x[t] of
rank-3+ data, a constant scalar index on axis 0 (a time-major RNN's step, an unrolled Scan's
scan input). Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the
corpus layout tests/backends/harness.py reads, so the harness runs them through onnx2tf as
exported and after --target tflite and compares with onnxruntime:

    mkdir /tmp/tfl-layout && cd /tmp/tfl-layout && $REPO/.venv/bin/python $REPO/targets/probes/tflite_layout_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py --backends tflite \\
        --corpus /tmp/tfl-layout --out /tmp/tfl-layout/out

  step0_gemm      Linear(3, 4)(x[0]) on x [5,2,3] (a Gemm on the picked [2,3])
  step0_matmul    x[0] @ W on x [5,2,3] (a MatMul)
  step0_scale     x[0] * 2 on x [5,2,3]
  step0_scale4    x[0] * 2 on x [2,3,4,5] (rank 4)
  step1_scale     x[:, 1] * 2 on x [5,2,3] (axis 1: not the form; control)
  step2_scale     x[:, :, 1] * 2 on x [5,2,3] (axis 2: control)
  rnn_time_major  h = tanh(Linear(x[t]) + Linear(h)) over t of x [5,2,3], every h and the last
  rnn_square      the same over x [5,4,4] (batch = features)
  unit_square_linear  x [1,32,32] reshaped to [32,32] (a unit dim dropped), then Linear(32, 32):
                  Reshape when square-ncw-input holds for it too (measured wrong, 2.8)

  lstm_state      LSTM(16, 32, batch_first) over x [1,10,16] from initial h and c given as graph
                  inputs [1,1,32] (LSTM when dynamic-input:5)

  crnn_bi_lstm    Conv2d(1, 12) + MaxPool over H of x [1,1,8,24], squeeze(2).permute(2, 0, 1) to a
                  time-major [24,1,12], a bidirectional LSTM(12, 10), Linear, log_softmax (open)
  crnn_uni_lstm   the same with a unidirectional LSTM (open)

Recorded results: tflite_layout_models.txt.
"""

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)


class Step(nn.Module):
    def __init__(self, pick, head=None):
        super().__init__()
        self.pick, self.head = pick, head

    def forward(self, x):
        y = self.pick(x)
        return self.head(y) if self.head is not None else y * 2


class MatMulHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 4))

    def forward(self, y):
        return y @ self.w


class TimeMajorRnn(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.x_in, self.h_in = nn.Linear(features, 4), nn.Linear(4, 4)

    def forward(self, x):
        h, ys = torch.zeros(x.shape[1], 4), []
        for t in range(x.shape[0]):
            h = torch.tanh(self.x_in(x[t]) + self.h_in(h))
            ys.append(h)
        return torch.stack(ys), h


class UnitSquareLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(32, 32)

    def forward(self, x):
        return self.linear(x.reshape(32, 32))


class LstmState(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(16, 32, batch_first=True)

    def forward(self, x, h, c):
        y, (h2, c2) = self.lstm(x, (h, c))
        return y, h2, c2


class CrnnLstm(nn.Module):
    def __init__(self, bidirectional):
        super().__init__()
        self.conv, self.pool = nn.Conv2d(1, 12, 3, padding=1), nn.MaxPool2d((8, 1))
        self.lstm = nn.LSTM(12, 10, bidirectional=bidirectional)
        self.out = nn.Linear(20 if bidirectional else 10, 7)

    def forward(self, x):
        f = self.pool(torch.relu(self.conv(x))).squeeze(2).permute(2, 0, 1)
        return self.out(self.lstm(f)[0]).log_softmax(2)


MODELS = {
    "step0_gemm": (Step(lambda x: x[0], nn.Linear(3, 4)), (5, 2, 3)),
    "step0_matmul": (Step(lambda x: x[0], MatMulHead()), (5, 2, 3)),
    "step0_scale": (Step(lambda x: x[0]), (5, 2, 3)),
    "step0_scale4": (Step(lambda x: x[0]), (2, 3, 4, 5)),
    "step1_scale": (Step(lambda x: x[:, 1]), (5, 2, 3)),
    "step2_scale": (Step(lambda x: x[:, :, 1]), (5, 2, 3)),
    "rnn_time_major": (TimeMajorRnn(3), (5, 2, 3)),
    "rnn_square": (TimeMajorRnn(4), (5, 4, 4)),
    "unit_square_linear": (UnitSquareLinear(), (1, 32, 32)),
    "crnn_bi_lstm": (CrnnLstm(True), (1, 1, 8, 24)),
    "crnn_uni_lstm": (CrnnLstm(False), (1, 1, 8, 24)),
}

for name, (module, shape) in MODELS.items():
    x = torch.randn(*shape)
    outputs = ["ys", "h"] if name.startswith("rnn") else ["y"]
    torch.onnx.export(
        module, (x,), f"{name}.onnx", input_names=["x"], output_names=outputs, opset_version=13, dynamo=False
    )
    np.savez(f"{name}.inputs.npz", x=x.numpy())

x, h, c = torch.randn(1, 10, 16), torch.randn(1, 1, 32), torch.randn(1, 1, 32)
torch.onnx.export(
    LstmState(),
    (x, h, c),
    "lstm_state.onnx",
    input_names=["x", "h", "c"],
    output_names=["y", "hn", "cn"],
    opset_version=13,
    dynamo=False,
)
np.savez("lstm_state.inputs.npz", x=x.numpy(), h=h.numpy(), c=c.numpy())
