"""nncase-k210's Flatten fact (`flatten-axis-not-one`, targets/nncase-k210.toml): nncase 1.9
refuses a Flatten whose axis is not 1, and behind a Gather (optimum's Llama mask) compiles it
and corrupts memory; `--target nncase-k210` writes it as a Reshape (flatten-to-reshape).

The fast tests need only the CLI; the real-backend ones run nncase 1.9 through
`--backend-check` and are skipped where `make backends-setup BACKENDS=nncase-k210` has not
installed it (as tests/python/test_backend_check.py's are)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from harness import BACKENDS_DIR  # noqa: E402

GENERATED = ROOT / "tests/models/.generated"


def run(cli_path, *args, env=None):
    return subprocess.run(
        [str(cli_path), *map(str, args)], capture_output=True, text=True, timeout=600, env=env or dict(os.environ)
    )


def mask_model(path: Path) -> Path:
    """optimum's Llama mask: Cast(attention_mask, bool) -> Flatten(axis=2) -> Gather -> Reshape
    -> And(causal) -> Where, beside an embedding Gather added to its Relu."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((50, 16)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["g"]),
        helper.make_node("Cast", ["attention_mask"], ["mb"], to=TensorProto.BOOL),
        helper.make_node("Flatten", ["mb"], ["mf"], axis=2),
        helper.make_node("Gather", ["mf", "gidx"], ["mg"], axis=0),
        helper.make_node("Reshape", ["mg", "mshape"], ["mr"]),
        helper.make_node("And", ["causal", "mr"], ["ma"]),
        helper.make_node("Where", ["ma", "zero", "neg"], ["bias"]),
        helper.make_node("Relu", ["g"], ["r"]),
        helper.make_node("Add", ["g", "r"], ["y"]),
    ]
    inits = [
        onnx.numpy_helper.from_array(table, "table"),
        onnx.numpy_helper.from_array(np.arange(5, dtype=np.int64).reshape(1, 1, 1, 5), "gidx"),
        onnx.numpy_helper.from_array(np.array([1, 1, 1, 5], np.int64), "mshape"),
        onnx.numpy_helper.from_array(np.tril(np.ones((5, 5), bool))[None, None], "causal"),
        onnx.numpy_helper.from_array(np.array(0, np.float32), "zero"),
        onnx.numpy_helper.from_array(np.array(-3.4028234663852886e38, np.float32), "neg"),
    ]
    graph = helper.make_graph(
        nodes,
        "mask",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 5]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 5]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 16]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, [1, 1, 5, 5]),
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)
    return path


def test_check_names_flatten_and_target_rewrites_it(cli_path, tmp_path):
    m, out = mask_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    check = run(cli_path, "check", "--target", "nncase-k210", m)
    assert check.returncode == 1
    assert "nncase-k210: lacks Flatten when flatten-axis-not-one: 1 place -> flatten-to-reshape" in check.stdout
    assert "Flatten '<unnamed Flatten>' in main graph: Flatten (axis 2)" in check.stdout
    proc = run(cli_path, "--target", "nncase-k210", "--check", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "flatten-to-reshape" in proc.stderr
    ops = [n.op_type for n in onnx.load(out).graph.node]
    assert "Flatten" not in ops and "Reshape" in ops
    after = run(cli_path, "check", "--target", "nncase-k210", out)
    assert "flatten-axis-not-one" not in after.stdout, after.stdout


# ----------------------------------------------------------------- nncase 1.9 itself


def nncase_env():
    if not (BACKENDS_DIR / "nncase-k210" / "ready").is_file():
        pytest.skip("nncase-k210 venv not installed (make backends-setup BACKENDS=nncase-k210)")
    return dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))


def backend_check(cli_path, env, model, out, *shapes):
    return run(
        cli_path,
        "--target",
        "nncase-k210",
        "--input-shapes",
        *shapes,
        "--backend-check",
        "2",
        model,
        "-o",
        out,
        env=env,
    )


def test_nncase_flatten_axis2_matches_after_target(cli_path, tmp_path):
    """Before flatten-to-reshape nncase refused it: 'n3.max(Relu)[Binary]->y[Output] has shape
    mismatch: [2,3,4]->[6,4]'."""
    env = nncase_env()
    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["f"], axis=2), helper.make_node("Relu", ["f"], ["y"])],
        "flatten",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, tmp_path / "m.onnx")
    proc = backend_check(cli_path, env, tmp_path / "m.onnx", tmp_path / "o.onnx", "x:2x3x4")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ": ok, 1 output(s)" in proc.stderr


def test_nncase_mask_flatten_matches_after_target(cli_path, tmp_path):
    """The Llama mask form alone compiles as written too and does not always go wrong (the
    heap corruption shows in larger graphs and with the Gather's output exposed); after
    --target it must match."""
    env = nncase_env()
    m, out = mask_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = backend_check(cli_path, env, m, out, "ids:1x5", "attention_mask:1x5")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backend check on nncase-k210" in proc.stderr and ": ok, 2 output(s)" in proc.stderr


def test_nncase_optimum_llama_decoder_matches_after_target(cli_path, tmp_path):
    """Before flatten-to-reshape: logits 99.7% off (max 0.40) after --target."""
    env = nncase_env()
    m = GENERATED / "optimum_llama_decoder.onnx"
    if not m.is_file():
        pytest.skip("tests/models/.generated/optimum_llama_decoder.onnx not generated (make models)")
    shapes = ["input_ids:1x5", "attention_mask:1x5", "position_ids:1x5"]
    proc = backend_check(cli_path, env, m, tmp_path / "o.onnx", *shapes)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ": ok, 5 output(s)" in proc.stderr


def test_nncase_roberta_like_encoder_matches_after_target(cli_path, tmp_path):
    """A RoBERTa-style encoder (position ids from the input ids: Equal, Not, Cast, CumSum;
    word + position + token-type embeddings summed), exported by torch at opset 17."""
    env = nncase_env()
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    config = transformers.RobertaConfig(
        attn_implementation="eager",
        vocab_size=99,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    model = transformers.RobertaModel(config, add_pooling_layer=False).eval()

    class First(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]

    ids = torch.randint(3, 99, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    path = tmp_path / "roberta.onnx"
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    torch.onnx.export(
        First(model),
        (ids, mask),
        str(path),
        input_names=["input_ids", "attention_mask"],
        output_names=["y"],
        opset_version=17,
        dynamic_axes=axes,
        dynamo=False,
    )
    proc = backend_check(cli_path, env, path, tmp_path / "o.onnx", "input_ids:2x8", "attention_mask:2x8")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "backend check on nncase-k210" in proc.stderr and ": ok, 1 output(s)" in proc.stderr


# ----------------------------------------------------------------- negative Gather indices


def last_token_model(path: Path) -> Path:
    """x [2,8,16] -> Gather(x, -1, axis=1): a decoder's last-token pick."""
    graph = helper.make_graph(
        [helper.make_node("Gather", ["x", "k"], ["y"], axis=1)],
        "last",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
        [onnx.numpy_helper.from_array(np.array(-1, np.int64), "k")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)
    return path


def test_check_names_negative_index_and_target_rewrites_it(cli_path, tmp_path):
    m, out = last_token_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    check = run(cli_path, "check", "--target", "nncase-k210", m)
    assert check.returncode == 1
    assert "lacks Gather when negative-constant-index: 1 place -> gather-nonnegative-indices" in check.stdout
    proc = run(cli_path, "--target", "nncase-k210", "--check", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    k = onnx.numpy_helper.to_array(onnx.load(out).graph.initializer[0])
    assert k.dtype == np.int64 and k.shape == () and int(k) == 7


def test_nncase_negative_index_matches_after_target(cli_path, tmp_path):
    """Before gather-nonnegative-indices nncase read out of bounds: off by 1.8e31."""
    env = nncase_env()
    m = last_token_model(tmp_path / "m.onnx")
    proc = backend_check(cli_path, env, m, tmp_path / "o.onnx", "x:2x8x16")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert ": ok, 1 output(s)" in proc.stderr


# ----------------------------------------------------------------- where the remedy cannot apply


def dynamic_model(path: Path, node, x_dims: list, y_dims: list, inits=()) -> Path:
    graph = helper.make_graph(
        [node],
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_dims)],
        list(inits),
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.save(model, path)
    return path


def test_blockers_stay_where_their_remedy_refuses(cli_path, tmp_path):
    """The condition asks its remedy pass whether it would remove the node (the pass's own
    decision, dry-run): a Flatten whose two sides both hold dynamic dims, a negative index on
    a dynamic axis. Neither pass can rewrite them, so check names no step, says why, and
    --target keeps the blocker (it fails naming it) instead of planning a step that does nothing."""
    flatten = dynamic_model(
        tmp_path / "f.onnx", helper.make_node("Flatten", ["x"], ["y"], axis=2), ["n", 3, "m", 5], [None, None]
    )
    check = run(cli_path, "check", "--target", "nncase-k210", flatten)
    assert check.returncode == 1
    assert "flatten-to-reshape refuses it: both sides hold dims of unknown size" in check.stdout, check.stdout
    assert "when flatten-axis-not-one: 1 place -> flatten-to-reshape" not in check.stdout
    proc = run(cli_path, "--target", "nncase-k210", flatten, "-o", tmp_path / "fo.onnx")
    assert proc.returncode != 0 and "flatten-axis-not-one" in proc.stderr, proc.stderr
    assert not (tmp_path / "fo.onnx").exists()

    k = onnx.numpy_helper.from_array(np.array(-1, np.int64), "k")
    gather = dynamic_model(
        tmp_path / "g.onnx", helper.make_node("Gather", ["x", "k"], ["y"], axis=1), [2, "n", 16], [2, 16], [k]
    )
    check = run(cli_path, "check", "--target", "nncase-k210", gather)
    assert check.returncode == 1
    assert "gather-nonnegative-indices refuses it: the data's dim on the axis is not static" in check.stdout
    assert "when negative-constant-index: 1 place -> gather-nonnegative-indices" not in check.stdout
    proc = run(cli_path, "--target", "nncase-k210", gather, "-o", tmp_path / "go.onnx")
    assert proc.returncode != 0 and "negative-constant-index" in proc.stderr, proc.stderr
