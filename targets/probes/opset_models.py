"""Write the single-op models behind the nncase-k210 opset and IR caps (x: float32
[1,4,8,8]), each with its inputs (NAME.inputs.npz) and onnxruntime's output (NAME.ref.npz),
for nncase_embedding.py: CastLike-15, ReduceMean-18 with its axes as an input against
ReduceMean-17/-13 with axes as an attribute, and Relu at IR 8 and 10."""

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper as nh


def save(name, nodes, opset, inits=(), ir=8):
    g = h.make_graph(
        nodes,
        name,
        [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=list(inits),
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    m = onnx.shape_inference.infer_shapes(m)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, name + ".onnx")
    x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
    np.savez(name + ".inputs.npz", x=x)
    y = ort.InferenceSession(name + ".onnx").run(None, {"x": x})[0]
    np.savez(name + ".ref.npz", y=y)


def main():
    axes = nh.from_array(np.array([-1], np.int64), "axes")
    relu = [h.make_node("Relu", ["x"], ["y"])]
    save("castlike15", [h.make_node("Relu", ["x"], ["r"]), h.make_node("CastLike", ["r", "x"], ["y"])], 15)
    save("reducemean18_axes_input", [h.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=1)], 18, [axes])
    for opset in (17, 13):
        node = h.make_node("ReduceMean", ["x"], ["y"], axes=[-1], keepdims=1)
        save(f"reducemean{opset}_axes_attr", [node], opset)
    save("relu17_ir8", relu, 17)
    save("relu17_ir10", relu, 17, ir=10)
    save("relu13_ir10", relu, 13, ir=10)


if __name__ == "__main__":
    main()
