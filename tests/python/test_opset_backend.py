"""convert-opset on every ONNX backend node test (tests/python/opset_backend.py):

- down: to every lower opset down to 7;
- up: to every higher opset up to the newest this build's onnx defines and onnxruntime
  loads;
- older forms up: the forms the downward conversions wrote (also of the tests with their
  parameter inputs made constants: Split's split, Reduce* axes, Pad's pads, TopK's K,
  Clip's min/max, Upsample's scales...) converted back up.

The number of conversions that pass onnx's full checker and reproduce the test's expected
outputs in onnxruntime must not fall below the floors, and no converted model may compute
something else unless the reason is outside the conversion (EXPLAINED, a kernel
onnxruntime names as missing, or a case onnxruntime does not reproduce at its own opset).
Raise the floors when coverage rises (docs/opset-conversion.md has the tables, beside
onnx.version_converter on the same cases; bench/opset_backend_report.py regenerates them).
"""

from __future__ import annotations

import re

import opset_backend as ob
import pytest

# Verified conversions per target opset (onnx 1.23.2, onnxruntime 1.32). Only ever raise.
FLOOR = {
    # 7 and 13 lower since onnxruntime runs again wherever an op's meaning (its schema
    # besides the type lists) changes between two targets (opset_backend._op_versions): it
    # has no Max-6/Min-6 kernel for double (7), and does not run LinearAttention's expanded
    # Scan bodies at 13 and below ("Subgraph must have the shape set for all outputs",
    # EXPLAINED); the shortcut had counted both verified from the opset above.
    7: 409,
    8: 421,
    # 9 and 10 one lower since 91affe4: ScatterND-16 add below 16 no longer goes through a
    # one-hot MatMul, which leaked NaN from an inf update into every row and turned an
    # untouched -0.0 into +0.0; its exact form keeps a ScatterND, which does not exist
    # below 11 (a decomposition of ScatterND for opsets 9-10 is not written yet).
    9: 550,
    10: 649,
    11: 1051,
    12: 1073,
    13: 902,
    14: 877,
    15: 863,
    16: 840,
    17: 790,
    18: 732,
    19: 700,
    20: 681,
    21: 680,
    22: 475,
    23: 289,
    24: 259,
    25: 160,
    26: 160,
    27: 115,
}

# Upwards, per target opset.
FLOOR_UP = {
    7: 3,
    8: 27,
    9: 28,
    10: 41,
    11: 48,
    12: 68,
    13: 68,
    14: 369,
    15: 433,
    16: 447,
    17: 491,
    18: 542,
    19: 737,
    20: 784,
    21: 824,
    22: 836,
    23: 1040,
    24: 1223,
    25: 1258,
    26: 1351,
    27: 1369,
    28: 1426,
}

# Older forms converted back up, per opset of the form (opset_backend.evaluate_roundtrip).
FLOOR_OLDER_FORMS_UP = {
    7: 574,
    8: 12,
    9: 130,
    10: 163,
    11: 556,
    12: 217,
    13: 414,
    14: 28,
    15: 328,
    16: 25,
    18: 293,
    19: 18,
    20: 13,
    21: 7,
    23: 5,
}

# Conversions that succeed but whose outputs onnxruntime does not reproduce, for reasons
# outside the conversion: random outputs, types or layouts ORT has no kernel for at the
# older opset (and cannot feed from numpy), ORT's own per-version differences. Any other
# mismatch is a conversion bug.
EXPLAINED = re.compile(
    r"test_(bernoulli.*|training_dropout.*|dropout_default_mask"
    r"|cast(like)?_.*(BFLOAT16|FLOAT8|INT4|UINT4|INT2|UINT2|FLOAT4).*"
    r"|(de)?quantizelinear_(e4m3fn|e5m2|int4|uint4|int2|uint2|float4e2m1).*"
    r"|attention_.*_bf16.*|range_bfloat16.*|(gru|lstm|simple_rnn)_batchwise"
    r"|maxunpool_export_with_output_shape|top_k_uint64|pow_types_float32_uint(32|64)"
    r"|(max|min)_u?int16|resize_downsample_scales_(cubic|linear)_align_corners"
    # swiglu: decomposed into Swish-24, which onnxruntime 1.32 only runs at opset 24.
    r"|dft(_.*)?_opset19|linear_attention_.*_expanded|celu_bfloat16.*|swiglu.*)"
)


def _explained(case: ob.Case, why: str, direction: str, converted) -> bool:
    """A conversion onnxruntime did not reproduce, for a reason outside the conversion."""
    if EXPLAINED.fullmatch(case.name) or why.startswith("no kernel"):
        return True
    if direction == "down":
        return False
    # Upwards the ops are mostly the test's own. A case onnxruntime does not reproduce at
    # its own opset either: a failure says nothing, and different outputs are explained
    # only when they are the ones onnxruntime computes from the test's own model (DFT and
    # STFT, whose near-zero outputs miss the absolute tolerance; float16 attention).
    own = ob.baseline(case)
    if why == "mismatch":
        return own == "mismatch" and ob.same_as_own_model_in_ort(converted, case)
    return own is not None


@pytest.fixture(scope="module")
def cases() -> list[ob.Case]:
    loaded = ob.load_cases()
    assert len(loaded) > 1500, f"only {len(loaded)} node tests loaded"
    return loaded


@pytest.fixture(scope="module")
def down(cases) -> ob.Tally:
    return ob.evaluate(cases, ob.convert_onnxsurgeon, keep_models=True)


def _unexplained(tally: ob.Tally, cases: list[ob.Case], direction: str, supported) -> list:
    by_key = {(c.name, c.variant): c for c in cases}
    found = []
    for pair, why in tally.unverified.items():
        name, target = pair[0], pair[1]
        case = by_key[(name, pair[3] if len(pair) > 3 else "")]
        if target in supported and not _explained(case, why, direction, tally.mismatched.get(pair)):
            found.append((*pair, why))
    return sorted(found)


def test_backend_node_cases_convert_to_every_lower_opset(cases, down):
    below = {t: (down.verified[t], floor) for t, floor in FLOOR.items() if down.verified[t] < floor}
    assert not below, f"verified conversions fell below the floor (target: (now, floor)): {below}"
    supported = {t for t in FLOOR if ob.ort_runs_opset(t)}
    assert {7, 13, 17, 21} <= supported
    unexplained = _unexplained(down, cases, "down", supported)
    assert not unexplained, f"converted models that compute something else: {unexplained[:30]}"


def test_backend_node_cases_convert_to_every_higher_opset(cases):
    assert ob.highest() >= 21
    up = ob.evaluate(cases, ob.convert_onnxsurgeon, direction="up")
    below = {t: (up.verified[t], floor) for t, floor in FLOOR_UP.items() if up.verified[t] < floor}
    assert not below, f"verified conversions fell below the floor (target: (now, floor)): {below}"
    unexplained = _unexplained(up, cases, "up", set(range(ob.LOWEST, ob.highest() + 1)))
    assert not unexplained, f"converted models that compute something else: {unexplained[:30]}"


def test_older_forms_convert_back_up(cases, down):
    with_variants, starts = ob.older_forms(cases, down, ob.convert_onnxsurgeon)
    tally = ob.evaluate_roundtrip(with_variants, starts, ob.convert_onnxsurgeon)
    below = {s: (tally.verified[s], floor) for s, floor in FLOOR_OLDER_FORMS_UP.items() if tally.verified[s] < floor}
    assert not below, f"verified conversions fell below the floor (form's opset: (now, floor)): {below}"
    unexplained = _unexplained(tally, with_variants, "older forms up", set(range(ob.LOWEST, ob.highest() + 1)))
    assert not unexplained, f"converted models that compute something else: {unexplained[:30]}"
    # Whatever was verified on the way down converts back up.
    unconverted = sum(tally.attempted.values()) - sum(tally.converted.values())
    assert unconverted == 0, f"{unconverted} older forms did not convert back up"
