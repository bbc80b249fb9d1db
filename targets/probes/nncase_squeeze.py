"""nncase 1.9 (k210) and Squeeze with its axes as an input (opset 13): a past cache
[2, B, N, P, H] split into keys and values, each squeezed on axis 0 and concatenated with the
new keys, as lower-contrib-ops writes Attention's past.

    python targets/probes/nncase_squeeze.py make /tmp/squeeze
    .backends/nncase-k210/venv/bin/python targets/probes/nncase_squeeze.py run /tmp/squeeze

Models: squeeze13_b1 (B = 1, axes input), squeeze13_b3 (B = 3: axis 0 the only unit dim),
squeeze12_b1 (B = 1, axes attribute, opset 12). Prints OK with the max abs error against
numpy, or the runner's refusal (tests/backends/runners/run-nncase-k210.py)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

RUNNER = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "backends", "runners", "run-nncase-k210.py")


def make(out):
    import numpy as np
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as oh
    from onnx import numpy_helper as nh

    os.makedirs(out, exist_ok=True)
    for name, batch, opset in (("squeeze13_b1", 1, 13), ("squeeze13_b3", 3, 13), ("squeeze12_b1", 1, 12)):
        past = oh.make_tensor_value_info("past", T.FLOAT, [2, batch, 4, 4, 16])
        new = oh.make_tensor_value_info("new", T.FLOAT, [batch, 4, 3, 16])
        if opset >= 13:
            inits = [nh.from_array(np.array([1, 1], np.int64), "sp"), nh.from_array(np.array([0], np.int64), "ax")]
            nodes = [
                oh.make_node("Split", ["past", "sp"], ["k", "v"], axis=0),
                oh.make_node("Squeeze", ["v", "ax"], ["s"]),
            ]
        else:
            inits = []
            nodes = [
                oh.make_node("Split", ["past"], ["k", "v"], axis=0, split=[1, 1]),
                oh.make_node("Squeeze", ["v"], ["s"], axes=[0]),
            ]
        nodes.append(oh.make_node("Concat", ["s", "new"], ["y"], axis=2))
        y = oh.make_tensor_value_info("y", T.FLOAT, [batch, 4, 7, 16])
        model = oh.make_model(
            oh.make_graph(nodes, name, [past, new], [y], inits), opset_imports=[oh.make_opsetid("", opset)]
        )
        model.ir_version = 7
        onnx.save(onnx.shape_inference.infer_shapes(model), os.path.join(out, f"{name}.onnx"))
        rng = np.random.default_rng(0)
        np.savez(
            os.path.join(out, f"{name}.inputs.npz"),
            past=rng.standard_normal((2, batch, 4, 4, 16)).astype(np.float32),
            new=rng.standard_normal((batch, 4, 3, 16)).astype(np.float32),
        )


def run(out):
    import numpy as np

    for path in sorted(glob.glob(os.path.join(out, "*.onnx"))):
        name = os.path.basename(path)[:-5]
        work = os.path.join(out, name + ".out")
        os.makedirs(work, exist_ok=True)
        inputs = path[:-5] + ".inputs.npz"
        subprocess.run([sys.executable, RUNNER, path, inputs, work], cwd=work, capture_output=True)
        result = json.load(open(os.path.join(work, "result.json")))
        if result["status"] != "ok":
            print(f"{name}: REFUSED at {result['stage']}: {result['message'][:150]}")
            continue
        feeds = np.load(inputs)
        want = np.concatenate([feeds["past"][1], feeds["new"]], axis=2)
        got = np.load(os.path.join(work, "outputs.npz"))["out0"]
        print(f"{name}: OK, max abs error {float(np.abs(got - want).max()):.2g}")


if __name__ == "__main__":
    {"make": make, "run": run}[sys.argv[1]](sys.argv[2])
