"""Quantized models from the real tools, for the tests that run every
pass and convert-opset on them: four small torch models (a CNN, a BERT-style encoder
block, a LLaMA-style causal decoder block with RMSNorm and a SiLU-gated MLP, a
keyword-spotting LSTM: Conv1d, a 2-layer LSTM, a Linear), exported by torch.onnx, then
quantized by onnxruntime.quantization in each form users ship:

  qdq-per-channel   quantize_static, QDQ, per-channel int8 weights, uint8 activations
  qdq-per-tensor    quantize_static, QDQ, per-tensor int8 weights and activations
  qat               qdq-per-channel with each int8 weight + DequantizeLinear written as a float
                    weight -> QuantizeLinear -> DequantizeLinear (QAT / TensorRT-style exports:
                    pytorch-quantization, modelopt), the float weight within 0.4 steps of its grid
  qoperator         quantize_static, QOperator (QLinearConv, QLinearMatMul, ...)
  dynamic           quantize_dynamic (DynamicQuantizeLinear + MatMulInteger / ConvInteger)
  qdq-int16         quantize_static, QDQ, int16 activations and weights (ai.onnx Q/DQ, opset 21)
  qdq-int16-ms      the same with com.microsoft Q/DQ (UseQDQContribOps)
  qdq-int4          quantize_static at opset 21, int4 weights (blocked/per-channel int4 DQ)
  qdq-int4-blocked  by hand (onnxruntime's quantizer has no blocked QDQ): each MatMul weight as
                    int4 + DequantizeLinear(axis=0, block_size=16), opset 21 (MATMUL_ARCHS)
  matmul-nbits      onnxruntime's MatMulNBitsQuantizer, 4 bits, block 32 (MATMUL_ARCHS)

build(name, form, dir) writes one and returns its path (None where the form does not apply
to the arch: MATMUL_ONLY forms need MatMul weights); inputs(arch) gives fixed inputs.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

ARCHS = ("cnn", "transformer", "decoder", "lstm")
SHAPES = {"cnn": (1, 3, 16, 16), "transformer": (1, 8, 32), "decoder": (1, 8, 32), "lstm": (1, 10, 40)}
# The forms made from MatMul weights, and the archs whose weights are MatMuls.
MATMUL_ONLY = ("qdq-int4-blocked", "matmul-nbits")
MATMUL_ARCHS = ("transformer", "decoder")
FORMS = (
    "qdq-per-channel",
    "qdq-per-tensor",
    "qat",
    "qoperator",
    "dynamic",
    "qdq-int16",
    "qdq-int16-ms",
    "qdq-int4",
    "qdq-int4-blocked",
    "matmul-nbits",
)
# The opset each ai.onnx form needs (the refusal below it names it), and the bits of each
# form's narrowest quantized type (8 unless listed). qdq-int4's stored weights widen to int8
# below 21 (convert-opset), so it has none.
MIN_OPSET = {"qdq-int16": 21, "qdq-int4-blocked": 21}
BITS = {"qdq-int16": 16, "qdq-int16-ms": 16, "qdq-int4-blocked": 4, "qdq-int4": 4, "matmul-nbits": 4}


def _torch_models():
    import torch
    from torch import nn

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.c2 = nn.Conv2d(8, 16, 3, padding=1, stride=2)
            self.c3 = nn.Conv2d(16, 16, 1)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = torch.relu(self.c1(x))
            x = torch.relu(self.c2(x))
            x = torch.relu(self.c3(x)) + x
            x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
            return self.fc(x)

    class Block(nn.Module):
        def __init__(self, d=32, heads=2):
            super().__init__()
            self.heads, self.d = heads, d
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc1, self.fc2 = nn.Linear(d, 64), nn.Linear(64, d)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            h = self.heads

            def split(z):
                return z.reshape(b, t, h, d // h).transpose(1, 2)

            att = torch.softmax(split(q) @ split(k).transpose(-1, -2) / (d // h) ** 0.5, dim=-1)
            y = (att @ split(v)).transpose(1, 2).reshape(b, t, d)
            x = x + self.out(y)
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))

    class RmsNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight

    class Decoder(nn.Module):
        """LLaMA-style: RMSNorm, causal attention, a SiLU-gated MLP, no biases."""

        def __init__(self, d=32, heads=2):
            super().__init__()
            self.heads = heads
            self.n1, self.n2 = RmsNorm(d), RmsNorm(d)
            self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
            self.gate, self.up = nn.Linear(d, 64, bias=False), nn.Linear(d, 64, bias=False)
            self.down = nn.Linear(64, d, bias=False)

        def forward(self, x):
            b, t, d = x.shape
            h = self.n1(x)

            def split(z):
                return z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)

            q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
            mask = torch.triu(torch.full((t, t), -1e4), diagonal=1)  # GPT-2's masked value
            att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5 + mask, dim=-1)
            x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, d))
            h = self.n2(x)
            return x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))

    class Lstm(nn.Module):
        """Keyword spotting: Conv1d over 40 features, a 2-layer LSTM, a Linear on the last step."""

        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(40, 32, 3, padding=1)
            self.rnn = nn.LSTM(32, 32, num_layers=2, batch_first=True)
            self.fc = nn.Linear(32, 12)

        def forward(self, x):
            y = torch.relu(self.conv(x.transpose(1, 2))).transpose(1, 2)
            y, _ = self.rnn(y)
            return self.fc(y[:, -1])

    models = {"cnn": Cnn(), "transformer": Block(), "decoder": Decoder(), "lstm": Lstm()}
    return {name: (module, SHAPES[name]) for name, module in models.items()}


def export_float(arch: str, directory: Path) -> Path:
    import torch

    path = directory / f"{arch}.float.onnx"
    if path.exists():
        return path
    torch.manual_seed(0)
    module, shape = _torch_models()[arch]
    torch.manual_seed(0)
    module.eval()
    torch.onnx.export(
        module, (torch.randn(*shape),), str(path), opset_version=17, input_names=["x"], output_names=["y"], dynamo=False
    )
    return path


def inputs(arch: str, count: int = 1, seed: int = 0) -> list[dict[str, np.ndarray]]:
    dims = SHAPES[arch]
    rng = np.random.default_rng(seed)
    return [{"x": rng.standard_normal(dims).astype(np.float32)} for _ in range(count)]


def _reader(arch: str):
    from onnxruntime.quantization import CalibrationDataReader

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter(inputs(arch, 8, seed=1))

        def get_next(self):
            return next(self.data, None)

    return Reader()


def build(arch: str, form: str, directory: Path) -> Path | None:
    """The quantized model's path, or None when the form does not apply to arch."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_dynamic, quantize_static

    out = directory / f"{arch}.{form}.onnx"
    if out.exists():
        return out
    src = export_float(arch, directory)
    if form in ("qdq-per-channel", "qdq-per-tensor", "qoperator", "qdq-int16", "qdq-int16-ms"):
        int16 = dict(
            quant_format=QuantFormat.QDQ,
            per_channel=False,
            activation_type=QuantType.QInt16,
            weight_type=QuantType.QInt16,
        )
        kwargs = {
            "qdq-per-channel": dict(quant_format=QuantFormat.QDQ, per_channel=True),
            "qdq-per-tensor": dict(
                quant_format=QuantFormat.QDQ,
                per_channel=False,
                activation_type=QuantType.QInt8,
                extra_options={"ActivationSymmetric": True},
            ),
            "qoperator": dict(quant_format=QuantFormat.QOperator, per_channel=False),
            "qdq-int16": int16,  # onnxruntime moves the model to opset 21 (int16 Q/DQ)
            "qdq-int16-ms": dict(int16, extra_options={"UseQDQContribOps": True}),
        }[form]
        quantize_static(str(src), str(out), _reader(arch), **kwargs)
    elif form == "qat":
        _qat_form(build(arch, "qdq-per-channel", directory), out)
    elif form == "dynamic":
        quantize_dynamic(str(src), str(out), weight_type=QuantType.QUInt8 if arch == "cnn" else QuantType.QInt8)
    elif form == "qdq-int4":
        m21 = directory / f"{arch}.float21.onnx"
        if not m21.exists():
            onnx.save(onnx.version_converter.convert_version(onnx.load(str(src)), 21), str(m21))
        quantize_static(
            str(m21),
            str(out),
            _reader(arch),
            quant_format=QuantFormat.QDQ,
            per_channel=True,
            weight_type=QuantType.QInt4,
            activation_type=QuantType.QUInt8,
            op_types_to_quantize=["MatMul", "Gemm", "Conv"],
        )
    elif form == "qdq-int4-blocked":
        if arch not in MATMUL_ARCHS:
            return None
        _blocked_int4(src, out, block=16)
    elif form == "matmul-nbits":
        if arch not in MATMUL_ARCHS:
            return None
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        q = MatMulNBitsQuantizer(onnx.load(str(src)), block_size=32, is_symmetric=False)
        q.process()
        q.model.save_model_to_file(str(out))
    else:
        raise ValueError(form)
    return out


def _qat_form(src: Path, out: Path) -> None:
    from onnx import helper, numpy_helper

    model = onnx.load(str(src))
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    rng = np.random.default_rng(0)
    nodes = []
    for n in graph.node:
        if (
            n.op_type == "DequantizeLinear"
            and n.input[0] in inits
            and inits[n.input[0]].data_type == onnx.TensorProto.INT8
        ):
            q = numpy_helper.to_array(inits[n.input[0]]).astype(np.float32)
            s = numpy_helper.to_array(inits[n.input[1]]).astype(np.float32)
            z = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32) if len(n.input) > 2 else np.zeros_like(s)
            axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
            if s.ndim == 1 and s.size > 1:
                shape = [1] * q.ndim
                shape[axis] = -1
                s, z = s.reshape(shape), z.reshape(shape)
            name = n.input[0] + "_float"
            w = (q - z) * s + rng.uniform(-0.4, 0.4, q.shape) * s
            graph.initializer.append(numpy_helper.from_array(w.astype(np.float32), name))
            nodes.append(helper.make_node("QuantizeLinear", [name, *n.input[1:]], [name + "_q"], axis=axis))
            n.input[0] = name + "_q"
        nodes.append(n)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    keep = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(out))


def _blocked_int4(src: Path, out: Path, block: int) -> None:
    from onnx import helper, numpy_helper

    model = onnx.version_converter.convert_version(onnx.load(str(src)), 21)
    inits = {t.name: t for t in model.graph.initializer}
    nodes = []
    for n in model.graph.node:
        w = inits.get(n.input[1]) if n.op_type == "MatMul" and len(n.input) > 1 else None
        if w is not None and len(w.dims) == 2 and w.dims[0] % block == 0:
            a = numpy_helper.to_array(w)
            k, cols = a.shape
            scale = np.abs(a.reshape(k // block, block, cols)).max(axis=1) / 7 + 1e-8
            q = np.clip(np.round(a / np.repeat(scale, block, axis=0)), -8, 7).astype(np.int8)
            name = w.name
            model.graph.initializer.remove(w)
            model.graph.initializer.extend(
                [
                    helper.make_tensor(f"{name}_q", onnx.TensorProto.INT4, [k, cols], q.flatten().tolist()),
                    numpy_helper.from_array(scale.astype(np.float32), f"{name}_s"),
                ]
            )
            nodes.append(
                helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s"], [name], axis=0, block_size=block)
            )
        nodes.append(n)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, str(out))
