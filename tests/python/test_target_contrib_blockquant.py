"""`--target` on onnxruntime's block-quantized weight ops: an int4 LLaMA (onnxruntime's int4
quantizer with Gather among its ops: GatherBlockQuantized embeddings, MatMulNBits) and a GPT-2
through its MatMulBnb4Quantizer (NF4), and the transformer optimizer's BERT through
quantize_dynamic (QAttention, QEmbedLayerNormalization, DynamicQuantizeMatMul). The profiles that lack the ops plan
lower-contrib-ops(ops=...) for exactly those (dequantize=true where the target is below
opset 21), the result passes its own `check --target` and matches onnxruntime on the
original. The real backends (onnxruntime 1.14, OpenVINO) run the result where their venvs
are installed: both refused GatherBlockQuantized and MatMulBnb4 at load, OpenVINO QAttention
and QEmbedLayerNormalization, onnxruntime 1.10 QAttention's mask_filter_value
(targets/probes/contrib_ops.txt, targets/ort-1.10.toml)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from harness import BACKENDS_DIR  # noqa: E402

MS = "com.microsoft"


def _contrib(path):
    return {n.op_type for n in onnx.load(path).graph.node if n.domain == MS}


def _ort(path, feeds):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: feeds[i.name] for i in s.get_inputs()})


@pytest.fixture(scope="module")
def quantized(corpus, tmp_path_factory):
    """name -> (path, the corpus entry): llama_int4 (GatherBlockQuantized with zero points and
    MatMulNBits), llama_gather_int4 (GatherBlockQuantized only), gpt2_nf4 (MatMulBnb4)."""
    import onnx.version_converter
    from onnxruntime.quantization.matmul_bnb4_quantizer import MatMulBnb4Quantizer
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    out_dir = tmp_path_factory.mktemp("quantized")
    llama = corpus.model("llama_dynamo18")
    out = {}
    for name, ops, symmetric in [("llama_int4", ("MatMul", "Gather"), False), ("llama_gather_int4", ("Gather",), True)]:
        model = onnx.version_converter.convert_version(onnx.load(llama.path), 21)
        q = MatMulNBitsQuantizer(model, block_size=32, is_symmetric=symmetric, op_types_to_quantize=ops)
        q.process()
        onnx.save(q.model.model, out_dir / f"{name}.onnx")
        out[name] = (out_dir / f"{name}.onnx", llama)
    gpt2 = corpus.model("gpt2_dynamo18")
    q = MatMulBnb4Quantizer(onnx.load(gpt2.path), MatMulBnb4Quantizer.NF4, 64)
    q.process()
    onnx.save(q.model.model, out_dir / "gpt2_nf4.onnx")
    out["gpt2_nf4"] = (out_dir / "gpt2_nf4.onnx", gpt2)
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers.optimizer import optimize_model

    logging.getLogger("onnxruntime").setLevel(logging.ERROR)
    bert = corpus.model("bert_op14")
    onnx.save(optimize_model(str(bert.path), model_type="bert", opt_level=1, use_gpu=False).model, out_dir / "opt.onnx")
    quantize_dynamic(
        out_dir / "opt.onnx",
        out_dir / "bert_qd.onnx",
        weight_type=QuantType.QInt8,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
    )
    out["bert_qd"] = (out_dir / "bert_qd.onnx", bert)
    return out


def _cli(cli_path, *args, env=None):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True, env=env)


# target -> model -> the plan's lower-contrib-ops step (None: nothing lowered)
PLANS = {
    "ort": {"llama_int4": None, "gpt2_nf4": None, "bert_qd": None},
    # 1.10 knows QAttention, not its mask_filter_value
    "ort-1.10": {"bert_qd": "lower-contrib-ops(ops=QAttention)"},
    "ort-1.14": {
        "llama_int4": "lower-contrib-ops(ops=MatMulNBits;GatherBlockQuantized,dequantize=true)",
        "gpt2_nf4": "lower-contrib-ops(ops=MatMulBnb4)",
    },
    # OpenVINO runs MatMulNBits approximately (its CPU plugin quantizes the activations:
    # targets/probes/openvino_matmul_nbits.txt) and the blocked int4 DequantizeLinear form
    # alike, so its profile asks for float weights ([quantization] block_weights)
    "openvino": {
        "llama_int4": "lower-contrib-ops(ops=MatMulNBits;GatherBlockQuantized,dequantize=true)",
        "gpt2_nf4": "lower-contrib-ops(ops=MatMulBnb4)",
        "bert_qd": "lower-contrib-ops(ops=QAttention;QEmbedLayerNormalization)",
    },
    "trt-10": {
        "llama_int4": "lower-contrib-ops(ops=MatMulNBits;GatherBlockQuantized,dequantize=true)",
        "gpt2_nf4": "lower-contrib-ops(ops=MatMulBnb4)",
    },
    "rknn2": {
        "llama_int4": "lower-contrib-ops(ops=MatMulNBits;GatherBlockQuantized,dequantize=true)",
        "gpt2_nf4": "lower-contrib-ops(ops=MatMulBnb4)",
    },
}


# (quantize_dynamic's BERT also has DynamicQuantizeLinear, which TensorRT and rknn2 lack: a
# named blocker of the quantization, not of the contrib ops.)
@pytest.mark.parametrize(("target", "model"), [(t, m) for t in sorted(PLANS) for m in PLANS[t]])
def test_target_plans_block_quantized_lowering(cli_path, quantized, tmp_path, target, model):
    src, entry = quantized[model]
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", target, src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    plan = next((line for line in proc.stderr.splitlines() if f"target {target}: ran" in line), "")
    step = PLANS[target][model]
    if step is None:
        assert "lower-contrib-ops" not in plan, plan
        assert _contrib(out) == _contrib(src)
    else:
        assert step in plan, plan
        lowered = set(step.split("ops=")[1].split(",")[0].rstrip(")").split(";"))
        assert not _contrib(out) & lowered
    check = _cli(cli_path, "check", "--target", target, out)
    assert check.returncode == 0, check.stdout + check.stderr
    for feeds in entry.all_inputs:
        for w, g in zip(_ort(src, feeds), _ort(out, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


# The real backends. OpenVINO's CPU plugin quantizes a MatMulNBits' activations on the fly
# (its dynamic quantization of int4-compressed weights, 2.6e-2 off on llama_int4 as it is);
# the profile lowers it with float weights, so llama_int4 matches there too.
REAL = [
    ("ort-1.14", "llama_int4"),
    ("ort-1.14", "gpt2_nf4"),
    ("ort-1.10", "bert_qd"),
    ("openvino", "llama_int4"),
    ("openvino", "llama_gather_int4"),
    ("openvino", "gpt2_nf4"),
    ("openvino", "bert_qd"),
]


@pytest.mark.parametrize(("target", "model"), REAL)
def test_backend_check_real_backend(cli_path, quantized, tmp_path, target, model):
    if not (BACKENDS_DIR / target / "ready").is_file():
        pytest.skip(f"{target} venv not installed (make backends-setup BACKENDS={target})")
    src, _ = quantized[model]
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR))
    out = tmp_path / "out.onnx"
    proc = _cli(cli_path, "--target", target, "--backend-check", src, "-o", out, env=env)
    assert proc.returncode == 0, proc.stderr
    assert f"backend check on {target}" in proc.stderr and ": ok," in proc.stderr, proc.stderr
