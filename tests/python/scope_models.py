"""Models whose graphs reuse value names across scopes, as valid ONNX allows.

Each If branch and each Loop body is its own scope: optimum's merged decoders define
hundreds of same-named values in the two branches of one If, with different shapes and
types. Anything that keys a value by name across graphs (a type table, onnx's data
propagation, a value_info refresh, a fold) mixes them up. Every model here is small, runs
in onnxruntime on every branch (`input_sets`), and is built so that mixing the scopes up
changes a result or makes an invalid model:

- if_data_propagation: both branches define `t` and `y = Reshape(X, t)`; `t` is Shape(X)
  in one branch and a graph input in the other (onnx's data propagation shares `t`'s
  value between the branches by name).
- if_element_types: `t` is int64 in one branch and float in the other; Cast(t, float)
  is an identity in one branch only.
- if_static_shapes: `t` is [6,4] in one branch and [4,6] in the other, read by Shape,
  MatMul and ReduceSum.
- loop_body_and_parent: a Loop body defines `t`, and so does its parent after the Loop.
- if_in_loop: an If inside a Loop body whose branches define names the parent also uses.
- if_branch_for_other_shapes: X is [1, N]; one branch only runs for N = 4 (it reshapes X
  to [1, N / 4, 4] and squeezes axis 1), as Silero VAD's 8 kHz branch only runs for 8 kHz
  chunks. With N fixed at 8 that branch fails whenever taken, behind shapes computed at
  run time; folding them would make it a model onnx's checker refuses.
"""

from __future__ import annotations

import itertools

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

OPSET = 17


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)], producer_name="scope_models")
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def _const(name: str, value) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def if_data_propagation() -> onnx.ModelProto:
    def branch(name: str, first: onnx.NodeProto) -> onnx.GraphProto:
        return h.make_graph(
            [first, h.make_node("Reshape", ["X", "t"], ["y"]), h.make_node("Shape", ["y"], ["o"])],
            name,
            [],
            [h.make_tensor_value_info("o", T.INT64, [None])],
        )

    then_g = branch("then", h.make_node("Shape", ["X"], ["t"]))
    else_g = branch("else", h.make_node("Identity", ["S"], ["t"]))
    g = h.make_graph(
        [h.make_node("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g)],
        "if_data_propagation",
        [
            h.make_tensor_value_info("X", T.FLOAT, [2, 3, 4]),
            h.make_tensor_value_info("S", T.INT64, [2]),
            h.make_tensor_value_info("cond", T.BOOL, []),
        ],
        [h.make_tensor_value_info("out", T.INT64, [None])],
    )
    return _model(g)


def if_element_types() -> onnx.ModelProto:
    then_g = h.make_graph(
        [
            h.make_node("Cast", ["X"], ["t"], to=T.INT64),
            h.make_node("Cast", ["t"], ["u"], to=T.FLOAT),
            h.make_node("Add", ["u", "X"], ["o"]),
        ],
        "then",
        [],
        [h.make_tensor_value_info("o", T.FLOAT, [2, 3])],
    )
    else_g = h.make_graph(
        [
            h.make_node("Neg", ["X"], ["t"]),
            h.make_node("Cast", ["t"], ["u"], to=T.FLOAT),
            h.make_node("Mul", ["u", "X"], ["o"]),
        ],
        "else",
        [],
        [h.make_tensor_value_info("o", T.FLOAT, [2, 3])],
    )
    g = h.make_graph(
        [h.make_node("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g)],
        "if_element_types",
        [h.make_tensor_value_info("X", T.FLOAT, [2, 3]), h.make_tensor_value_info("cond", T.BOOL, [])],
        [h.make_tensor_value_info("out", T.FLOAT, [2, 3])],
    )
    return _model(g)


def if_static_shapes() -> onnx.ModelProto:
    def branch(name: str, shape: list[int], w: str) -> onnx.GraphProto:
        return h.make_graph(
            [
                h.make_node("Reshape", ["X", name + "_shape"], ["t"]),
                h.make_node("Shape", ["t"], ["s"]),
                h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
                h.make_node("MatMul", ["t", w], ["m"]),
                h.make_node("ReduceSum", ["m"], ["r"], keepdims=0),
                h.make_node("Mul", ["r", "sf"], ["o"]),
            ],
            name,
            [],
            [h.make_tensor_value_info("o", T.FLOAT, [2])],
            initializer=[_const(name + "_shape", np.array(shape, np.int64))],
        )

    g = h.make_graph(
        [
            h.make_node(
                "If",
                ["cond"],
                ["out"],
                then_branch=branch("then", [6, 4], "w4"),
                else_branch=branch("else", [4, 6], "w6"),
            )
        ],
        "if_static_shapes",
        [h.make_tensor_value_info("X", T.FLOAT, [2, 3, 4]), h.make_tensor_value_info("cond", T.BOOL, [])],
        [h.make_tensor_value_info("out", T.FLOAT, [2])],
        initializer=[
            _const("w4", np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)),
            _const("w6", np.linspace(-2, 2, 12, dtype=np.float32).reshape(6, 2)),
        ],
    )
    return _model(g)


def loop_body_and_parent() -> onnx.ModelProto:
    body = h.make_graph(
        [
            h.make_node("ReduceSum", ["X", "axis0"], ["t"], keepdims=0),
            h.make_node("Shape", ["t"], ["s"]),
            h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
            h.make_node("Mul", ["t", "sf"], ["ts"]),
            h.make_node("Add", ["acc_in", "ts"], ["acc_out"]),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("acc_in", T.FLOAT, [3]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [3])],
    )
    g = h.make_graph(
        [
            h.make_node("Loop", ["trips", "", "zeros3"], ["Z"], body=body),
            # Defined after the Loop, as onnx's checker requires: a name the body already defines.
            h.make_node("Shape", ["X"], ["s"]),
            h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
            h.make_node("ReduceSum", ["sf"], ["t"], keepdims=1),
            h.make_node("Mul", ["X", "t"], ["Y"]),
        ],
        "loop_body_and_parent",
        [h.make_tensor_value_info("X", T.FLOAT, [2, 3])],
        [h.make_tensor_value_info("Y", T.FLOAT, [2, 3]), h.make_tensor_value_info("Z", T.FLOAT, [3])],
        initializer=[
            _const("axis0", np.array([0], np.int64)),
            _const("trips", np.array(3, np.int64)),
            _const("zeros3", np.zeros(3, np.float32)),
        ],
    )
    return _model(g)


def if_in_loop() -> onnx.ModelProto:
    def branch(name: str, op: str) -> onnx.GraphProto:
        return h.make_graph(
            [
                h.make_node(op, ["acc_in"], ["t"]),
                h.make_node("Shape", ["t"], ["s"]),
                h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
                h.make_node("Add", ["t", "sf"], ["o"]),
            ],
            name,
            [],
            [h.make_tensor_value_info("o", T.FLOAT, [3])],
        )

    body = h.make_graph(
        [
            h.make_node(
                "If", ["flip"], ["acc_out"], then_branch=branch("then", "Neg"), else_branch=branch("else", "Abs")
            ),
            h.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [
            h.make_tensor_value_info("i", T.INT64, []),
            h.make_tensor_value_info("cond_in", T.BOOL, []),
            h.make_tensor_value_info("acc_in", T.FLOAT, [3]),
        ],
        [h.make_tensor_value_info("cond_out", T.BOOL, []), h.make_tensor_value_info("acc_out", T.FLOAT, [3])],
    )
    g = h.make_graph(
        [
            h.make_node("Loop", ["trips", "", "X"], ["Z"], body=body),
            h.make_node("Shape", ["Z"], ["s"]),
            h.make_node("Cast", ["s"], ["sf"], to=T.FLOAT),
            h.make_node("Mul", ["Z", "sf"], ["t"]),
            h.make_node("Identity", ["t"], ["Y"]),
        ],
        "if_in_loop",
        [h.make_tensor_value_info("X", T.FLOAT, [3]), h.make_tensor_value_info("flip", T.BOOL, [])],
        [h.make_tensor_value_info("Y", T.FLOAT, [3])],
        initializer=[_const("trips", np.array(2, np.int64))],
    )
    return _model(g)


def if_branch_for_other_shapes() -> onnx.ModelProto:
    then_g = h.make_graph(
        [h.make_node("Relu", ["X"], ["o"])], "then", [], [h.make_tensor_value_info("o", T.FLOAT, [1, None])]
    )
    else_g = h.make_graph(
        [
            h.make_node("Shape", ["X"], ["s"]),
            h.make_node("Gather", ["s", "one"], ["n"]),
            h.make_node("Div", ["n", "four"], ["q"]),
            h.make_node("Concat", ["one_1d", "q_1d", "four_1d"], ["target"], axis=0),
            h.make_node("Unsqueeze", ["q", "zero_1d"], ["q_1d"]),
            h.make_node("Reshape", ["X", "target"], ["r"]),
            h.make_node("Squeeze", ["r", "one_1d"], ["o"]),
        ],
        "else",
        [],
        [h.make_tensor_value_info("o", T.FLOAT, [1, None])],
        initializer=[
            _const("one", np.array(1, np.int64)),
            _const("four", np.array(4, np.int64)),
            _const("one_1d", np.array([1], np.int64)),
            _const("four_1d", np.array([4], np.int64)),
            _const("zero_1d", np.array([0], np.int64)),
        ],
    )
    # Concat reads q_1d before the Unsqueeze that makes it: put the nodes in order.
    nodes = list(else_g.node)
    order = [0, 1, 2, 4, 3, 5, 6]
    del else_g.node[:]
    else_g.node.extend(nodes[i] for i in order)
    g = h.make_graph(
        [h.make_node("If", ["cond"], ["out"], then_branch=then_g, else_branch=else_g)],
        "if_branch_for_other_shapes",
        [h.make_tensor_value_info("X", T.FLOAT, [1, "N"]), h.make_tensor_value_info("cond", T.BOOL, [])],
        [h.make_tensor_value_info("out", T.FLOAT, [1, None])],
    )
    return _model(g)


MODELS = {
    f.__name__: f
    for f in (
        if_data_propagation,
        if_element_types,
        if_static_shapes,
        loop_body_and_parent,
        if_in_loop,
        if_branch_for_other_shapes,
    )
}

_BASE_INPUTS = {
    "X": lambda shape: np.random.default_rng(0).standard_normal(shape).astype(np.float32),
    "S": lambda shape: np.array([6, 4], np.int64),
}


def input_sets(model: onnx.ModelProto) -> list[dict[str, np.ndarray]]:
    """One input set per combination of the model's bool inputs: every If branch runs."""
    base, flags = {}, []
    for vi in model.graph.input:
        shape = [d.dim_value or 4 for d in vi.type.tensor_type.shape.dim]  # a symbolic dim: 4
        if vi.type.tensor_type.elem_type == T.BOOL:
            flags.append(vi.name)
        else:
            base[vi.name] = _BASE_INPUTS[vi.name](shape)
    sets = []
    for values in itertools.product((False, True), repeat=len(flags)):
        feed = dict(base)
        feed.update({name: np.array(v) for name, v in zip(flags, values)})
        sets.append(feed)
    return sets
