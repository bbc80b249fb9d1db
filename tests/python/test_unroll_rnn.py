"""unroll-rnn, split-rnn-batch and convtranspose-to-conv against onnxruntime: torch exports
(nn.LSTM/nn.GRU/nn.RNN forward and bidirectional, with and without initial states,
batch_first, two layers, sequence lengths 1 to 6, a CRNN; ConvTranspose1d/2d/3d with
stride, padding, output_padding, dilation and groups) and hand-built nodes for the attributes
torch does not export (reverse, layout 1, clip, peepholes, linear_before_reset=0, activations,
sequence_lens). onnxruntime has no layout=1: those are compared with the layout-0 node on
transposed inputs. `--target` plans the rewrites for the targets whose profiles name them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).parent))
import model_helpers as mh  # noqa: E402
import rnn_models  # noqa: E402

RTOL = 2e-6  # relative to the output's largest magnitude (sums in another order)


def run(cli_path, *args):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True, timeout=600)


def rewrite(cli_path, src: Path, pipeline: str) -> Path:
    out = src.with_suffix(".out.onnx")
    proc = run(cli_path, "--pass", pipeline, src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


def max_error(ref, got) -> float:
    return max(float(np.abs(a - b).max() / max(1.0, float(np.abs(a).max()))) for a, b in zip(ref, got))


@pytest.mark.parametrize("name", rnn_models.NAMES)
@pytest.mark.parametrize("pipeline", ["unroll-rnn", "split-rnn-batch"])
def test_torch_exports_match(cli_path, tmp_path, name, pipeline):
    src = rnn_models.export(name, tmp_path / f"{name}.onnx")
    out = rewrite(cli_path, src, pipeline)
    feeds = rnn_models.inputs(name, seed=3)
    assert max_error(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds)) < RTOL
    if pipeline == "unroll-rnn":
        assert not set(mh.op_types(out)) & {"LSTM", "GRU", "RNN"}


# ------------------------------------------------------------------ hand-built nodes

I, H, T, B = 3, 4, 5, 2


def node_model(op, opset=14, direction="forward", layout=0, h0=False, c0=False, lens=False, peep=False, **attrs):
    rng = np.random.default_rng(7)
    g = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    nd = 2 if direction == "bidirectional" else 1
    inits = [
        numpy_helper.from_array(rng.standard_normal((nd, g * H, I)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal((nd, g * H, H)).astype(np.float32), "R"),
        numpy_helper.from_array(rng.standard_normal((nd, 2 * g * H)).astype(np.float32), "B"),
    ]
    ins = ["X", "W", "R", "B", "", "", ""]
    state = [nd, B, H] if layout == 0 else [B, nd, H]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [T, B, I] if layout == 0 else [B, T, I])]
    if lens:
        inits.append(numpy_helper.from_array(np.full(B, T, np.int32), "L"))
        ins[4] = "L"
    if h0:
        inputs.append(helper.make_tensor_value_info("H0", TensorProto.FLOAT, state))
        ins[5] = "H0"
    if c0:
        inputs.append(helper.make_tensor_value_info("C0", TensorProto.FLOAT, state))
        ins[6] = "C0"
    if peep:
        inits.append(numpy_helper.from_array(rng.standard_normal((nd, 3 * H)).astype(np.float32), "P"))
        ins.append("P")
    while ins[-1] == "":
        ins.pop()
    if "activations" in attrs:
        attrs["activations"] = attrs["activations"] * nd
    if layout:
        attrs["layout"] = layout
    outs = ["Y", "Yh", "Yc"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(op, ins, outs, hidden_size=H, direction=direction, **attrs)
    graph = helper.make_graph(
        [node], "g", inputs, [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


CASES = [
    (op, dict(direction=d, layout=lay, h0=True, c0=op == "LSTM"))
    for op in ("LSTM", "GRU", "RNN")
    for d in ("forward", "reverse", "bidirectional")
    for lay in (0, 1)
]
CASES += [(op, kw) for op in ("LSTM", "GRU", "RNN") for kw in (dict(clip=0.5), dict(lens=True), dict(opset=9))]
CASES += [
    ("LSTM", dict(peep=True)),
    ("LSTM", dict(peep=True, h0=True, c0=True, direction="bidirectional")),
    ("LSTM", dict(h0=True)),
    ("LSTM", dict(c0=True)),
    ("GRU", dict(linear_before_reset=0, h0=True, direction="bidirectional")),
    ("GRU", dict(linear_before_reset=1, h0=True)),
    ("LSTM", dict(activations=["Relu", "Sigmoid", "Tanh"], h0=True, c0=True)),
    ("GRU", dict(activations=["Tanh", "Relu"])),
    ("RNN", dict(activations=["Relu"], h0=True)),
]


def reference(tmp_path, op, kw, feeds):
    """onnxruntime's outputs; for layout 1 (which it does not run) the layout-0 node's, transposed."""
    if not kw.get("layout"):
        path = tmp_path / "ref.onnx"
        onnx.save(node_model(op, **kw), path)
        return mh.ort_outputs(path, feeds)
    path = tmp_path / "ref0.onnx"
    onnx.save(node_model(op, **dict(kw, layout=0)), path)
    out = mh.ort_outputs(path, {k: np.ascontiguousarray(v.transpose(1, 0, 2)) for k, v in feeds.items()})
    return [out[0].transpose(2, 0, 1, 3), *(o.transpose(1, 0, 2) for o in out[1:])]


@pytest.mark.parametrize(
    "op,kw", CASES, ids=[f"{op}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for op, kw in CASES]
)
def test_attributes_match(cli_path, tmp_path, op, kw):
    model = node_model(op, **kw)
    src = tmp_path / "m.onnx"
    onnx.save(model, src)
    rng = np.random.default_rng(1)
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in model.graph.input
    }
    for pipeline in ("unroll-rnn", "split-rnn-batch"):
        out = rewrite(cli_path, src, pipeline)
        got = mh.ort_outputs(out, feeds) if not kw.get("layout") or pipeline == "unroll-rnn" else None
        if got is not None:
            assert max_error(reference(tmp_path, op, kw, feeds), got) < RTOL, pipeline


# ------------------------------------------------------------------ ConvTranspose

CONVT = {
    "1d_s2_p1": (1, dict(stride=2, padding=1)),
    "1d_s4_k8": (1, dict(kernel_size=8, stride=4, padding=2)),
    "1d_s2_op1_d2": (1, dict(stride=2, padding=1, output_padding=1, dilation=2)),
    "1d_k1_s2": (1, dict(kernel_size=1, stride=2)),
    "2d_s2_k4_p1": (2, dict(kernel_size=4, stride=2, padding=1)),
    "2d_s2_op1": (2, dict(stride=2, padding=1, output_padding=1)),
    "2d_groups2_d2": (2, dict(stride=(2, 1), dilation=2, groups=2)),
    "2d_depthwise": (2, dict(stride=2, groups=4, padding=1, output_padding=1)),
    "2d_big_pad": (2, dict(kernel_size=3, stride=3, padding=2)),
    "3d_s2": (3, dict(stride=(2, 1, 2), padding=1, output_padding=(1, 0, 0))),
}


@pytest.mark.parametrize("name", CONVT)
def test_convtranspose_exports_match(cli_path, tmp_path, name):
    import torch

    rank, kw = CONVT[name]
    kw = {"kernel_size": 3, **kw}
    cls = {1: torch.nn.ConvTranspose1d, 2: torch.nn.ConvTranspose2d, 3: torch.nn.ConvTranspose3d}[rank]
    torch.manual_seed(0)
    module = cls(4, 6 if kw.get("groups", 1) != 4 else 4, **kw).eval()
    x = torch.randn(1, 4, *([7 if rank < 3 else 4] * rank))
    src = tmp_path / "ct.onnx"
    torch.onnx.export(module, (x,), str(src), input_names=["x"], opset_version=13, dynamo=False)
    out = rewrite(cli_path, src, "convtranspose-to-conv")
    assert "ConvTranspose" not in mh.op_types(out)
    feeds = {"x": np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)}
    assert max_error(mh.ort_outputs(src, feeds), mh.ort_outputs(out, feeds)) < RTOL


# ------------------------------------------------------------------ --target plans them


@pytest.mark.parametrize(
    "target,name,gone",
    [
        ("ort-mobile", "gru_bidir", {"GRU"}),
        ("nncase-k230", "gru_states_bf", {"GRU"}),
        ("ort-mobile", "lstm_states", {"LSTM"}),
        ("nncase-k210", "gru_bidir", {"GRU"}),
        ("nncase-k210", "rnn_fwd", {"RNN"}),
    ],
)
def test_target_unrolls(cli_path, tmp_path, target, name, gone):
    src = rnn_models.export(name, tmp_path / f"{name}.onnx")
    out = tmp_path / "t.onnx"
    proc = run(cli_path, "--target", target, "--check", src, "-o", out)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "unroll-rnn" in proc.stderr
    assert not set(mh.op_types(out)) & gone


def test_check_names_the_rewrites_for_nncase_k210(cli_path, tmp_path):
    """check --target names the step for each fact: the GRU (unroll-rnn), the LSTM over batch
    2 (split-rnn-batch) and the ConvTranspose (convtranspose-to-conv)."""
    gru = rnn_models.export("gru_fwd", tmp_path / "gru.onnx")
    lstm = rnn_models.export("lstm_fwd", tmp_path / "lstm.onnx")
    for path, step in ((gru, "unroll-rnn"), (lstm, "split-rnn-batch")):
        proc = run(cli_path, "check", "--target", "nncase-k210", path)
        assert proc.returncode == 1
        assert f"-> {step}" in proc.stdout, proc.stdout
    graph = helper.make_graph(
        [helper.make_node("ConvTranspose", ["x", "w"], ["y"], kernel_shape=[3], strides=[2])],
        "ct",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 11])],
        [numpy_helper.from_array(np.ones((2, 2, 3), np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, tmp_path / "ct.onnx")
    proc = run(cli_path, "check", "--target", "nncase-k210", tmp_path / "ct.onnx")
    assert "-> convtranspose-to-conv" in proc.stdout, proc.stdout


# ------------------------------------------------------------------ nncase 1.9 itself


def nncase_env():
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/backends"))
    from harness import BACKENDS_DIR

    if not (BACKENDS_DIR / "nncase-k210" / "ready").is_file():
        pytest.skip("nncase-k210 venv not installed (make backends-setup BACKENDS=nncase-k210)")
    return dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))


@pytest.mark.parametrize("name,step", [("gru_bidir", "unroll-rnn"), ("lstm_bidir", "split-rnn-batch")])
def test_nncase_runs_and_matches_after_target(cli_path, tmp_path, name, step):
    """Before: the GRU feeding a Linear runs wrong, the LSTM over batch 2 fails to compile
    (targets/probes/lowering_models.txt). After --target nncase-k210 both match."""
    env = nncase_env()
    src = rnn_models.export(name, tmp_path / f"{name}.onnx")
    proc = subprocess.run(
        [str(cli_path), "--target", "nncase-k210", "--backend-check", "2", str(src), "-o", str(tmp_path / "o.onnx")],
        capture_output=True,
        text=True,
        timeout=900,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert step in proc.stderr
    assert ": ok," in proc.stderr
