"""Which float16 ops an onnxruntime runs on the CPU: one single-node float16 model per op
(ai.onnx opset 13, IR 7, x: float16 [1, 8, 16, 16]), each run in its own process (a kernel
that crashes takes the process down), compared with the same op in float32 on the current
onnxruntime (float16 tolerance, 1e-2 + 1e-2 x |ref|).

    python targets/probes/fp16_ops.py make /tmp/fp16          # onnx + onnxruntime needed
    python targets/probes/fp16_ops.py probe /tmp/fp16 .backends/ort-1.14/venv/bin/python

Prints one line per op: OK with the max abs error, WRONG, REFUSED with the first message
line, or CRASHED with the signal."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

import numpy as np

C, HW = 8, 16
# op -> (extra inputs as (name, float32 array or int64 array), attributes)
rng = np.random.default_rng(0)
OPS = {
    "Relu": ([], {}),
    "Sigmoid": ([], {}),
    "HardSigmoid": ([], {"alpha": 1 / 6, "beta": 0.5}),
    "Erf": ([], {}),
    "Clip": ([("lo", np.array(0.0, np.float32)), ("hi", np.array(6.0, np.float32))], {}),
    "Div": ([("d", np.array(6.0, np.float32))], {}),
    "Mul": ([("m", np.array(0.5, np.float32))], {}),
    "Add": ([("a", rng.standard_normal((1, C, 1, 1)).astype(np.float32))], {}),
    "GlobalAveragePool": ([], {}),
    "ReduceMean": ([], {"axes": [1], "keepdims": 1}),
    "MaxPool": ([], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "Conv": ([("w", rng.standard_normal((C, C, 3, 3)).astype(np.float32) * 0.1)], {"pads": [1, 1, 1, 1]}),
    "ConvTranspose": ([("w", rng.standard_normal((C, C, 2, 2)).astype(np.float32) * 0.1)], {"strides": [2, 2]}),
    "BatchNormalization": (
        [
            ("scale", rng.random(C).astype(np.float32) + 0.5),
            ("bias", rng.standard_normal(C).astype(np.float32)),
            ("mean", rng.standard_normal(C).astype(np.float32)),
            ("var", rng.random(C).astype(np.float32) + 0.5),
        ],
        {},
    ),
    "Resize": (
        [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1, 2, 2], np.float32))],
        {"mode": "nearest"},
    ),
    "ResizeLinear": (
        [("roi", np.zeros(0, np.float32)), ("scales", np.array([1, 1, 2, 2], np.float32))],
        {"mode": "linear"},
    ),
}
FLOAT_PARAMS = {"scales", "roi"}  # stay float32 (Resize's scales and roi are float)


def build(op: str, dtype) -> "onnx.ModelProto":  # noqa: F821
    from onnx import TensorProto, helper, numpy_helper

    extra, attrs = OPS[op]
    elem = TensorProto.FLOAT16 if dtype == np.float16 else TensorProto.FLOAT
    inits = [numpy_helper.from_array(a if name in FLOAT_PARAMS else a.astype(dtype), name) for name, a in extra]
    node = helper.make_node(op.removesuffix("Linear"), ["x", *[n for n, _ in extra]], ["y"], **attrs)
    graph = helper.make_graph(
        [node],
        op,
        [helper.make_tensor_value_info("x", elem, [1, C, HW, HW])],
        [helper.make_tensor_value_info("y", elem, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def make(folder: str) -> None:
    import onnx
    import onnxruntime as ort

    os.makedirs(folder, exist_ok=True)
    x = rng.standard_normal((1, C, HW, HW)).astype(np.float32) * 3
    np.save(os.path.join(folder, "x.npy"), x)
    for op in OPS:
        onnx.save(build(op, np.float16), os.path.join(folder, op + ".onnx"))
        ref = ort.InferenceSession(build(op, np.float32).SerializeToString(), providers=["CPUExecutionProvider"])
        np.save(os.path.join(folder, op + ".ref.npy"), ref.run(None, {"x": x.astype(np.float16).astype(np.float32)})[0])
    print(f"wrote {len(OPS)} float16 models and onnxruntime {ort.__version__}'s float32 outputs into {folder}")


RUN_ONE = (
    "import sys, numpy as np, onnxruntime as ort\n"
    "s = ort.InferenceSession(sys.argv[1], providers=['CPUExecutionProvider'])\n"
    "x = np.load(sys.argv[2]).astype(np.float16)\n"
    "np.save(sys.argv[3], s.run(None, {'x': x})[0])\n"
    "print(ort.__version__)\n"
)


def probe(folder: str, python: str) -> None:
    for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        op = os.path.basename(path)[: -len(".onnx")]
        out = os.path.join(folder, op + ".out.npy")
        proc = subprocess.run(
            [python, "-c", RUN_ONE, path, os.path.join(folder, "x.npy"), out], capture_output=True, text=True
        )
        if proc.returncode < 0:
            print(f"{op}: CRASHED (signal {-proc.returncode})")
            continue
        if proc.returncode != 0:
            lines = [line for line in proc.stderr.splitlines() if line.strip()]
            print(f"{op}: REFUSED {(lines[-1] if lines else '')[:200]}")
            continue
        got, ref = np.load(out).astype(np.float32), np.load(os.path.join(folder, op + ".ref.npy"))
        err = float(np.abs(got - ref).max())
        ok = got.shape == ref.shape and np.allclose(got, ref, rtol=1e-2, atol=1e-2)
        print(f"{op}: {'OK' if ok else 'WRONG'} (onnxruntime {proc.stdout.strip()}), max abs error {err:.2e}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("make", "probe") or (sys.argv[1] == "probe") != (len(sys.argv) == 4):
        sys.exit(__doc__)
    make(sys.argv[2]) if sys.argv[1] == "make" else probe(sys.argv[2], sys.argv[3])
