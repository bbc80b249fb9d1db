"""Which quantized kernels an older onnxruntime has, per element type: one-node models of the
forms onnxruntime's own quantizers write (tests/backends/quant_corpus.py found them refused
on onnxruntime 1.10: the int16 QDQ form's com.microsoft DequantizeLinear of an int32 bias,
QuantizeLinear's QGemm, quantize_dynamic's ConvInteger with int8 weights), each run on a
session in an onnxruntime venv (and a float16 Relu at opsets 13 to 18: onnxconverter-common's
float16 of an opset-17 CNN crashed onnxruntime 1.14, at load with optimizations off too) (which has no onnx: the models are written first):

    python targets/probes/quant_kernels.py write /tmp/qk
    for v in ort-1.10 ort-1.14 ort-1.15; do for c in /tmp/qk/case*.onnx; do
      $REPO/.backends/$v/venv/bin/python targets/probes/quant_kernels.py run $c; rc=$?; [ $rc = 0 ] || echo "$v $c: exit $rc"
    done; done

Prints one line per model: "ok" or the first line of the error; a crash kills the run (the
shell loop below prints the exit status): each case runs in its own process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

try:
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
except ImportError:  # a backend venv: run only
    onnx = T = h = None


def _dq(dtype: int, np_type):
    node = h.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], domain="com.microsoft")
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", dtype, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, [4])],
        [h.make_tensor("s", T.FLOAT, [], [0.5]), h.make_tensor("z", dtype, [], [0])],
    )
    return graph, {"x": np.arange(4).astype(np_type)}


def _q(dtype: int):
    node = h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], domain="com.microsoft")
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("y", dtype, [4])],
        [h.make_tensor("s", T.FLOAT, [], [0.5]), h.make_tensor("z", dtype, [], [0])],
    )
    return graph, {"x": np.arange(4).astype(np.float32)}


def _qgemm(a_type: int, b_type: int):
    inputs = ["a", "sa", "za", "b", "sb", "zb", "", "sy", "zy"]
    node = h.make_node("QGemm", inputs, ["y"], domain="com.microsoft", transB=1)
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("a", a_type, [2, 4])],
        [h.make_tensor_value_info("y", a_type, [2, 3])],
        [
            h.make_tensor("sa", T.FLOAT, [], [0.1]),
            h.make_tensor("za", a_type, [], [1]),
            h.make_tensor("b", b_type, [3, 4], [1] * 12),
            h.make_tensor("sb", T.FLOAT, [], [0.1]),
            h.make_tensor("zb", b_type, [], [0]),
            h.make_tensor("sy", T.FLOAT, [], [0.1]),
            h.make_tensor("zy", a_type, [], [1]),
        ],
    )
    return graph, {"a": np.full((2, 4), 3, np.uint8 if a_type == T.UINT8 else np.int8)}


def _conv_integer(w_type: int):
    node = h.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"])
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.UINT8, [1, 1, 3, 3])],
        [h.make_tensor_value_info("y", T.INT32, [1, 1, 3, 3])],
        [
            h.make_tensor("w", w_type, [1, 1, 1, 1], [2]),
            h.make_tensor("xz", T.UINT8, [], [1]),
            h.make_tensor("wz", w_type, [], [0]),
        ],
    )
    return graph, {"x": np.full((1, 1, 3, 3), 3, np.uint8)}


def _relu16():
    node = h.make_node("Relu", ["x"], ["y"])
    graph = h.make_graph(
        [node],
        "g",
        [h.make_tensor_value_info("x", T.FLOAT16, [2, 4])],
        [h.make_tensor_value_info("y", T.FLOAT16, [2, 4])],
    )
    return graph, {"x": (np.arange(8).reshape(2, 4) - 4).astype(np.float16)}


def _qdq19():
    nodes = [
        h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
    ]
    graph = h.make_graph(
        nodes,
        "g",
        [h.make_tensor_value_info("x", T.FLOAT, [4])],
        [h.make_tensor_value_info("y", T.FLOAT, [4])],
        [h.make_tensor("s", T.FLOAT, [], [0.5]), h.make_tensor("z", T.INT8, [], [0])],
    )
    return graph, {"x": np.array([0.3, 1.2, -3, 7], np.float32)}


# The ai.onnx opset of each case's model (13 unless listed): Relu-14 is a new version, the
# one every opset from 14 on uses (onnxruntime 1.14 knows opsets up to 18).
RELU_OPSETS = (13, 14, 15, 16, 17, 18)
OPSETS = {f"Relu float16 at opset {v}": v for v in RELU_OPSETS} | {
    "QuantizeLinear -> DequantizeLinear int8 at opset 19": 19
}

CASES = lambda: {  # noqa: E731  (built only where onnx is)
    "com.microsoft DequantizeLinear int8": lambda: _dq(T.INT8, np.int8),
    "com.microsoft DequantizeLinear uint8": lambda: _dq(T.UINT8, np.uint8),
    "com.microsoft DequantizeLinear int16": lambda: _dq(T.INT16, np.int16),
    "com.microsoft DequantizeLinear uint16": lambda: _dq(T.UINT16, np.uint16),
    "com.microsoft DequantizeLinear int32": lambda: _dq(T.INT32, np.int32),
    "com.microsoft QuantizeLinear int16": lambda: _q(T.INT16),
    "com.microsoft QuantizeLinear uint16": lambda: _q(T.UINT16),
    "com.microsoft QGemm uint8 x int8": lambda: _qgemm(T.UINT8, T.INT8),
    "com.microsoft QGemm uint8 x uint8": lambda: _qgemm(T.UINT8, T.UINT8),
    "com.microsoft QGemm int8 x int8": lambda: _qgemm(T.INT8, T.INT8),
    "ConvInteger uint8 x uint8": lambda: _conv_integer(T.UINT8),
    "ConvInteger uint8 x int8": lambda: _conv_integer(T.INT8),
    **{f"Relu float16 at opset {v}": _relu16 for v in RELU_OPSETS},
    "QuantizeLinear -> DequantizeLinear int8 at opset 19": _qdq19,
}


def write(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    for k, (name, make) in enumerate(CASES().items()):
        graph, feeds = make()
        opsets = [h.make_opsetid("", OPSETS.get(name, 13)), h.make_opsetid("com.microsoft", 1)]
        model = h.make_model(graph, opset_imports=opsets)
        model.ir_version = 7
        model.doc_string = name
        onnx.save(model, str(folder / f"case{k:02d}.onnx"))
        np.savez(folder / f"case{k:02d}.npz", **feeds)


# The case names in write order, for the refusals (a refused session has no metadata).
NAMES = {
    f"case{k:02d}": name
    for k, name in enumerate(
        [
            "com.microsoft DequantizeLinear int8",
            "com.microsoft DequantizeLinear uint8",
            "com.microsoft DequantizeLinear int16",
            "com.microsoft DequantizeLinear uint16",
            "com.microsoft DequantizeLinear int32",
            "com.microsoft QuantizeLinear int16",
            "com.microsoft QuantizeLinear uint16",
            "com.microsoft QGemm uint8 x int8",
            "com.microsoft QGemm uint8 x uint8",
            "com.microsoft QGemm int8 x int8",
            "ConvInteger uint8 x uint8",
            "ConvInteger uint8 x int8",
            *(f"Relu float16 at opset {v}" for v in RELU_OPSETS),
            "QuantizeLinear -> DequantizeLinear int8 at opset 19",
        ]
    )
}


def run(where: Path):
    import onnxruntime as ort

    for path in sorted(where.glob("case*.onnx")) if where.is_dir() else [where]:
        feeds = dict(np.load(path.with_suffix(".npz")))
        try:
            s = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            name = s.get_modelmeta().description
            s.run(None, feeds)
            print(f"onnxruntime {ort.__version__} {name}: ok")
        except Exception as e:  # the refusal is the measurement
            print(
                f"onnxruntime {ort.__version__} {NAMES.get(path.stem, path.stem)}: {str(e).strip().splitlines()[0][:160]}"
            )


if __name__ == "__main__":
    {"write": write, "run": run}[sys.argv[1]](Path(sys.argv[2]))
