"""The models behind the nncase-k210 facts on ConvTranspose, LSTM over a batch above 1 and
GRU, and the forms the rewrites write for them (convtranspose-to-conv, split-rnn-batch,
unroll-rnn), each with its inputs (NAME.inputs.npz) and onnxruntime's outputs (NAME.ref.npz),
for nncase_embedding.py, which runs each on nncase 1.9 (k210 simulator) and prints the error:

    mkdir /tmp/low && cd /tmp/low && python $REPO/targets/probes/lowering_models.py $REPO/build/onnxsurgeon
    $REPO/.backends/nncase-k210/venv/bin/python $REPO/targets/probes/nncase_embedding.py 2>&1 | tee nncase.txt

Each original NAME.onnx is written beside NAME.PASS.onnx, the model PASS (run by the
onnxsurgeon binary given) writes; both share NAME's inputs and reference outputs. Results
are in lowering_models.txt."""

import shutil
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

CLI = sys.argv[1] if len(sys.argv) > 1 else "onnxsurgeon"
rng = np.random.default_rng(0)


def C(name, a):
    return numpy_helper.from_array(a, name)


def V(name, shape):
    return h.make_tensor_value_info(name, T.FLOAT, shape)


def mk(name, nodes, inputs, outputs, inits, passes):
    model = h.make_model(h.make_graph(nodes, name, inputs, outputs, inits), opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, f"{name}.onnx")
    feeds = {
        i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in inputs
    }
    np.savez(f"{name}.inputs.npz", **feeds)
    ref = ort.InferenceSession(f"{name}.onnx").run(None, feeds)
    np.savez(f"{name}.ref.npz", *ref)
    for p in passes:
        tag = p.split("(")[0]
        out = f"{name}.{tag}"
        subprocess.run(
            [CLI, "--pass", f"{p},fold-constants,infer-shapes", f"{name}.onnx", "-o", f"{out}.onnx"], check=True
        )
        shutil.copy(f"{name}.inputs.npz", f"{out}.inputs.npz")
        shutil.copy(f"{name}.ref.npz", f"{out}.ref.npz")


# ConvTranspose: 1-D and 2-D, with stride, padding, output_padding, dilation and groups.
CT = {
    # name: (in shape, weight shape, attributes)
    "ct1d_s2": ([1, 4, 10], [4, 6, 3], {"strides": [2], "pads": [1, 1]}),
    "ct1d_s4_k8": ([1, 8, 12], [8, 4, 8], {"strides": [4], "pads": [2, 2]}),
    "ct2d_s2_k4_p1": ([1, 8, 6, 6], [8, 4, 4, 4], {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    "ct2d_s2_op1": ([1, 4, 5, 7], [4, 3, 3, 3], {"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}),
    "ct2d_g2_d2": ([1, 4, 6, 6], [4, 2, 3, 3], {"strides": [2, 1], "dilations": [2, 2], "group": 2}),
    "ct2d_s1": ([1, 4, 6, 6], [4, 4, 3, 3], {"pads": [1, 1, 1, 1]}),
}
for name, (xs, ws, attrs) in CT.items():
    w = rng.standard_normal(ws).astype(np.float32) * 0.3
    b = rng.standard_normal(ws[1] * attrs.get("group", 1)).astype(np.float32) * 0.1
    node = h.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=ws[2:], **attrs)
    probe = h.make_model(h.make_graph([node], "p", [V("x", xs)], [V("y", None)], [C("w", w), C("b", b)]))
    ys = onnx.shape_inference.infer_shapes(probe).graph.output[0].type.tensor_type.shape
    out = [d.dim_value for d in ys.dim]
    mk(name, [node], [V("x", xs)], [V("y", out)], [C("w", w), C("b", b)], ["convtranspose-to-conv"])

# LSTM over batch 2 (the fact's 'Shape and data size don't match'), and GRU whose Y feeds a MatMul.
for direction, dirs in (("forward", 1), ("bidirectional", 2)):
    inits = [
        C("W", rng.standard_normal((dirs, 32, 6)).astype(np.float32) * 0.3),
        C("R", rng.standard_normal((dirs, 32, 8)).astype(np.float32) * 0.3),
        C("B", rng.standard_normal((dirs, 64)).astype(np.float32) * 0.1),
    ]
    mk(
        f"lstm_{direction[:5]}_b2",
        [h.make_node("LSTM", ["x", "W", "R", "B"], ["y"], direction=direction, hidden_size=8)],
        [V("x", [5, 2, 6])],
        [V("y", [5, dirs, 2, 8])],
        inits,
        ["split-rnn-batch", "unroll-rnn"],
    )
    ginits = [
        C("W", rng.standard_normal((dirs, 48, 32)).astype(np.float32) * 0.3),
        C("R", rng.standard_normal((dirs, 48, 16)).astype(np.float32) * 0.3),
        C("B", rng.standard_normal((dirs, 96)).astype(np.float32) * 0.1),
        C("shape", np.array([24, 1, dirs * 16], np.int64)),
        C("fc", rng.standard_normal((dirs * 16, 12)).astype(np.float32)),
    ]
    mk(
        f"gru_{direction[:5]}_mm",
        [
            h.make_node("GRU", ["x", "W", "R", "B"], ["Y"], direction=direction, hidden_size=16, linear_before_reset=1),
            h.make_node("Transpose", ["Y"], ["t"], perm=[0, 2, 1, 3]),
            h.make_node("Reshape", ["t", "shape"], ["m"]),
            h.make_node("MatMul", ["m", "fc"], ["y"]),
        ],
        [V("x", [24, 1, 32])],
        [V("y", [24, 1, 12])],
        ginits,
        ["unroll-rnn"],
    )
