"""QDQ models for the [quantization] qdq facts: a small torch CNN (Conv 4->8, Relu, Conv 8->4,
input float32 [1,4,8,8], opset 13) quantized by onnxruntime's quantize_static in QDQ form
(per-tensor: uint8 activations, int8 weights; and per-channel weights), each with its inputs
(NAME.inputs.npz) and onnxruntime's outputs (NAME.ref.npz), plus the float model:

    mkdir /tmp/qdq && cd /tmp/qdq && python $REPO/targets/probes/qdq_models.py
    for f in qdq_per_tensor qdq_per_channel; do    # the folded forms --target writes
      onnxsurgeon --pass 'fold-qdq(weights=true),infer-shapes' $f.onnx -o ${f}_folded.onnx
      cp $f.inputs.npz ${f}_folded.inputs.npz; cp $f.ref.npz ${f}_folded.ref.npz; done
    for f in *.onnx; do
      $REPO/.backends/nncase-k210/venv/bin/python $REPO/tests/backends/runners/run-nncase-k210.py \\
          $f ${f%.onnx}.inputs.npz out-k210-${f%.onnx}; done    # and run-tflite.py with tflite's venv
    python $REPO/targets/probes/qdq_models.py --compare out-k210 out-tflite

Why the folded models are off: `--explain` writes, from each NAME_folded.onnx, NAME_dropped
(every activation Q->DQ replaced by Identity: fake quantization without its saturation)
and NAME_clipped (each activation Q->DQ as a Clip to its quantized range, the rounding
dropped), with NAME's inputs and reference; run them as above:

    python $REPO/targets/probes/qdq_models.py --explain
"""

import json
import sys
from pathlib import Path

import numpy as np


def write_models():
    import onnx
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    torch.manual_seed(0)
    module = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(8, 4, 1)).eval()
    torch.onnx.export(
        module,
        (torch.randn(1, 4, 8, 8),),
        "cnn_float.onnx",
        opset_version=13,
        input_names=["x"],
        output_names=["y"],
        dynamo=False,
    )

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.data = iter([{"x": rng.standard_normal((1, 4, 8, 8)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    for name, per_channel in (("qdq_per_tensor", False), ("qdq_per_channel", True)):
        quantize_static(
            "cnn_float.onnx",
            f"{name}.onnx",
            Reader(),
            quant_format=QuantFormat.QDQ,
            per_channel=per_channel,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
    x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
    for name in ("cnn_float", "qdq_per_tensor", "qdq_per_channel"):
        np.savez(f"{name}.inputs.npz", x=x)
        s = ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"])
        np.savez(f"{name}.ref.npz", out0=s.run(None, {"x": x})[0])
        ops = sorted({n.op_type for n in onnx.load(f"{name}.onnx").graph.node})
        print(name, ops)


def compare(out_prefixes):
    names = sorted(p.name[: -len(".ref.npz")] for p in Path(".").glob("*.ref.npz"))
    for prefix in out_prefixes:
        for name in names:
            out = Path(f"{prefix}-{name}")
            if not out.exists():
                continue
            result = json.loads((out / "result.json").read_text()) if (out / "result.json").exists() else {}
            line = f"{prefix} {name}: {result.get('status', 'no result')} {result.get('stage', '')}"
            if result.get("status") == "ok":
                got = np.load(out / "outputs.npz")["out0"]
                ref = np.load(f"{name}.ref.npz")["out0"]
                if got.shape != ref.shape and got.ndim == 4:
                    got = got.transpose(0, 3, 1, 2)
                line += f" max abs error vs onnxruntime {np.abs(got - ref).max():.3g} (output range {np.abs(ref).max():.3g})"
            else:
                line += " " + result.get("message", "")[:200]
            print(line)


def write_explained():
    import shutil

    import onnx
    from onnx import helper, numpy_helper

    for name in ("qdq_per_tensor", "qdq_per_channel"):
        for mode in ("dropped", "clipped"):
            model = onnx.load(f"{name}_folded.onnx")
            graph = model.graph
            consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
            quantize = {n.output[0]: n for n in graph.node if n.op_type == "QuantizeLinear"}
            nodes = []
            for n in graph.node:
                if n.op_type == "QuantizeLinear":
                    continue
                q = quantize.get(n.input[0]) if n.op_type == "DequantizeLinear" else None
                if q is None:
                    nodes.append(n)
                    continue
                scale, zero = float(consts[q.input[1]]), consts[q.input[2]]
                if mode == "dropped":
                    nodes.append(helper.make_node("Identity", [q.input[0]], [n.output[0]]))
                    continue
                info = np.iinfo(zero.dtype)
                bounds = [n.output[0] + "_lo", n.output[0] + "_hi"]
                for bound, q_value in zip(bounds, (info.min, info.max)):
                    value = np.float32((q_value - float(zero)) * scale)
                    graph.initializer.append(numpy_helper.from_array(value, bound))
                nodes.append(helper.make_node("Clip", [q.input[0], *bounds], [n.output[0]]))
            del graph.node[:]
            graph.node.extend(nodes)
            onnx.save(model, f"{name}_{mode}.onnx")
            for kind in ("inputs", "ref"):
                shutil.copy(f"{name}.{kind}.npz", f"{name}_{mode}.{kind}.npz")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--explain"]:
        write_explained()
    elif sys.argv[1:2] == ["--compare"]:
        compare(sys.argv[2:])
    else:
        write_models()
