"""Scan models for unroll-scan, built with onnx.helper (torch never writes Scan; tf2onnx's
custom-cell RNNs do, and the corpus has those: tests/models/exporters/corpus_tf.py).

- scan_rnn(in_axis, in_reverse, out_axis, out_reverse): opset 16, state h [2,4] and two scan
  inputs (x scanned along `in_axis` in direction `in_reverse`, a second one [T,4] forward),
  body h' = tanh(h + x_t W + z_t), two scan outputs (h' along `out_axis` in direction
  `out_reverse`, and x_t * 2 forward on axis 0); every axis/direction combination is one call.
- scan_batched(opset 8 form): batch axis 0, scan axis 1, `directions`, an optional constant
  sequence_lens.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

STEPS = 3
ELEMENT = [2, 4]  # one step's x: [2, 4]


def _with_axis(dims: list[int], axis: int, n: int) -> list[int]:
    out = list(dims)
    out.insert(axis if axis >= 0 else len(dims) + 1 + axis, n)
    return out


def _body(state_dims: list[int], x_dims: list[int], z_dims: list[int]) -> onnx.GraphProto:
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((4, 4)) * 0.5).astype(np.float32), "W")
    two = numpy_helper.from_array(np.float32(2.0), "two")
    nodes = [
        h.make_node("MatMul", ["x_t", "W"], ["xw"]),
        h.make_node("Add", ["h", "xw"], ["s"]),
        h.make_node("Add", ["s", "z_t"], ["s2"]),
        h.make_node("Tanh", ["s2"], ["h2"]),
        h.make_node("Mul", ["x_t", "two"], ["x2"]),
    ]
    V = h.make_tensor_value_info
    return h.make_graph(
        nodes,
        "body",
        [V("h", T.FLOAT, state_dims), V("x_t", T.FLOAT, x_dims), V("z_t", T.FLOAT, z_dims)],
        [V("h2", T.FLOAT, state_dims), V("y_t", T.FLOAT, state_dims), V("x2", T.FLOAT, x_dims)],
        initializer=[w, two],
    )


def scan_rnn(out_dir: Path, in_axis: int, in_reverse: int, out_axis: int, out_reverse: int, opset: int = 16):
    body = _body(ELEMENT, ELEMENT, [4])
    # The body names its second output y_t: make it the same value as h2 through Identity.
    body.node.append(h.make_node("Identity", ["h2"], ["y_t"]))
    x_dims = _with_axis(ELEMENT, in_axis, STEPS)
    y_dims = _with_axis(ELEMENT, out_axis, STEPS)
    scan = h.make_node(
        "Scan",
        ["h0", "x", "z"],
        ["hN", "ys", "x2s"],
        body=body,
        num_scan_inputs=2,
        scan_input_axes=[in_axis, 0],
        scan_input_directions=[in_reverse, 0],
        scan_output_axes=[out_axis, 0],
        scan_output_directions=[out_reverse, 0],
    )
    V = h.make_tensor_value_info
    g = h.make_graph(
        [scan],
        "scan_rnn",
        [V("h0", T.FLOAT, ELEMENT), V("x", T.FLOAT, x_dims), V("z", T.FLOAT, [STEPS, 4])],
        [V("hN", T.FLOAT, ELEMENT), V("ys", T.FLOAT, y_dims), V("x2s", T.FLOAT, [STEPS, *ELEMENT])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    name = f"scan_in{in_axis}{'r' if in_reverse else 'f'}_out{out_axis}{'r' if out_reverse else 'f'}_op{opset}"
    path = out_dir / f"{name}.onnx"
    onnx.save(m, str(path))
    rng = np.random.default_rng(0)
    feeds = {
        "h0": rng.standard_normal(ELEMENT).astype(np.float32),
        "x": rng.standard_normal(x_dims).astype(np.float32),
        "z": rng.standard_normal((STEPS, 4)).astype(np.float32),
    }
    return path, feeds


def scan_batched(out_dir: Path, reverse: int, batch: int = 2, lens: list[int] | None = None, name: str = ""):
    """Opset 8's Scan: h [batch, 4], x [batch, STEPS, 4]; body h' = tanh(h + x_t W)."""
    rng = np.random.default_rng(1)
    w = numpy_helper.from_array((rng.standard_normal((4, 4)) * 0.5).astype(np.float32), "W")
    V = h.make_tensor_value_info
    body = h.make_graph(
        [
            h.make_node("MatMul", ["x_t", "W"], ["xw"]),
            h.make_node("Add", ["h", "xw"], ["s"]),
            h.make_node("Tanh", ["s"], ["h2"]),
            h.make_node("Identity", ["h2"], ["y_t"]),
        ],
        "body",
        [V("h", T.FLOAT, [4]), V("x_t", T.FLOAT, [4])],
        [V("h2", T.FLOAT, [4]), V("y_t", T.FLOAT, [4])],
        initializer=[w],
    )
    inits = []
    if lens is not None:
        inits.append(numpy_helper.from_array(np.array(lens, np.int64), "lens"))
    scan = h.make_node(
        "Scan",
        ["lens" if lens is not None else "", "h0", "x"],
        ["hN", "ys"],
        body=body,
        num_scan_inputs=1,
        directions=[reverse],
    )
    g = h.make_graph(
        [scan],
        "scan_batched",
        [V("h0", T.FLOAT, [batch, 4]), V("x", T.FLOAT, [batch, STEPS, 4])],
        [V("hN", T.FLOAT, [batch, 4]), V("ys", T.FLOAT, [batch, STEPS, 4])],
        initializer=inits,
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 8)], ir_version=4)
    onnx.checker.check_model(m, full_check=True)
    path = out_dir / f"{name or f'scan8_{reverse}_{batch}'}.onnx"
    onnx.save(m, str(path))
    rng = np.random.default_rng(0)
    feeds = {
        "h0": rng.standard_normal((batch, 4)).astype(np.float32),
        "x": rng.standard_normal((batch, STEPS, 4)).astype(np.float32),
    }
    return path, feeds
