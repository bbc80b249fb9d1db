"""Resize given its output size (the `sizes` input, `scales` left empty) on nncase 1.9: the
form torch writes for F.interpolate(size=...) and for a feature-pyramid upsample to another
map's shape (size=y.shape[-2:], constant once the input shapes are static). Writes, to the
current directory, NAME.onnx, NAME.inputs.npz (seed 0) and NAME.ref.npz (onnxruntime):

  - rs_sizes_{nearest,linear}: one Resize-13 with constant sizes, scales empty;
  - rs_scales_{nearest,linear}: the same Resize with the equivalent constant scales
    (sizes / input dims) instead, as resize-sizes-to-scales writes it;
  - fpn_interp_size_op13: a small top-down feature pyramid exported by torch
    (torch.onnx.export, opset 13) with F.interpolate(size=lateral.shape[-2:]), then
    `onnxsurgeon --pass simplify` at its static input shape (the plan folds the shape
    arithmetic the same way), as written, and after `--target nncase-k210`
    (fpn_interp_size_op13_target) when ONNXSURGEON (a CLI path) is set.

nncase_embedding.py (with the nncase venv's python, one model per run) runs each on nncase
1.9 (k210, simulator). Results: nncase_resize_sizes.txt.

    mkdir /tmp/rs && cd /tmp/rs && ONNXSURGEON=$REPO/build/onnxsurgeon python $REPO/targets/probes/nncase_resize_sizes.py
    for f in *.onnx; do $REPO/.backends/nncase-k210/venv/bin/python \\
        $REPO/targets/probes/nncase_embedding.py $f; done
"""

import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

rng = np.random.default_rng(0)
V = h.make_tensor_value_info


def save_io(name, feeds):
    np.savez(f"{name}.inputs.npz", **feeds)
    s = ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"])
    np.savez(f"{name}.ref.npz", *s.run(None, feeds))


def single(name, mode, sizes=None, scales=None):
    inits = []
    if sizes is not None:
        inits.append(nh.from_array(np.array(sizes, np.int64), "sizes"))
        inputs = ["x", "", "", "sizes"]
    else:
        inits.append(nh.from_array(np.array(scales, np.float32), "scales"))
        inputs = ["x", "", "scales"]
    ct = "asymmetric"  # half_pixel is wrong on nncase whatever the form (a fact of its own)
    node = h.make_node("Resize", inputs, ["r"], mode=mode, coordinate_transformation_mode=ct)
    relu = h.make_node("Relu", ["r"], ["y"])
    g = h.make_graph([node, relu], name, [V("x", T.FLOAT, [1, 4, 5, 6])], [V("y", T.FLOAT, [1, 4, 10, 12])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)], ir_version=7)
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, f"{name}.onnx")
    save_io(name, {"x": rng.standard_normal((1, 4, 5, 6)).astype(np.float32)})


for mode in ("nearest", "linear"):
    single(f"rs_sizes_{mode}", mode, sizes=[1, 4, 10, 12])
    single(f"rs_scales_{mode}", mode, scales=[1, 1, 2, 2])


def fpn():
    import torch
    import torch.nn.functional as F

    class Fpn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 8, 3, 2, 1)
            self.c2 = torch.nn.Conv2d(8, 16, 3, 2, 1)
            self.l1 = torch.nn.Conv2d(8, 8, 1)
            self.l2 = torch.nn.Conv2d(16, 8, 1)
            self.out = torch.nn.Conv2d(8, 4, 3, 1, 1)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            b = torch.relu(self.c2(a))
            la = self.l1(a)
            top = F.interpolate(self.l2(b), size=la.shape[-2:], mode="nearest")
            return self.out(la + top)

    torch.manual_seed(0)
    x = torch.randn(1, 3, 24, 20)
    name = "fpn_interp_size_op13"
    torch.onnx.export(Fpn().eval(), (x,), f"{name}_export.onnx", input_names=["x"], opset_version=13, dynamo=False)
    cli = os.environ.get("ONNXSURGEON")
    if not cli:
        return
    shapes = ["--input-shapes", "x:1x3x24x20"]
    subprocess.run([cli, f"{name}_export.onnx", "--pass", "simplify", *shapes, "-o", f"{name}.onnx"], check=True)
    os.remove(f"{name}_export.onnx")
    save_io(name, {"x": x.numpy()})
    target = f"{name}_target"
    subprocess.run([cli, f"{name}.onnx", "--target", "nncase-k210", *shapes, "-o", f"{target}.onnx"], check=True)
    save_io(target, {"x": x.numpy()})


fpn()
