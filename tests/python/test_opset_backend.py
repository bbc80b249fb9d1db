"""convert-opset on every ONNX backend node test, to every lower opset down to 7: the
number of (case, target) conversions that pass onnx's full checker and reproduce the
test's expected outputs in onnxruntime must not fall below the floor. Raise the floor
when coverage rises (docs/opset-conversion.md has the table, beside
onnx.version_converter on the same cases; bench/opset_backend_report.py regenerates it).
"""

from __future__ import annotations

import re

import opset_backend as ob

# Verified conversions per target opset (onnx 1.23.2, onnxruntime 1.32). Only ever raise.
FLOOR = {
    7: 411,
    8: 421,
    # 9 and 10 one lower since 91affe4: ScatterND-16 add below 16 no longer goes through a
    # one-hot MatMul, which leaked NaN from an inf update into every row and turned an
    # untouched -0.0 into +0.0; its exact form keeps a ScatterND, which does not exist
    # below 11 (a decomposition of ScatterND for opsets 9-10 is not written yet).
    9: 550,
    10: 649,
    11: 1050,
    12: 1072,
    13: 915,
    14: 876,
    15: 862,
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


def test_backend_node_cases_convert_to_every_lower_opset():
    cases = ob.load_cases()
    assert len(cases) > 1500, f"only {len(cases)} node tests loaded"
    tally = ob.evaluate(cases, ob.convert_onnxsurgeon)
    below = {t: (tally.verified[t], floor) for t, floor in FLOOR.items() if tally.verified[t] < floor}
    assert not below, f"verified conversions fell below the floor (target: (now, floor)): {below}"
    supported = {t for t in FLOOR if ob.ort_runs_opset(t)}
    assert {7, 13, 17, 21} <= supported
    unexplained = sorted(
        (name, t) for name, t in tally.unverified_pairs if t in supported and not EXPLAINED.fullmatch(name)
    )
    assert not unexplained, f"converted models that compute something else: {unexplained[:30]}"
