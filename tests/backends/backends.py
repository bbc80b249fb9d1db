"""The real backends the harness runs, and what it asks of each.

One entry per runner in tests/backends/runners/ and per pinned requirements file in
scripts/backends/. `targets` lists the onnxsurgeon profiles to ask for, first existing
first; `pipeline` is the hand-chained pass pipeline used when none exists (the harness
proves itself end to end before the planner lands, and reports which it used).
`static` backends get the corpus inputs' shapes as fixed input shapes (the hand pipeline
sets them again at the end: set-input-shape re-runs shape inference, so every value the
rewrites made gets its value_info, which nncase needs).

Tolerances are element-wise, per output (numpy.allclose: |out - ref| <= atol + rtol * |ref|
for every element, NaN only against NaN; python/onnxsurgeon/tolerance.py, the comparison
--check uses), with the corpus model's own tolerance if larger (fp16 models). float32
outputs get `rtol`/`atol`, float16 and bfloat16 outputs `fp16_rtol`/`fp16_atol`, integer and
bool outputs must be equal; a corpus model tagged fp16 (computing in float16 with float32
inputs and outputs kept or not) gets the float16 bound on every output. The default float32
bound (rtol 1e-4, atol 1e-4, --check's) is 30x the largest error measured on the corpus
by any float32 backend after `--target` (onnxruntime 1.10-1.15, OpenVINO, nncase-k210, onnx2tf/TFLite, ncnn: at most 3.2e-6 on
outputs of magnitude ~1, docs/results), so no float32 backend needs an override. rknn's
simulator computes in float16 (rknn-toolkit2 has no float32 mode for rk3588): its float32
outputs get float16's bound, 1e-2 + 1e-2 * |ref| (measured after `--target`: at most
9.3e-3 absolute, tf_vit_block_op15). Judged element-wise, the models with the largest
errors in docs/results pass with no element off: rknn2's nine worst (max abs 9.3e-3),
tflite's five worst float32 ones (max abs 2.4e-6), and every row re-run on onnxruntime
1.10/1.14/1.15, OpenVINO and nncase-k210.
"""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Backend:
    name: str
    summary: str
    targets: tuple[str, ...]
    pipeline: str  # {shapes} is replaced by the set-input-shape items for static backends
    static: bool = False
    rtol: float = 1e-4  # float32 outputs
    atol: float = 1e-4
    fp16_rtol: float = 1e-2  # float16 / bfloat16 outputs
    fp16_atol: float = 1e-2
    timeout: int = 300  # seconds per runner call
    tolerance_note: str = "fp32"
    # The runtime has no batch dimension (ncnn's Mat): inputs and references are cut to
    # the first batch item where the model allows any batch.
    batch_one: bool = False
    # The corpus model `--smoke` (and make test's smoke test) runs: small, and one the
    # backend can be given at all.
    smoke_model: str = "layernorm_op17"


_COMMON = "inline-functions,fix-layernorm,rewrite-index-put,simplify"

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            "ort-1.10",
            "onnxruntime 1.10 (Python 3.9): opset <= 15, IR <= 8",
            ("ort-1.10",),
            f"{_COMMON},downgrade-opset=15",
        ),
        Backend(
            "ort-1.14",
            "onnxruntime 1.14 (Python 3.9): opset <= 18, IR <= 8",
            ("ort-1.14",),
            f"{_COMMON},downgrade-opset=18",
        ),
        Backend(
            "ort-1.15",
            "onnxruntime 1.15 (Python 3.11): opset <= 19, IR <= 9",
            ("ort-1.15",),
            f"{_COMMON},downgrade-opset=19",
        ),
        Backend(
            "openvino",
            "OpenVINO 2026.4 CPU plugin, f32 inference precision",
            ("openvino",),
            _COMMON,
        ),
        Backend(
            "rknn2",
            "rknn-toolkit2 2.5, rk3588, x86 simulator (fp16)",
            ("rknn2",),
            f"{_COMMON},downgrade-opset=19",
            rtol=1e-2,
            atol=1e-2,
            timeout=600,
            tolerance_note="fp16 simulator",
        ),
        Backend(
            "nncase-k210",
            "nncase 1.9 (Python 3.9), K210 target, simulator, no quantization",
            ("nncase-k210",),
            "set-input-shape(shapes={shapes}),inline-functions,fix-layernorm,rewrite-index-put,simplify,"
            "fix-layernorm(to=decomposed),decompose-layernorm,rewrite-gelu(to=erf),downgrade-opset=13,"
            "set-input-shape(shapes={shapes})",
            static=True,
        ),
        Backend(
            "ncnn",
            "ncnn 1.0.20261020 via pnnx 20261020 (ONNX -> pnnx -> ncnn param/bin), CPU, fp32",
            ("ncnn",),
            f"{_COMMON},downgrade-opset=17",
            timeout=900,
            batch_one=True,
            # layernorm_op17 fixes batch 2, which ncnn cannot run (a named blocker); op13's
            # batch is dynamic.
            smoke_model="layernorm_op13",
        ),
        Backend(
            "tflite",
            "onnx2tf 1.29 -> float32 .tflite, TensorFlow 2.19 interpreter",
            ("tflite",),
            "set-input-shape(shapes={shapes}),inline-functions,fix-layernorm,rewrite-index-put,simplify,"
            "fix-layernorm(to=decomposed),decompose-layernorm,lower-scatternd-reduction,set-input-shape(shapes={shapes})",
            static=True,
            timeout=900,
        ),
    )
}
