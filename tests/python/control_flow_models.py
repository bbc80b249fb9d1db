"""Models with control flow on data, exported by torch, for if-to-where and unroll-loop.

Each builder writes `<dir>/<name>.onnx` and returns the input sets that, between them,
take every branch (an If's condition true and false) so a test can compare onnxruntime
before and after a rewrite on each.

- if_script_sign: torch.jit.script, `if x.sum() > 0: relu(x) * 2 else: tanh(x) - 1`
  (batch dynamic).
- if_script_nested: torch.jit.script, an if inside an if, two outputs.
- if_script_gather: torch.jit.script, `x[k]` on one side with k a graph input: refused,
  the index may be out of range on the side not taken.
- if_cond: torch.cond (torch.export, dynamo=True), the branches as local functions.
- if_merged_decoder: optimum's merged decoder in small: If(use_cache_branch), the cache
  branch concatenates the past keys, the other does not, so the present keys' lengths
  differ: refused.
- loop_scan: a hand-built Loop with trip count 3 whose body reads x of the main graph and
  the iteration number, carries h and scans each step's h.
- loop_script_const: torch.jit.script, `for i in range(x.size(0))` with x static: a Loop
  with a shape-derived trip count, h carried, a scan output of each step's h.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
import torch.nn as nn
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

torch.manual_seed(0)


class ScriptSign(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            y = torch.relu(x) * 2.0
        else:
            y = torch.tanh(x) - 1.0
        return y


class ScriptNested(nn.Module):
    def forward(self, x, y):
        if bool(x.mean() > 0):
            if bool(y.max() > 0.5):
                a = x * y
            else:
                a = x + y
            b = torch.exp(-x)
        else:
            a = x - y
            b = torch.sigmoid(y)
        return a, b


class ScriptGather(nn.Module):
    def forward(self, x, k: int):
        if bool(x.sum() > 0):
            y = x[k]
        else:
            y = x[0] * 0.0
        return y


class CondAdd(nn.Module):
    def forward(self, x):
        def yes(x):
            return torch.cos(x) + x

        def no(x):
            return torch.sin(x) * 3.0

        return torch.cond(x.sum() > 0, yes, no, (x,))


class LoopConst(nn.Module):
    def forward(self, x):
        h = torch.zeros_like(x[0])
        steps = []
        for i in range(x.size(0)):
            h = torch.tanh(h + x[i]) * float(i + 1)
            steps.append(h)
        return h, torch.stack(steps)


def _script(path: Path, mod: nn.Module, inputs: tuple, names: list[str], outputs: list[str], dynamic=None) -> None:
    script = torch.jit.script(mod.eval())
    with torch.no_grad():
        torch.onnx.export(
            script,
            inputs,
            str(path),
            opset_version=17,
            input_names=names,
            output_names=outputs,
            dynamic_axes=dynamic,
            dynamo=False,
        )


def _signs(shape, names, rng) -> list[dict[str, np.ndarray]]:
    base = {n: rng.standard_normal(shape).astype(np.float32) for n in names}
    pos = {n: np.abs(v) + 0.1 for n, v in base.items()}
    neg = {n: -np.abs(v) - 0.1 for n, v in base.items()}
    mixed = {n: v.copy() for n, v in base.items()}
    return [pos, neg, mixed]


def if_script_sign(d: Path) -> tuple[Path, list[dict]]:
    p = d / "if_script_sign.onnx"
    _script(p, ScriptSign(), (torch.randn(2, 8),), ["x"], ["y"], {"x": {0: "batch"}, "y": {0: "batch"}})
    sets = _signs((3, 8), ["x"], np.random.default_rng(1))
    return p, sets


def if_script_nested(d: Path) -> tuple[Path, list[dict]]:
    p = d / "if_script_nested.onnx"
    _script(p, ScriptNested(), (torch.randn(2, 4), torch.randn(2, 4)), ["x", "y"], ["a", "b"])
    rng = np.random.default_rng(2)
    sets = []
    for xs in (1, -1):
        for ys in (1.0, 0.1):  # y.max() above and below 0.5
            x = np.abs(rng.standard_normal((2, 4))).astype(np.float32) * xs + 0.1 * xs
            y = (rng.random((2, 4)) * ys).astype(np.float32)
            sets.append({"x": x, "y": y})
    return p, sets


def if_script_gather(d: Path) -> tuple[Path, list[dict]]:
    p = d / "if_script_gather.onnx"
    _script(p, ScriptGather(), (torch.randn(3, 4), 1), ["x", "k"], ["y"])
    x = np.ones((3, 4), np.float32)
    return p, [{"x": x, "k": np.array(1, np.int64)}, {"x": -x, "k": np.array(7, np.int64)}]


def if_cond(d: Path) -> tuple[Path, list[dict]]:
    p = d / "if_cond.onnx"
    with torch.no_grad():
        torch.onnx.export(
            CondAdd().eval(), (torch.randn(2, 5),), str(p), dynamo=True, input_names=["x"], opset_version=18
        )
    return p, _signs((2, 5), ["x"], np.random.default_rng(3))


def if_merged_decoder(d: Path) -> tuple[Path, list[dict]]:
    """logits = (x @ w) summed with the keys; present = concat(past, k) or k."""
    rng = np.random.default_rng(4)
    w = numpy_helper.from_array(rng.standard_normal((4, 4)).astype(np.float32), "w")
    then_g = h.make_graph(
        [
            h.make_node("MatMul", ["x", "w"], ["k1"]),
            h.make_node("Concat", ["past", "k1"], ["present_a"], axis=1),
        ],
        "with_past",
        [],
        [h.make_tensor_value_info("present_a", T.FLOAT, [1, "total", 4])],
    )
    else_g = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["present_b"])],
        "without_past",
        [],
        [h.make_tensor_value_info("present_b", T.FLOAT, [1, "seq", 4])],
    )
    g = h.make_graph(
        [h.make_node("If", ["use_cache_branch"], ["present"], then_branch=then_g, else_branch=else_g)],
        "merged",
        [
            h.make_tensor_value_info("x", T.FLOAT, [1, "seq", 4]),
            h.make_tensor_value_info("past", T.FLOAT, [1, "past", 4]),
            h.make_tensor_value_info("use_cache_branch", T.BOOL, [1]),
        ],
        [h.make_tensor_value_info("present", T.FLOAT, [1, None, 4])],
        [w],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    p = d / "if_merged_decoder.onnx"
    onnx.save(m, p)
    x = rng.standard_normal((1, 3, 4)).astype(np.float32)
    past = rng.standard_normal((1, 2, 4)).astype(np.float32)
    return p, [
        {"x": x, "past": past, "use_cache_branch": np.array([True])},
        {"x": x, "past": past[:, :0], "use_cache_branch": np.array([False])},
    ]


def loop_script_const(d: Path) -> tuple[Path, list[dict]]:
    p = d / "loop_script_const.onnx"
    _script(p, LoopConst(), (torch.randn(3, 4),), ["x"], ["h", "steps"])
    rng = np.random.default_rng(5)
    return p, [{"x": rng.standard_normal((3, 4)).astype(np.float32)} for _ in range(2)]


def loop_scan(d: Path) -> tuple[Path, list[dict]]:
    V = h.make_tensor_value_info
    body = h.make_graph(
        [
            h.make_node("Identity", ["cin"], ["cout"]),
            h.make_node("Add", ["h", "x"], ["s"]),
            h.make_node("Tanh", ["s"], ["t"]),
            h.make_node("Add", ["i", "one_i"], ["i1"]),
            h.make_node("Cast", ["i1"], ["f"], to=T.FLOAT),
            h.make_node("Mul", ["t", "f"], ["h2"]),
            h.make_node("Identity", ["h2"], ["e"]),
        ],
        "body",
        [V("i", T.INT64, []), V("cin", T.BOOL, []), V("h", T.FLOAT, [2, 8])],
        [V("cout", T.BOOL, []), V("h2", T.FLOAT, [2, 8]), V("e", T.FLOAT, [2, 8])],
        [numpy_helper.from_array(np.int64(1), "one_i")],
    )
    g = h.make_graph(
        [h.make_node("Loop", ["n", "c", "h0"], ["y", "ys"], body=body)],
        "loop_scan",
        [V("x", T.FLOAT, [2, 8])],
        [V("y", T.FLOAT, [2, 8]), V("ys", T.FLOAT, [3, 2, 8])],
        [
            numpy_helper.from_array(np.int64(3), "n"),
            numpy_helper.from_array(np.bool_(True), "c"),
            numpy_helper.from_array(np.zeros((2, 8), np.float32), "h0"),
        ],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 16)])
    m.ir_version = 8
    p = d / "loop_scan.onnx"
    onnx.save(m, p)
    rng = np.random.default_rng(6)
    return p, [{"x": rng.standard_normal((2, 8)).astype(np.float32)} for _ in range(2)]
