"""Whether a backend that loads onnxruntime's QLinearAveragePool / QLinearSoftmax /
QLinearWhere (contrib_ops.txt) also computes them as onnxruntime does: one-node models (int8
and uint8, zero points, saturating scales) and their lower-contrib-ops(inexact=true) forms,
run on the backend and compared with onnxruntime 1.32's kernel in quantization steps.

    python targets/probes/contrib_qlinear_values.py make /tmp/qvalues     # onnx, onnxruntime, onnxsurgeon
    .backends/openvino/venv/bin/python targets/probes/contrib_qlinear_values.py openvino /tmp/qvalues

Prints one line per model: the largest difference in steps and the count of elements that
differ. Results: contrib_qlinear_values.txt."""

from __future__ import annotations

import glob
import os
import sys

MS = "com.microsoft"


def _model(op, names, arrays, attrs):
    import onnx
    from onnx import helper as oh
    from onnx import numpy_helper as nh

    feeds = {n: v for n, v in arrays.items() if n.startswith("x")}
    inputs = [oh.make_tensor_value_info(n, oh.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()]
    inits = [nh.from_array(v, n) for n, v in arrays.items() if n not in feeds]
    node = oh.make_node(op, names, ["y"], domain=MS, **attrs)
    graph = oh.make_graph([node], op, inputs, [onnx.ValueInfoProto(name="y")], inits)
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17), oh.make_opsetid(MS, 1)], ir_version=8)
    return model, feeds


def _cases(np, rng):
    for q in (np.uint8, np.int8):
        info = np.iinfo(q)

        def qt(shape, _q=q, _i=info):
            return rng.integers(_i.min, _i.max + 1, shape).astype(_q)

        def zp(_q=q, _i=info):
            return np.array(rng.integers(_i.min // 2, _i.max // 2), _q)

        f = np.float32
        pool = {"x": qt((2, 3, 7, 9)), "sx": f(0.04), "zx": zp(), "sy": f(0.03), "zy": zp()}
        yield (
            f"QLinearAveragePool_{q.__name__}",
            "QLinearAveragePool",
            ["x", "sx", "zx", "sy", "zy"],
            pool,
            {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]},
        )
        soft = {"x": qt((4, 3, 64)), "sx": f(0.08), "zx": zp(), "sy": f(1 / 256), "zy": np.array(info.min, q)}
        yield f"QLinearSoftmax_{q.__name__}", "QLinearSoftmax", ["x", "sx", "zx", "sy", "zy"], soft, {"opset": 13}
        where = {
            "xc": rng.random((2, 1, 6)) > 0.5,
            "xa": qt((2, 3, 6)),
            "sa": f(0.05),
            "za": zp(),
            "xb": qt((3, 6)),
            "sb": f(0.11),
            "zb": zp(),
            "sz": f(0.07),
            "zz": zp(),
        }
        names = ["xc", "xa", "sa", "za", "xb", "sb", "zb", "sz", "zz"]
        yield f"QLinearWhere_{q.__name__}", "QLinearWhere", names, where, {}


def make(out_dir):
    import numpy as np
    import onnx
    import onnxruntime as ort
    import onnxsurgeon as osg

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    for name, op, names, arrays, attrs in _cases(np, rng):
        arrays = {k: np.asarray(v) for k, v in arrays.items()}
        model, feeds = _model(op, names, arrays, attrs)
        session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        want = session.run(None, feeds)[0]
        onnx.save(model, os.path.join(out_dir, f"{name}.onnx"))
        onnx.save(osg.run(model, "lower-contrib-ops(inexact=true)"), os.path.join(out_dir, f"{name}.lowered.onnx"))
        np.savez(os.path.join(out_dir, f"{name}.npz"), want=want, **{f"in_{k}": v for k, v in feeds.items()})


def run_openvino(path, feeds):
    import openvino as ov

    core = ov.Core()
    compiled = core.compile_model(core.read_model(path), "CPU")
    return compiled(feeds)[compiled.output(0)]


def main():
    mode, out_dir = sys.argv[1], sys.argv[2]
    if mode == "make":
        make(out_dir)
        return
    import numpy as np

    run = {"openvino": run_openvino}[mode]
    for path in sorted(glob.glob(os.path.join(out_dir, "*.onnx"))):
        base = os.path.basename(path)[:-5]
        data = np.load(os.path.join(out_dir, base.replace(".lowered", "") + ".npz"))
        feeds = {k[3:]: data[k] for k in data.files if k.startswith("in_")}
        try:
            diff = np.abs(run(path, feeds).astype(np.int64) - data["want"].astype(np.int64))
            print(f"{base}: max {int(diff.max())} steps, {int((diff > 0).sum())} of {diff.size} differ", flush=True)
        except Exception as e:  # noqa: BLE001 - the backend's refusal is the result
            print(f"{base}: REFUSED {str(e).strip().splitlines()[0][:200]}", flush=True)


if __name__ == "__main__":
    main()
