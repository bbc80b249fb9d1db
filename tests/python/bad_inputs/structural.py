"""Bad inputs at the graph level: broken structure, wrong arity or attributes, hostile
sizes and nesting, and the reproducers's crashes and exit-0-invalid outputs.

Each case runs the passes that crashed or misbehaved (argv includes `--pass ...`). NaN and
Inf in initializers are allowed input (a model may compute with them), so they are not
here; tests/python/test_limits.py checks that such models pass through unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from . import BadInput
from .load import WHY_MAIN_OUTPUT_TWICE

WHY_NO_ELEMENT_TYPE = (
    "onnxruntime refuses it: a tensor type names its element type (onnx's checker reads a missing one "
    "as unknown); passes read it"
)

OPSET = [h.make_opsetid("", 18)]


def _vi(name: str, elem: int = T.FLOAT, shape=(2, 4)) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def _model(nodes, inputs, outputs, inits=(), opset=OPSET, **kw) -> onnx.ModelProto:
    graph = h.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
    return h.make_model(graph, opset_imports=opset, **kw)


def _write(model: onnx.ModelProto | bytes, passes: str | None = None) -> Callable[[Path], list[str]]:
    def make(folder: Path) -> list[str]:
        data = model if isinstance(model, bytes) else model.SerializeToString()
        (folder / "m.onnx").write_bytes(data)
        return ["m.onnx", "-o", "out.onnx", *(["--pass", passes] if passes else [])]

    return make


def _raw(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString()


# ---- structure -----------------------------------------------------------------------


def _cycle() -> onnx.ModelProto:
    return _model([h.make_node("Add", ["x", "b"], ["a"]), h.make_node("Relu", ["a"], ["b"])], [_vi("x")], [_vi("b")])


def _dangling_input() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["nowhere"], ["y"])], [_vi("x")], [_vi("y")])


def _dangling_output() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["y"])], [_vi("x")], [_vi("missing")])


def _defined_twice() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["y"]), h.make_node("Neg", ["x"], ["y"])], [_vi("x")], [_vi("y")])


def _duplicate_graph_output() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["y"])], [_vi("x")], [_vi("y"), _vi("y")])


def _input_is_also_produced() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["x"])], [_vi("x")], [_vi("x")])


def _subgraph_reads_undefined_value() -> onnx.ModelProto:
    then = h.make_graph([h.make_node("Identity", ["nowhere"], ["t"])], "then", [], [_vi("t")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [_vi("e")])
    return _model(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [_vi("x"), _vi("c", T.BOOL, [])],
        [_vi("y")],
    )


# ---- arity and attributes (refused before any pass reads the node) --------------------


def _matmul_inputs(n: int) -> onnx.ModelProto:
    return _model(
        [h.make_node("MatMul", ["x"] * n, ["m"]), h.make_node("Add", ["m", "b"], ["y"])],
        [_vi("x", shape=[4, 4])],
        [_vi("y", shape=[4, 4])],
        [nh.from_array(np.ones(4, np.float32), "b")],
    )


def _slice_no_inputs() -> onnx.ModelProto:
    return _model([h.make_node("Slice", [], ["s"]), h.make_node("Neg", ["s"], ["y"])], [], [_vi("y", shape=[2])])


def _slice_empty_names() -> onnx.ModelProto:
    return _model(
        [h.make_node("Slice", ["c", "", "", ""], ["s"]), h.make_node("Neg", ["s"], ["y"])],
        [],
        [_vi("y", shape=[2])],
        [nh.from_array(np.ones(2, np.float32), "c")],
    )


def _constant_graph_value() -> onnx.ModelProto:
    sub = h.make_graph([h.make_node("Identity", ["a"], ["b"])], "sub", [_vi("a", shape=[1])], [_vi("b", shape=[1])])
    const = h.make_node("Constant", [], ["k"])
    const.attribute.append(h.make_attribute("value", sub))
    return _model([const, h.make_node("Neg", ["k"], ["y"])], [], [_vi("y", shape=[1])])


def _wrong_attribute_type() -> onnx.ModelProto:
    node = h.make_node("Transpose", ["x"], ["y"])
    node.attribute.append(h.make_attribute("perm", [1.0, 0.0]))  # FLOATS, the schema wants INTS
    return _model([node], [_vi("x")], [_vi("y", shape=[4, 2])])


def _missing_required_attribute() -> onnx.ModelProto:
    return _model([h.make_node("Cast", ["x"], ["y"])], [_vi("x")], [_vi("y")])


def _too_many_outputs() -> onnx.ModelProto:
    return _model([h.make_node("Relu", ["x"], ["y", "z"])], [_vi("x")], [_vi("y"), _vi("z")])


def _relu_two_inputs_in_subgraph() -> onnx.ModelProto:
    then = h.make_graph([h.make_node("Relu", ["x", "x"], ["t"])], "then", [], [_vi("t")])
    other = h.make_graph([h.make_node("Identity", ["x"], ["e"])], "else", [], [_vi("e")])
    return _model(
        [h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)],
        [_vi("x"), _vi("c", T.BOOL, [])],
        [_vi("y")],
    )


# ---- sizes and nesting ------------------------------------------------------------------


def _huge_initializer_dims() -> onnx.ModelProto:
    t = onnx.TensorProto()
    t.name, t.data_type = "w", T.FLOAT
    t.dims.extend([10**12, 10**12])  # 1e24 elements: the element count overflows
    t.raw_data = b"\0" * 16
    return _model([h.make_node("Add", ["x", "w"], ["y"])], [_vi("x")], [_vi("y")], [t])


def _nest_bytes(depth: int) -> bytes:
    """A model with If nodes nested `depth` deep, serialized by hand (protobuf's Python
    runtime refuses to build messages that deep)."""

    def varint(n: int) -> bytes:
        out = bytearray()
        while True:
            b, n = n & 0x7F, n >> 7
            out.append(b | (0x80 if n else 0))
            if not n:
                return bytes(out)

    def field(num: int, payload: bytes) -> bytes:
        return varint(num << 3 | 2) + varint(len(payload)) + payload

    def vint(num: int, v: int) -> bytes:
        return varint(num << 3) + varint(v)

    def vi(name: str) -> bytes:
        return _vi(name, shape=[1]).SerializeToString()

    g = h.make_graph([h.make_node("Identity", ["x"], ["o0"])], "b0", [], [_vi("o0", shape=[1])]).SerializeToString()
    for d in range(1, depth + 1):
        leaf = h.make_graph([h.make_node("Identity", ["x"], [f"e{d}"])], f"e{d}", [], [_vi(f"e{d}", shape=[1])])
        attrs = field(5, field(1, b"then_branch") + vint(20, 5) + field(6, g))
        attrs += field(5, field(1, b"else_branch") + vint(20, 5) + field(6, leaf.SerializeToString()))
        node = field(1, b"c") + field(2, f"o{d}".encode()) + field(4, b"If") + attrs
        if d < depth:
            g = field(1, node) + field(2, f"b{d}".encode()) + field(12, vi(f"o{d}"))
        else:
            inputs = field(11, vi("x")) + field(11, _vi("c", T.BOOL, []).SerializeToString())
            g = field(1, node) + field(2, b"main") + inputs + field(12, vi(f"o{d}"))
    return vint(1, 10) + field(7, g) + field(8, field(1, b"") + vint(2, 18))


def _recursive_function() -> onnx.ModelProto:
    f = h.make_function(
        "loc",
        "F",
        ["a"],
        ["b"],
        [h.make_node("F", ["a"], ["b"], domain="loc")],
        [h.make_opsetid("", 18), h.make_opsetid("loc", 1)],
    )
    return _model(
        [h.make_node("F", ["x"], ["y"], domain="loc")],
        [_vi("x")],
        [_vi("y")],
        opset=OPSET + [h.make_opsetid("loc", 1)],
        functions=[f],
    )


def _mutually_recursive_functions() -> onnx.ModelProto:
    opsets = [h.make_opsetid("", 18), h.make_opsetid("loc", 1)]
    f = h.make_function("loc", "F", ["a"], ["b"], [h.make_node("G", ["a"], ["b"], domain="loc")], opsets)
    g = h.make_function("loc", "G", ["a"], ["b"], [h.make_node("F", ["a"], ["b"], domain="loc")], opsets)
    return _model(
        [h.make_node("F", ["x"], ["y"], domain="loc")],
        [_vi("x")],
        [_vi("y")],
        opset=OPSET + [h.make_opsetid("loc", 1)],
        functions=[f, g],
    )


def _many_outputs_one_dangling(n: int = 100_000) -> onnx.ModelProto:
    """100k outputs: the whole pipeline must run in time; the last output is dangling, so
    the run must also end in a clean refusal."""
    nodes = [h.make_node("Identity", ["x"], [f"o{i}"]) for i in range(n)]
    outputs = [_vi(f"o{i}", shape=[1]) for i in range(n)] + [_vi("dangling", shape=[1])]
    return _model(nodes, [_vi("x", shape=[1])], outputs)


def _many_outputs_bad_tail(n: int = 100_000) -> onnx.ModelProto:
    """100k outputs through the mission pipeline, then one LayerNormalization with an
    int32 Scale (by a wrong annotation) that decompose-layernorm must refuse."""
    nodes = [h.make_node("Identity", ["x"], [f"o{i}"]) for i in range(n)]
    nodes.append(h.make_node("LayerNormalization", ["x", "s"], ["ln"], axis=-1))
    outputs = [_vi(f"o{i}", shape=[1]) for i in range(n)] + [_vi("ln", shape=[1])]
    return _model(nodes, [_vi("x", shape=[1]), _vi("s", T.INT32, [1])], outputs)


# ---- exit 0 with an invalid model ------------------------------------


def _layernorm(scale_type: int = T.FLOAT, stash_type: int | None = None, sparse: bool = False) -> onnx.ModelProto:
    attrs = {"axis": -1} if stash_type is None else {"axis": -1, "stash_type": stash_type}
    node = h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], **attrs)
    inits = [nh.from_array(np.zeros(4, np.float32), "b")]
    inputs = [_vi("x")]
    model = _model([node], inputs, [_vi("y")], inits)
    if sparse:
        values = nh.from_array(np.array([1.0, 2.0], np.float32), "s")
        indices = nh.from_array(np.array([0, 2], np.int64), "s_indices")
        model.graph.sparse_initializer.append(h.make_sparse_tensor(values, indices, [4]))
    elif scale_type == T.FLOAT:
        model.graph.initializer.append(nh.from_array(np.ones(4, np.float32), "s"))
    else:
        model.graph.input.append(_vi("s", scale_type, [4]))
    return model


def _reshape_int64_extremes() -> onnx.ModelProto:
    """The shape [INT64_MAX, INT64_MIN] comes out of a Concat the checker does not
    evaluate, so the input passes it; once folding makes it a constant, the output does not."""
    const = lambda name, v: h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, np.int64)))  # noqa: E731
    return _model(
        [
            const("a", [2**63 - 1]),
            const("b", [-(2**63)]),
            h.make_node("Concat", ["a", "b"], ["shape"], axis=0),
            h.make_node("Reshape", ["x", "shape"], ["y"]),
        ],
        [_vi("x")],
        [_vi("y", shape=["p", "q"])],
    )


def _transpose_repeated_perm() -> onnx.ModelProto:
    """Transpose with perm [1, 1] reads a Reshape whose shape comes out of a Range the
    checker does not evaluate (its limit is a Cast), so the Transpose's input rank is
    unknown and the input passes; folding makes it static, and the output does not."""
    const = lambda name, v: h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, np.int64)))  # noqa: E731
    return _model(
        [
            const("start", 4),
            const("limit0", 0),
            h.make_node("Cast", ["limit0"], ["limit"], to=T.INT64),
            const("delta", -2),
            h.make_node("Range", ["start", "limit", "delta"], ["shape"]),
            h.make_node("Reshape", ["x", "shape"], ["r"]),
            h.make_node("Transpose", ["r"], ["y"], perm=[1, 1]),
        ],
        [_vi("x")],
        [_vi("y", shape=["p", "q"])],
    )


def _custom_domain_without_import() -> onnx.ModelProto:
    return _model([h.make_node("Gizmo", ["x"], ["y"], domain="acme")], [_vi("x")], [_vi("y")])


def _initializer_size_mismatch() -> onnx.ModelProto:
    t = onnx.TensorProto()
    t.name, t.data_type = "w", T.FLOAT
    t.dims.append(4)
    t.raw_data = b"\0" * 3
    return _model([h.make_node("Add", ["x", "w"], ["y"])], [_vi("x", shape=[4])], [_vi("y", shape=[4])], [t])


def _value_info_without_element_type() -> onnx.ModelProto:
    model = _model([h.make_node("Relu", ["x"], ["r"]), h.make_node("Neg", ["r"], ["y"])], [_vi("x")], [_vi("y")])
    vi = model.graph.value_info.add()
    vi.name = "r"
    vi.type.tensor_type.SetInParent()  # a tensor type whose elem_type is UNDEFINED
    return model


def _initializer_undefined_type() -> onnx.ModelProto:
    t = onnx.TensorProto()
    t.name, t.data_type = "w", T.UNDEFINED
    t.dims.append(4)
    t.raw_data = b"\0" * 16
    return _model([h.make_node("Add", ["x", "w"], ["y"])], [_vi("x", shape=[4])], [_vi("y", shape=[4])], [t])


CASES = [
    BadInput("cycle", _write(_cycle()), "cycle"),
    BadInput("dangling-input", _write(_dangling_input()), "nowhere"),
    BadInput("dangling-graph-output", _write(_dangling_output()), "missing"),
    BadInput("value-defined-twice", _write(_defined_twice()), "'y'"),
    BadInput("duplicate-graph-output", _write(_duplicate_graph_output(), "dce"), "'y'", why=WHY_MAIN_OUTPUT_TWICE),
    BadInput("input-redefined-by-node", _write(_input_is_also_produced()), "'x'"),
    BadInput("subgraph-reads-undefined-value", _write(_subgraph_reads_undefined_value(), "simplify"), "nowhere"),
    BadInput("matmul-no-inputs-fuse-reshapes", _write(_matmul_inputs(0), "fuse-reshapes"), "MatMul"),
    BadInput("matmul-one-input-simplify", _write(_matmul_inputs(1), "simplify"), "MatMul"),
    BadInput("matmul-one-input-fuse-reshapes", _write(_matmul_inputs(1), "fuse-reshapes"), "MatMul"),
    BadInput("slice-no-inputs-fold", _write(_slice_no_inputs(), "fold-constants"), "Slice"),
    BadInput("slice-empty-inputs-fold", _write(_slice_empty_names(), "fold-constants"), "Slice"),
    BadInput("constant-graph-value-extract", _write(_constant_graph_value(), "extract-constants"), "GRAPH"),
    BadInput("constant-graph-value-simplify", _write(_constant_graph_value(), "simplify"), "GRAPH"),
    BadInput("wrong-attribute-type", _write(_wrong_attribute_type(), "simplify"), "perm"),
    BadInput("missing-required-attribute", _write(_missing_required_attribute(), "fold-constants"), "'to'"),
    BadInput("too-many-outputs", _write(_too_many_outputs(), "cse"), "Relu"),
    BadInput("wrong-arity-in-subgraph", _write(_relu_two_inputs_in_subgraph(), "simplify"), "Relu"),
    BadInput("huge-initializer-dims", _write(_huge_initializer_dims(), "simplify"), "'w'"),
    BadInput("if-nested-200-deep", _write(_nest_bytes(200), "simplify"), "subgraphs nested 200 deep"),
    # One past the deepest nesting protobuf parses (31 levels load).
    BadInput("if-nested-32-deep", _write(_nest_bytes(32), "simplify"), "past protobuf's parse limit of 100"),
    BadInput("recursive-local-function", _write(_recursive_function(), "inline-functions"), "recursive"),
    BadInput("recursive-local-function-simplify", _write(_recursive_function(), "simplify"), "recursive"),
    BadInput("mutually-recursive-functions", _write(_mutually_recursive_functions(), "simplify"), "recursive"),
    BadInput(
        "100k-outputs-one-dangling",
        _write(_many_outputs_one_dangling(), "fix-layernorm,decompose-layernorm,simplify"),
        "dangling",
    ),
    BadInput(
        "100k-outputs-mission-pipeline",
        _write(_many_outputs_bad_tail(), "fix-layernorm,decompose-layernorm,simplify"),
        "INT32",
    ),
    BadInput("layernorm-int32-scale", _write(_layernorm(scale_type=T.INT32), "decompose-layernorm"), "INT32"),
    BadInput("layernorm-stash-type-0", _write(_layernorm(stash_type=0), "decompose-layernorm"), "stash_type 0"),
    BadInput(
        "layernorm-stash-type-0-simplify",
        _write(_layernorm(stash_type=0), "fix-layernorm,decompose-layernorm"),
        "stash_type 0",
    ),
    BadInput("layernorm-sparse-scale", _write(_layernorm(sparse=True), "decompose-layernorm"), "sparse"),
    BadInput("reshape-int64-extremes-folded", _write(_reshape_int64_extremes(), "simplify"), "the input passes"),
    BadInput("transpose-repeated-perm-folded", _write(_transpose_repeated_perm(), "simplify"), "repeated value"),
    BadInput(
        "transpose-repeated-perm-fold-constants",
        _write(_transpose_repeated_perm(), "fold-constants"),
        "the input passes",
    ),
    BadInput("custom-domain-without-opset-import", _write(_custom_domain_without_import(), "dce"), "acme"),
    BadInput("initializer-size-mismatch", _write(_initializer_size_mismatch(), "simplify"), "'w'"),
    BadInput(
        "value-info-without-element-type",
        _write(_value_info_without_element_type(), "cse"),
        "'r'",
        why=WHY_NO_ELEMENT_TYPE,
    ),
    BadInput("initializer-undefined-type", _write(_initializer_undefined_type(), "simplify"), "'w'"),
]
