"""Write Loop models whose body returns a loop-carried value unchanged (as tf2onnx writes the
weights a tf.while_loop carries) beside the forms that avoid it, and run them on OpenVINO
(with its own python: read_model + compile_model on CPU, f32) against onnxruntime's
outputs (NAME.ref.npz, written here):

    python targets/probes/loop_models.py                          # writes *.onnx here
    .backends/openvino/venv/bin/python targets/probes/loop_models.py --run *.onnx

  loop_passthrough: h = h + w over 3 steps, w carried and returned as the body input itself
  loop_identity:    the same with w returned as Identity(w) (loop-carry-through-identity)
  loop_outer:       the same with w read from the enclosing graph, not carried

loop_models.txt holds the results for OpenVINO 2026.4.1."""

import sys

import numpy as np

X = np.random.default_rng(0).standard_normal((1, 4)).astype(np.float32)


def write():
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto
    from onnx import helper as h

    f = lambda n: h.make_tensor_value_info(n, TensorProto.FLOAT, [1, 4])  # noqa: E731
    i64 = h.make_tensor_value_info("i", TensorProto.INT64, [])
    cond = h.make_tensor_value_info("c", TensorProto.BOOL, [])
    trip = h.make_tensor("n", TensorProto.INT64, [], [3])
    true = h.make_tensor("t", TensorProto.BOOL, [], [True])
    w = h.make_tensor("w", TensorProto.FLOAT, [1, 4], np.arange(4, dtype=np.float32).tolist())
    co = h.make_node("Identity", ["c"], ["co"])
    for form in ("passthrough", "identity", "outer"):
        reads = "wc" if form != "outer" else "w"
        nodes = [co, h.make_node("Add", ["hc", reads], ["h2"])]
        inputs, outputs = [i64, cond, f("hc")], [h.make_tensor_value_info("co", TensorProto.BOOL, []), f("h2")]
        loop_in, loop_out = ["n", "t", "x"], ["y"]
        if form != "outer":
            inputs.append(f("wc"))
            back = "wc" if form == "passthrough" else "wt"
            if form == "identity":
                nodes.append(h.make_node("Identity", ["wc"], ["wt"]))
            outputs.append(f(back))
            loop_in.append("w")
            loop_out.append("w_final")
        body = h.make_graph(nodes, "body", inputs, outputs)
        loop = h.make_node("Loop", loop_in, loop_out, body=body)
        g = h.make_graph([loop], f"loop_{form}", [f("x")], [f("y")], initializer=[trip, true, w])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        name = f"loop_{form}"
        onnx.save(m, name + ".onnx")
        np.savez(name + ".ref.npz", ort.InferenceSession(name + ".onnx").run(None, {"x": X})[0])


def run_openvino(paths):
    import openvino as ov

    core = ov.Core()
    print("openvino", ov.__version__)
    for m in paths:
        ref = np.load(m[:-5] + ".ref.npz")["arr_0"]
        try:
            compiled = core.compile_model(core.read_model(m), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
            y = compiled([X])[compiled.output(0)]
            print(m, "OK, max error", float(np.abs(y - ref).max()))
        except Exception as e:
            print(m, "FAIL", " ".join(str(e).split())[-220:])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--run"]:
        run_openvino(sys.argv[2:])
    else:
        write()
