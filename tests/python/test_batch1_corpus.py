"""The batch-1 backend corpus (tests/backends/batch1_corpus.py): its registry, the wheel
models it takes by name, and one export end to end (checked, written under its name)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

import batch1_corpus  # noqa: E402
import stacks  # noqa: E402  (tests/backends/corpus, on the path once batch1_corpus is imported)

sys.path.insert(0, str(ROOT / "tests/models"))
import wheels  # noqa: E402


def test_at_least_thirty_architectures_with_unique_names():
    names = [*batch1_corpus.MODELS, *stacks.STACK_MODELS]
    assert len(set(names)) == len(names) >= 30
    assert all(n.endswith("_b1") for n in names)


def test_wheel_models_are_those_with_batch_1_inputs():
    picked = set(stacks.wheel_models())
    for entry in wheels.load_list(wheels.DEV_LIST):
        shapes = [spec.get("shape") for one in entry.sets for spec in one["inputs"].values()]
        assert (entry.name in picked) == all(not s or s[0] == 1 for s in shapes), entry.name
    assert "wheel_silero_vad_v6_whisper" not in picked  # windows stacked in dim 0


def test_export_writes_a_checked_batch_1_model(tmp_path):
    assert batch1_corpus.main(["--out", str(tmp_path), "--only", "kws_dscnn_op13_b1"]) == 0
    model = onnx.load(tmp_path / "kws_dscnn_op13_b1.onnx")
    onnx.checker.check_model(model, full_check=True)
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [1, 1, 49, 10]
    assert np.load(tmp_path / "kws_dscnn_op13_b1.inputs.npz")["mfcc"].shape == (1, 1, 49, 10)
    assert not list(tmp_path.glob("*.partial.onnx"))


def test_a_model_that_fails_is_reported_left_out_and_the_exit_is_1(tmp_path, monkeypatch, capsys):
    def broken():
        raise RuntimeError("this architecture does not export")

    monkeypatch.setitem(batch1_corpus.MODELS, "kws_dscnn_op13_b1", broken)
    assert batch1_corpus.main(["--out", str(tmp_path), "--only", "kws_dscnn_op13_b1"]) == 1
    assert "1 failed, left out: kws_dscnn_op13_b1" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_onnxruntime_optimized_models_are_named_apart_and_built_with_contrib_ops(tmp_path):
    import ort_optimized  # tests/backends/corpus

    assert not set(ort_optimized.ALL) & set(batch1_corpus.MODELS)
    assert all(n.endswith("_b1") and "_ortopt" in n for n in ort_optimized.ALL)
    assert batch1_corpus.main(["--out", str(tmp_path), "--only", "gpt2_op14_ortopt_b1"]) == 0
    model = onnx.load(tmp_path / "gpt2_op14_ortopt_b1.onnx")
    ops = {(n.domain, n.op_type) for n in model.graph.node}
    assert {("com.microsoft", "SkipLayerNormalization"), ("com.microsoft", "FastGelu")} <= ops, ops
    assert np.load(tmp_path / "gpt2_op14_ortopt_b1.inputs.npz")["input_ids"].shape == (1, 8)
