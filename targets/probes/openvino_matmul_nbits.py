"""MatMulNBits on OpenVINO: the corpus LLaMA and GPT-2 (tests/models: llama_dynamo18,
gpt2_dynamo18) converted to opset 21 and quantized by onnxruntime's MatMulNBitsQuantizer (4
bits, block 32; LLaMA asymmetric with zero points, GPT-2 symmetric), each also as
lower-contrib-ops writes it (blocked int4 DequantizeLinear + MatMul; `dequantize=true`: float
weights), compiled on OpenVINO's CPU plugin (f32) with its default configuration and with
DYNAMIC_QUANTIZATION_GROUP_SIZE=0, against onnxruntime on the quantized model:

    mkdir /tmp/nbits && cd /tmp/nbits
    python $REPO/targets/probes/openvino_matmul_nbits.py make $REPO/build/onnxsurgeon $REPO/tests/models/.generated
    $REPO/.backends/openvino/venv/bin/python $REPO/targets/probes/openvino_matmul_nbits.py run

Results: openvino_matmul_nbits.txt.
"""

import subprocess
import sys

import numpy as np

MODELS = {"llama_int4": ("llama_dynamo18", False), "gpt2_int4": ("gpt2_dynamo18", True)}
FORMS = {
    "": None,
    "_dq": "lower-contrib-ops(ops=MatMulNBits)",
    "_float": "lower-contrib-ops(ops=MatMulNBits,dequantize=true)",
}


def make(cli, corpus):
    import logging

    import onnx
    import onnx.version_converter
    import onnxruntime as ort
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    logging.getLogger("onnxruntime.quantization").setLevel(logging.ERROR)
    for name, (source, symmetric) in MODELS.items():
        model = onnx.version_converter.convert_version(onnx.load(f"{corpus}/{source}.onnx"), 21)
        q = MatMulNBitsQuantizer(model, block_size=32, is_symmetric=symmetric, op_types_to_quantize=("MatMul",))
        q.process()
        onnx.save(q.model.model, f"{name}.onnx")
        session = ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"])
        with np.load(f"{corpus}/{source}.inputs.npz") as npz:
            feeds = {i.name: npz[i.name] for i in session.get_inputs()}
        np.savez(f"{name}.inputs.npz", **feeds)
        np.savez(f"{name}.ref.npz", *session.run(None, feeds))
        for suffix, pipeline in FORMS.items():
            if pipeline:
                subprocess.run([cli, "--pass", pipeline, f"{name}.onnx", "-o", f"{name}{suffix}.onnx"], check=True)


def run():
    import openvino as ov

    core = ov.Core()
    for name in MODELS:
        feeds = dict(np.load(f"{name}.inputs.npz"))
        ref = np.load(f"{name}.ref.npz")
        for suffix in FORMS:
            for config in ({}, {"DYNAMIC_QUANTIZATION_GROUP_SIZE": "0"}):
                compiled = core.compile_model(
                    core.read_model(f"{name}{suffix}.onnx"), "CPU", {"INFERENCE_PRECISION_HINT": "f32", **config}
                )
                out = compiled(feeds)
                err = max(float(np.abs(out[p] - ref[f"arr_{i}"]).max()) for i, p in enumerate(compiled.outputs))
                print(
                    f"{name}{suffix}: {config or 'default configuration'}: max abs error vs onnxruntime {err:.2e}"
                    f" (output range {np.abs(ref['arr_0']).max():.3g})"
                )


if __name__ == "__main__":
    if sys.argv[1:2] == ["make"]:
        make(*sys.argv[2:4])
    else:
        run()
