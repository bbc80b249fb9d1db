"""Makes examples/custom_layernorm.onnx, the model `make demo` rewrites.

A small torch MLP block with a LayerNorm, exported by torch.onnx at opset 17, whose
LayerNormalization node is then replaced by `custom::Custom_LayerNorm` -- what plugin-
oriented exporters write, and what onnxruntime refuses with
"Unsupported operator 'Custom_LayerNorm'". The torch module's outputs for a fixed input
are saved beside it (custom_layernorm.npz) so the demo can check the rewrite numerically.

    .venv/bin/python examples/make_example.py
"""

from __future__ import annotations

import pathlib

import numpy as np
import onnx
import torch
from onnx import helper

HERE = pathlib.Path(__file__).resolve().parent


class Block(torch.nn.Module):
    def __init__(self, dim: int = 16):
        super().__init__()
        self.fc1 = torch.nn.Linear(dim, 2 * dim)
        self.fc2 = torch.nn.Linear(2 * dim, dim)
        self.norm = torch.nn.LayerNorm(dim, eps=1e-5)

    def forward(self, x):
        return self.norm(x + self.fc2(torch.relu(self.fc1(x))))


def main() -> None:
    torch.manual_seed(0)
    block = Block().eval()
    with torch.no_grad():  # non-trivial affine parameters
        block.norm.weight.uniform_(0.5, 1.5)
        block.norm.bias.uniform_(-0.5, 0.5)
    x = torch.randn(2, 8, 16)
    path = HERE / "custom_layernorm.onnx"
    torch.onnx.export(
        block,
        (x,),
        str(path),
        dynamo=False,
        opset_version=17,
        input_names=["x"],
        output_names=["y"],
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
    )
    model = onnx.load(path)
    for i, node in enumerate(model.graph.node):
        if node.op_type == "LayerNormalization":
            eps = next(a.f for a in node.attribute if a.name == "epsilon")
            axis = next((a.i for a in node.attribute if a.name == "axis"), -1)
            custom = helper.make_node(
                "Custom_LayerNorm",
                list(node.input),
                list(node.output),
                name=node.name,
                domain="custom",
                epsilon=eps,
                axis=axis,
            )
            model.graph.node.remove(node)
            model.graph.node.insert(i, custom)
    model.opset_import.append(helper.make_opsetid("custom", 1))
    model.producer_name = "onnxsurgeon examples/make_example.py"
    onnx.save(model, path)
    with torch.no_grad():
        np.savez(HERE / "custom_layernorm.npz", x=x.numpy(), y=block(x).numpy())
    print(f"wrote {path} ({path.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
