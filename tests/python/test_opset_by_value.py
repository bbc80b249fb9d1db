"""Attributes the older opset lacks are judged by what they mean given the node's constant
inputs and other attributes (passes/opset/adapters.cc): the golden cases of
tests/golden/convert-opset that convert, checked in onnxruntime on inputs full of ties
(small integers as floats), where select_last_index, TopK's order and ceil_mode show."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

import onnxsurgeon as osg

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "convert-opset"
CASES = [
    "reduce_sum_noop_constant_axes_13_to_11",
    "reduce_mean_noop_constant_axes_18_to_13",
    "reduce_noop_empty_axes_is_identity",
    "reduce_l2_noop_empty_axes_decomposed_18_to_13",
    "pool_ceil_mode_exact_10_to_9",
    "maxpool_storage_order_unused_indices_8_to_7",
    "quantize_saturate_uint8_19_to_13",
    "resize_antialias_upsample_18_to_13",
    "topk_smallest_11_to_10",
    "argmax_select_last_index_12_to_11",
]


def _case(name: str) -> tuple[str, str]:
    text = (GOLDEN / f"{name}.txt").read_text()
    pipeline = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("pipeline:"))
    source = text.split("--- input", 1)[1].split("--- expected", 1)[0]
    return pipeline, source


def _tied_inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.integers(-3, 4, size=shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("name", CASES)
def test_conversion_by_value_is_exact(name, oracle):
    pipeline, source = _case(name)
    original = osg.parse_text(source).to_proto()
    converted = osg.run(original, pipeline)
    oracle.assert_valid(converted)
    inputs = _tied_inputs(original)
    oracle.assert_equivalent(original, converted, inputs=inputs, rtol=0, atol=0)


def test_topk_unsorted_keeps_the_same_elements(oracle):
    """sorted=0 leaves the order open; TopK-10 sorts, which is one of the allowed orders:
    the same k elements come out, in sorted order."""
    _, source = _case("topk_smallest_11_to_10")
    original = osg.parse_text(source.replace("TopK<largest = 0>", "TopK<largest = 0, sorted = 0>")).to_proto()
    converted = osg.run(original, "downgrade-opset=10")
    inputs = {"X": np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)}
    before = oracle.run_model(original, inputs)["V"]
    after = oracle.run_model(converted, inputs)["V"]
    np.testing.assert_array_equal(np.sort(before, axis=1), after)
