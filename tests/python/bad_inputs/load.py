"""Bad inputs the loader must refuse: broken bytes, and models that break what the IR relies
on (ir_version, graph, opset imports, duplicate functions and outputs, tensor data that does
not match its dims, node arity against onnx's schema). Also model paths that are no file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import BadInput


def model(nodes=None, initializers=None, outputs=("Y",), opset=18, functions=(), extra_opsets=()) -> onnx.ModelProto:
    """Y = Add(X, W) with a float[16] initializer W, unless told otherwise."""
    if nodes is None:
        nodes = [helper.make_node("Add", ["X", "W"], ["Y"], name="add")]
    if initializers is None:
        initializers = [numpy_helper.from_array(np.arange(16, dtype=np.float32), "W")]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, [16]) for o in outputs],
        initializers,
    )
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, v) for d, v in extra_opsets)]
    m = helper.make_model(graph, opset_imports=opsets, functions=list(functions))
    m.ir_version = 10
    return m


def writes(make_bytes: Callable[[], bytes]) -> Callable[[Path], list[str]]:
    """A case whose input is m.onnx with the given bytes, rewritten to out.onnx."""

    def make(folder: Path) -> list[str]:
        (folder / "m.onnx").write_bytes(make_bytes())
        return ["m.onnx", "-o", "out.onnx"]

    return make


def edited(edit: Callable[[onnx.ModelProto], None], base: Callable[[], onnx.ModelProto] = model):
    def make_bytes() -> bytes:
        m = base()
        edit(m)
        return m.SerializeToString()

    return writes(make_bytes)


def _truncated(fraction: float) -> Callable[[], bytes]:
    def make() -> bytes:
        data = model().SerializeToString()
        return data[: max(1, int(len(data) * fraction))]

    return make


def _flip_first_tag() -> bytes:
    data = bytearray(model().SerializeToString())
    data[0] = (data[0] & ~0x07) | 0x07  # wire type 7 does not exist
    return bytes(data)


def _graph_length_past_end() -> bytes:
    m = model()
    graph = m.graph.SerializeToString()
    m.ClearField("graph")
    head = m.SerializeToString()
    # field 7 (graph), length-delimited, with a length 1000 bytes longer than what follows
    length = len(graph) + 1000
    varint = bytearray()
    while True:
        b = length & 0x7F
        length >>= 7
        varint.append(b | (0x80 if length else 0))
        if not length:
            break
    return head + bytes([7 << 3 | 2]) + bytes(varint) + graph


# Why each is refused although onnx's checker or onnxruntime accepts it (the leniency table).
WHY_IR_VERSION = "onnx's checker refuses it: IR versions count from 1, and the version says what the fields mean"
WHY_CONFLICTING_OPSETS = (
    "ambiguous: two versions of one domain; onnx's checker and onnxruntime take the last, the importer "
    "the first, and the ONNX spec names neither (repeats of one version are accepted)"
)
WHY_MAIN_OUTPUT_TWICE = (
    "ambiguous: a caller fetches the main graph's outputs by name, and two are named 'Y' "
    "(a subgraph's outputs bind by position, and a repeat there is accepted)"
)


def _set(field: str, value):
    return lambda m: setattr(m, field, value)


def _set_opset(version: int):
    def edit(m):
        m.opset_import[0].version = version

    return edit


def _no_graph(m):
    m.ClearField("graph")


def _empty_graph(m):
    m.graph.ClearField("node")
    m.graph.ClearField("output")
    m.graph.ClearField("initializer")


def _no_opset(m):
    m.ClearField("opset_import")


def _opset_twice(m):
    # Two versions for one domain: ambiguous. (The same import twice is accepted, as onnx's
    # checker and onnxruntime accept it: test_corpus's skl2onnx model has one.)
    m.opset_import.append(helper.make_opsetid("ai.onnx", 17))


def _unimported_domain(m):
    m.graph.node[0].domain = "com.example"


def _function(body_op: str):
    return helper.make_function(
        "local", "F", ["x"], ["y"], [helper.make_node(body_op, ["x"], ["y"])], [helper.make_opsetid("", 18)]
    )


def _duplicate_functions() -> onnx.ModelProto:
    return model(
        nodes=[
            helper.make_node("F", ["X"], ["T"], domain="local", name="call"),
            helper.make_node("Add", ["T", "W"], ["Y"]),
        ],
        functions=[_function("Neg"), _function("Relu")],
        extra_opsets=[("local", 1)],
    )


def _duplicate_output(m):
    m.graph.output.append(m.graph.output[0])


def _raw(size: int):
    def edit(m):
        m.graph.initializer[0].ClearField("float_data")
        m.graph.initializer[0].raw_data = b"\0" * size

    return edit


def _typed_count(m):
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.float_data.extend([1.0] * 15)


def _wrong_field(m):
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.int64_data.extend([1] * 16)


def _negative_dim(m):
    m.graph.initializer[0].dims[0] = -16


def _undefined_type(m):
    m.graph.initializer[0].data_type = TensorProto.UNDEFINED


def _arity_inputs(m):
    del m.graph.node[0].input[1]


def _arity_outputs(m):
    m.graph.node[0].output.append("extra")


def _required_input_empty(m):
    m.graph.node[0].input[0] = ""


def _constant_attr_mismatch() -> onnx.ModelProto:
    value = numpy_helper.from_array(np.ones(16, dtype=np.float32), "c")
    value.dims[0] = 17
    return model(
        nodes=[
            helper.make_node("Constant", [], ["C"], name="const", value=value),
            helper.make_node("Add", ["X", "C"], ["Y"]),
        ],
        initializers=[],
    )


def _subgraph_arity() -> onnx.ModelProto:
    then = helper.make_graph(
        [helper.make_node("Neg", ["X", "X"], ["T"], name="bad_neg")],
        "then",
        [],
        [helper.make_tensor_value_info("T", TensorProto.FLOAT, [16])],
    )
    other = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["E"])],
        "else",
        [],
        [helper.make_tensor_value_info("E", TensorProto.FLOAT, [16])],
    )
    m = model(nodes=[helper.make_node("If", ["c"], ["Y"], then_branch=then, else_branch=other)], initializers=[])
    m.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    return m


def _name_with_newline(m):
    """A dangling output whose name holds a newline and a control byte (a bit flip made
    one): the error quotes it escaped, on one line."""
    m.graph.output[0].name = "Y\n\x03N"


def _fifo_model(folder: Path) -> list[str]:
    os.mkfifo(folder / "m.onnx")
    return ["m.onnx", "-o", "out.onnx"]


def _fifo_model_inspect(folder: Path) -> list[str]:
    os.mkfifo(folder / "m.onnx")
    return ["inspect", "m.onnx"]


def _directory_model(folder: Path) -> list[str]:
    (folder / "m.onnx").mkdir()
    return ["m.onnx", "-o", "out.onnx"]


CASES = [
    BadInput("load-truncated-half", writes(_truncated(0.5)), "m.onnx"),
    BadInput("load-truncated-to-one-byte", writes(_truncated(0.0)), "m.onnx"),
    BadInput("load-truncated-last-byte", writes(lambda: model().SerializeToString()[:-1]), "m.onnx"),
    BadInput("load-bitflip-wire-type", writes(_flip_first_tag), "m.onnx"),
    BadInput("load-graph-length-past-end", writes(_graph_length_past_end), "m.onnx"),
    BadInput("load-ir-version-0", edited(_set("ir_version", 0)), "ir_version 0", why=WHY_IR_VERSION),
    BadInput("load-ir-version-negative", edited(_set("ir_version", -1)), "ir_version -1", why=WHY_IR_VERSION),
    BadInput("load-ir-version-99", edited(_set("ir_version", 99)), "ir_version 99 is newer"),
    BadInput("load-opset-0", edited(_set_opset(0)), "opset 0 of 'ai.onnx'"),
    BadInput(
        "load-opset-99",
        edited(_set_opset(99)),
        "opset 99 of 'ai.onnx'",
        why="onnxruntime refuses it: onnx defines no such opset, so no node has a schema",
    ),
    BadInput("load-no-graph", edited(_no_graph), "has no graph"),
    BadInput(
        "load-empty-graph",
        edited(_empty_graph),
        "declares no outputs",
        why="onnxruntime refuses it: a model without outputs computes nothing",
    ),
    BadInput("load-no-opset-import", edited(_no_opset), "opset_import is empty"),
    BadInput(
        "load-opset-imported-twice",
        edited(_opset_twice),
        "imports domain 'ai.onnx' twice, as opset 18 and 17",
        why=WHY_CONFLICTING_OPSETS,
    ),
    BadInput("load-domain-not-imported", edited(_unimported_domain), "uses domain 'com.example'"),
    BadInput(
        "load-duplicate-functions", edited(lambda m: None, _duplicate_functions), "function 'local::F' is defined twice"
    ),
    BadInput(
        "load-duplicate-graph-output", edited(_duplicate_output), "lists output 'Y' twice", why=WHY_MAIN_OUTPUT_TWICE
    ),
    BadInput("load-raw-data-short", edited(_raw(60)), "initializer 'W' holds 60 bytes"),
    BadInput(
        "load-raw-data-long",
        edited(_raw(65)),
        "initializer 'W' holds 65 bytes",
        why="onnxruntime refuses it: more bytes than the dims and type need",
    ),
    BadInput("load-typed-data-count", edited(_typed_count), "initializer 'W' holds 15 data values"),
    BadInput(
        "load-typed-data-wrong-field",
        edited(_wrong_field),
        "has data type FLOAT but keeps values in a typed field of another type",
    ),
    BadInput("load-negative-dim", edited(_negative_dim), "negative dimension"),
    BadInput("load-undefined-data-type", edited(_undefined_type), "data type 0"),
    BadInput("load-arity-too-few-inputs", edited(_arity_inputs), "node 'add' (Add) has 1 inputs"),
    BadInput("load-arity-too-many-outputs", edited(_arity_outputs), "node 'add' (Add) has 2 outputs"),
    BadInput("load-required-input-empty", edited(_required_input_empty), "leaves required input 0"),
    BadInput(
        "load-constant-tensor-mismatch", edited(lambda m: None, _constant_attr_mismatch), "node 'const' (Constant)"
    ),
    BadInput("load-subgraph-arity", edited(lambda m: None, _subgraph_arity), "node 'bad_neg' (Neg) has 2 inputs"),
    BadInput("load-name-with-newline", edited(_name_with_newline), "output 'Y\\n\\x03N' is not defined"),
    BadInput("load-model-is-fifo", _fifo_model, "a FIFO", timeout=10.0),
    BadInput("load-model-is-fifo-inspect", _fifo_model_inspect, "a FIFO", timeout=10.0),
    BadInput("load-model-is-directory", _directory_model, "a folder"),
]
