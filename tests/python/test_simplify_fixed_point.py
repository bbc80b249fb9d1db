"""simplify is deterministic and reaches its fixed point in one run, on
every corpus model: the same input and flags give byte-identical output, and simplify on
its own output changes nothing (byte-identical again). The corpus holds exports built
for this (tests/models/corpus_shapes.py): dynamic-H/W CNNs with Shape/Gather/Concat/Resize
chains, a CRNN with a BiLSTM over a dynamic width, and a Swin encoder whose per-layer shape
chains took one simplify round per layer (and a second run) before."""

from __future__ import annotations

import filecmp
import json

import onnx
import pytest


def _simplify(run_cli, src, dst):
    proc = run_cli("--pass", "simplify", "--report", "json", src, "-o", dst)
    return proc


def test_simplify_is_deterministic_and_idempotent(corpus_model, run_cli, tmp_path):
    first = tmp_path / "first.onnx"
    again = tmp_path / "again.onnx"
    second = tmp_path / "second.onnx"
    _simplify(run_cli, corpus_model.path, first)
    _simplify(run_cli, corpus_model.path, again)
    assert filecmp.cmp(first, again, shallow=False), "two runs on the same input differ"
    _simplify(run_cli, first, second)
    if not filecmp.cmp(first, second, shallow=False):
        a, b = onnx.load(first), onnx.load(second)
        ops = lambda m: sorted(n.op_type for n in m.graph.node)  # noqa: E731
        raise AssertionError(
            f"simplify on its own output changed it: {len(a.graph.node)} -> {len(b.graph.node)} nodes; "
            f"ops removed: {sorted(set(ops(a)) - set(ops(b)))}"
        )


def test_static_simplify_survives_reinference(corpus_model, run_cli, tmp_path):
    """Made static (the corpus inputs' shapes) and simplified once, no model folds more after
    its types are inferred afresh: simplify re-infers before every round and
    refines the declarations its folds made stale. Before, swin_op17 and tf_vit_block_op15/17
    folded more under `infer-shapes(reset=true),simplify`, and --target repeated that."""
    shapes = ";".join(f"{k}:{'x'.join(map(str, v.shape))}" for k, v in corpus_model.inputs.items() if v.ndim)
    if not shapes:
        pytest.skip("no input has dims to fix")
    first = tmp_path / "first.onnx"
    run_cli("--pass", f"set-input-shape(shapes={shapes}),simplify", corpus_model.path, "-o", first)
    proc = run_cli(
        "--pass", "infer-shapes(reset=true),simplify", "--report", "json", first, "-o", tmp_path / "again.onnx"
    )
    (simplify,) = [r for r in json.loads(proc.stdout) if r["pass"] == "simplify"]
    assert not simplify["changed"], simplify["counts"]
