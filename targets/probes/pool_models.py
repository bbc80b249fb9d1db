"""Write single AveragePool models (x: float32 [1,4,H,H], opset 13) whose kernel is larger
than, equal to or padded up to the input, and run them on OpenVINO (with its own python,
read_model + compile_model on CPU) or, with --ort, on onnxruntime against the input's mean.

    python targets/probes/pool_models.py                         # writes *.onnx here
    .backends/openvino/venv/bin/python targets/probes/pool_models.py --run *.onnx
    python targets/probes/pool_models.py --ort *.onnx

pool_models.txt holds the results for OpenVINO 2026.4.1 and onnxruntime 1.32.0."""

import sys

import numpy as np

# name, H, kernel, ceil_mode, pads, count_include_pad, strides
CASES = [
    ("k2_h2", 2, 2, 0, None, 0, None),
    ("k2_h2_ceil", 2, 2, 1, None, 0, None),
    ("k3_h3_ceil", 3, 3, 1, None, 0, None),
    ("k4_h4_ceil", 4, 4, 1, None, 0, None),
    ("k3_h2_pad", 2, 3, 0, [1, 1, 0, 0], 0, None),
    ("k3_h2_pad_ceil", 2, 3, 1, [1, 1, 0, 0], 0, None),
    ("k3_h2", 2, 3, 0, None, 0, None),
    ("k3_h2_ceil", 2, 3, 1, None, 0, None),
    ("k3_h2_s3", 2, 3, 0, None, 0, [3, 3]),
    ("k3_h2_ceil_s3", 2, 3, 1, None, 0, [3, 3]),
    ("k3_h2_ceil_s3_cip", 2, 3, 1, None, 1, [3, 3]),
    ("k4_h3_ceil", 3, 4, 1, None, 0, None),
    ("k5_h4_ceil", 4, 5, 1, None, 0, None),
    ("k5_h4_ceil_s2", 4, 5, 1, None, 0, [2, 2]),
    ("k320_h2", 2, 320, 0, None, 0, None),
    ("k320_h2_ceil", 2, 320, 1, None, 0, None),
    ("k320_h2_ceil_s320", 2, 320, 1, None, 1, [320, 320]),
]


def height(path):
    return int(path.split("_h")[1].split("_")[0].split(".")[0])


def write():
    import onnx
    from onnx import TensorProto
    from onnx import helper as h

    for name, size, k, ceil, pads, cip, strides in CASES:
        attrs = dict(kernel_shape=[k, k], ceil_mode=ceil, count_include_pad=cip)
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        node = h.make_node("AveragePool", ["x"], ["y"], **attrs)
        x = h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, size, size])
        y = h.make_tensor_value_info("y", TensorProto.FLOAT, None)
        m = h.make_model(h.make_graph([node], name, [x], [y]), opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.save(m, name + ".onnx")


def run_openvino(paths):
    import openvino as ov

    core = ov.Core()
    print("openvino", ov.__version__)
    for m in paths:
        x = np.random.default_rng(0).standard_normal((1, 4, height(m), height(m))).astype(np.float32)
        try:
            compiled = core.compile_model(core.read_model(m), "CPU")
            y = compiled([x])[compiled.output(0)]
            err = np.abs(y - x.mean(axis=(2, 3), keepdims=True)).max() if y.shape[2:] == (1, 1) else "-"
            print(m, "OK", list(y.shape), "max error vs the mean", err)
        except Exception as e:
            print(m, "FAIL", " ".join(str(e).split())[-260:])


def run_ort(paths):
    import onnxruntime as ort

    print("onnxruntime", ort.__version__)
    for m in paths:
        x = np.random.default_rng(0).standard_normal((1, 4, height(m), height(m))).astype(np.float32)
        try:
            y = ort.InferenceSession(m).run(None, {"x": x})[0]
        except Exception as e:
            print(m, "FAIL", str(e).split("Status Message:")[-1].strip()[:160])
            continue
        err = np.abs(y - x.mean(axis=(2, 3), keepdims=True)).max() if y.shape[2:] == (1, 1) else "-"
        print(m, "OK", list(y.shape), "max error vs the mean", err)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_openvino(sys.argv[2:])
    elif sys.argv[1:2] == ["--ort"]:
        run_ort(sys.argv[2:])
    else:
        write()
