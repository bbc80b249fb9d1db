"""The load-time refusals measured against onnx's checker and onnxruntime (issue: leniency
where the ecosystem is lenient). One minimal model per refusal of core/io's loader and of
the structural check before the passes that load.py and structural.py do not already hold.

CASES: what onnxsurgeon still refuses; a case onnx's checker or onnxruntime accepts says
`why` (the leniency table in docs/reliability.md). ACCEPTED: what it refused or mishandled
before and accepts now, because both accept it and it means something."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import Accepted, BadInput
from .external import WEIGHTS, external_model
from .load import WHY_CONFLICTING_OPSETS, edited, model
from .structural import WHY_NO_ELEMENT_TYPE

FLOAT16 = [16]


def _vi(name: str, elem: int = TensorProto.FLOAT, shape=FLOAT16) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def _function(inputs, outputs, nodes, opsets=(("", 18),)) -> onnx.FunctionProto:
    return helper.make_function(
        "local", "F", list(inputs), list(outputs), nodes, [helper.make_opsetid(d, v) for d, v in opsets]
    )


def _calls(function: onnx.FunctionProto, inputs=("X",), outputs=("T",)) -> onnx.ModelProto:
    """Y = Add(F(X), W), with F the given local function."""
    return model(
        nodes=[
            helper.make_node("F", list(inputs), list(outputs), domain="local", name="call"),
            helper.make_node("Add", [outputs[0], "W"], ["Y"]),
        ],
        functions=[function],
        extra_opsets=[("local", 1)],
    )


def _as_model(build: Callable[[], onnx.ModelProto]) -> Callable[[Path], list[str]]:
    return edited(lambda m: None, build)


def _with_passes(make: Callable[[Path], list[str]], pipeline: str = "nop") -> Callable[[Path], list[str]]:
    """The case run through a pipeline: the structural check before the passes refuses it
    (a run without passes copies the model as it is)."""
    return lambda folder: [*make(folder), "--pass", pipeline]


# ---- opset imports ----------------------------------------------------------------------


def _opset_conflict_unused_domain(m):
    m.opset_import.extend([helper.make_opsetid("com.acme", 1), helper.make_opsetid("com.acme", 2)])


def _negative_custom_opset(m):
    m.opset_import.append(helper.make_opsetid("com.acme", -1))


def _ml_opset_99(m):
    m.opset_import.append(helper.make_opsetid("ai.onnx.ml", 99))


def _no_ir_version(m):
    m.ClearField("ir_version")


# ---- functions, graphs and nodes --------------------------------------------------------


def _function_input_twice() -> onnx.ModelProto:
    return _calls(_function(["x", "x"], ["y"], [helper.make_node("Neg", ["x"], ["y"])]), inputs=("X", "X"))


def _function_output_twice() -> onnx.ModelProto:
    return _calls(_function(["x"], ["y", "y"], [helper.make_node("Neg", ["x"], ["y"])]), outputs=("T", "U"))


def _function_output_undefined() -> onnx.ModelProto:
    return _calls(_function(["x"], ["z"], [helper.make_node("Neg", ["x"], ["y"])]))


def _no_op_type(m):
    m.graph.node[0].op_type = ""


def _graph_input_twice(m):
    m.graph.input.append(m.graph.input[0])


def _initializer_twice(values: np.ndarray):
    def edit(m):
        m.graph.initializer.append(numpy_helper.from_array(values, "W"))

    return edit


def _sparse_and_dense_same_name(m):
    values = numpy_helper.from_array(np.array([1.0], np.float32), "W")
    indices = numpy_helper.from_array(np.array([0], np.int64), "W_indices")
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [16]))


def _sparse_negative_dim(m):
    values = numpy_helper.from_array(np.array([1.0], np.float32), "S")
    indices = numpy_helper.from_array(np.array([0], np.int64), "S_indices")
    m.graph.sparse_initializer.append(helper.make_sparse_tensor(values, indices, [-16]))


def _output_without_element_type(m):
    m.graph.output[0].type.tensor_type.elem_type = TensorProto.UNDEFINED


# ---- tensor data ------------------------------------------------------------------------


def _typed_data_too_many(m):
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.float_data.extend([1.0] * 17)


def _string_with_raw_data(m):
    s = onnx.TensorProto()
    s.name, s.data_type, s.raw_data = "S", TensorProto.STRING, b"abcd"
    s.dims.append(1)
    m.graph.initializer.append(s)


# ---- external data ----------------------------------------------------------------------


def _location_back_inside(folder: Path) -> list[str]:
    (folder / "sub").mkdir()
    external_model(folder, location="sub/../w.bin", write_data=False)
    (folder / "w.bin").write_bytes(WEIGHTS.tobytes())
    return ["m.onnx", "-o", "out.onnx"]


CASES = [
    BadInput("load-ir-version-missing", edited(_no_ir_version), "ir_version missing"),
    BadInput(
        "load-opset-conflict-in-unused-domain",
        edited(_opset_conflict_unused_domain),
        "imports domain 'com.acme' twice, as opset 1 and 2",
        why=WHY_CONFLICTING_OPSETS,
    ),
    BadInput(
        "load-negative-custom-opset",
        edited(_negative_custom_opset),
        "negative opset version for domain 'com.acme'",
        why="IR safety: opset versions count from 1, and onnxsurgeon reads a negative version as "
        "'not imported'; no exporter writes one",
    ),
    BadInput(
        "load-ml-opset-99",
        edited(_ml_opset_99),
        "opset 99 of 'ai.onnx.ml'",
        why="onnxruntime refuses it: onnx defines ai.onnx.ml 1..5, so no node of it has a schema",
    ),
    BadInput(
        "load-function-input-twice",
        _as_model(_function_input_twice),
        "function 'F' lists input 'x' twice",
        why="onnx's checker refuses it (not SSA): the body cannot tell the two inputs apart",
    ),
    BadInput("load-function-output-twice", _as_model(_function_output_twice), "lists output 'y' twice"),
    BadInput("load-function-output-undefined", _as_model(_function_output_undefined), "output 'z' is not defined"),
    BadInput("load-no-op-type", edited(_no_op_type), "has no op_type"),
    BadInput("load-graph-input-twice", edited(_graph_input_twice), "lists input 'X' twice"),
    BadInput(
        "load-initializer-twice",
        edited(_initializer_twice(np.arange(16, dtype=np.float32))),
        "defines initializer 'W' twice",
        why="onnx's checker refuses it (initializer names must be unique), and the IR holds one value per name",
    ),
    BadInput(
        "load-initializer-twice-other-values",
        edited(_initializer_twice(np.ones(16, dtype=np.float32))),
        "defines initializer 'W' twice",
        why="onnx's checker refuses it; ambiguous: two values for one name",
    ),
    BadInput(
        "load-sparse-and-dense-initializer-one-name",
        edited(_sparse_and_dense_same_name),
        "defines initializer 'W' twice",
        why="onnx's checker refuses it; ambiguous: two values for one name",
    ),
    BadInput(
        "load-sparse-negative-dim", edited(_sparse_negative_dim), "sparse initializer 'S' has a negative dimension"
    ),
    BadInput(
        "load-typed-data-too-many",
        edited(_typed_data_too_many),
        "initializer 'W' holds 17 data values",
        why="onnxruntime refuses it: the data does not match the dims",
    ),
    BadInput(
        "load-string-tensor-raw-data",
        edited(_string_with_raw_data),
        "is a STRING tensor with raw data",
        why="onnx's checker refuses it: strings have no raw layout, so the bytes have no meaning",
    ),
    BadInput(
        "output-without-element-type",
        _with_passes(edited(_output_without_element_type)),
        "value 'Y' has a tensor type without an element type",
        why=WHY_NO_ELEMENT_TYPE,
    ),
    BadInput(
        "ext-location-climbs-back-inside",
        _location_back_inside,
        "'..'",
        why="ambiguous: onnx reads 'sub/../w.bin' as w.bin, the filesystem as wherever sub/.. leads "
        "(sub may be a symbolic link)",
    ),
]


# ---- accepted ---------------------------------------------------------------------------


def _write(m: onnx.ModelProto, folder: Path, name: str = "m.onnx") -> str:
    (folder / name).write_bytes(m.SerializeToString())
    return name


def _repeated_opset_import(folder: Path) -> str:
    """skl2onnx 1.20 writes the same import twice."""
    m = model()
    m.opset_import.append(helper.make_opsetid("", 18))
    return _write(m, folder)


def _loop_scans_its_carried_value(folder: Path) -> str:
    """A Loop body lists y twice: the carried value and the scan output."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["ci"], ["co"]), helper.make_node("Neg", ["xi"], ["y"])],
        "body",
        [_vi("i", TensorProto.INT64, []), _vi("ci", TensorProto.BOOL, []), _vi("xi")],
        [_vi("co", TensorProto.BOOL, []), _vi("y"), _vi("y")],
    )
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "c", "X"], ["Y", "all"], body=body)],
        "g",
        [_vi("n", TensorProto.INT64, []), _vi("c", TensorProto.BOOL, []), _vi("X")],
        [_vi("Y"), _vi("all", shape=["N", 16])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    return _write(m, folder)


def _if_branch_lists_a_value_twice(folder: Path) -> str:
    then = helper.make_graph([helper.make_node("Neg", ["X"], ["t"])], "then", [], [_vi("t"), _vi("t")])
    other = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["e"]), helper.make_node("Abs", ["X"], ["f"])],
        "else",
        [],
        [_vi("e"), _vi("f")],
    )
    graph = helper.make_graph(
        [helper.make_node("If", ["c"], ["Y", "Z"], then_branch=then, else_branch=other)],
        "g",
        [_vi("X"), _vi("c", TensorProto.BOOL, [])],
        [_vi("Y"), _vi("Z")],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    return _write(m, folder)


def _location(name: str) -> Callable[[Path], str]:
    def make(folder: Path) -> str:
        external_model(folder, location=name)
        return "m.onnx"

    return make


def _external_constant(folder: Path) -> str:
    """A Constant whose value lives in c.bin."""
    value = numpy_helper.from_array(np.arange(16, dtype=np.float32), "c")
    value.ClearField("raw_data")
    value.data_location = TensorProto.EXTERNAL
    for key, v in (("location", "c.bin"), ("offset", "0"), ("length", "64")):
        entry = value.external_data.add()
        entry.key, entry.value = key, v
    (folder / "c.bin").write_bytes(np.arange(16, dtype=np.float32).tobytes())
    m = model(
        nodes=[helper.make_node("Constant", [], ["C"], value=value), helper.make_node("Add", ["X", "C"], ["Y"])],
        initializers=[],
    )
    return _write(m, folder)


ACCEPTED = [
    Accepted("opset-imported-twice-one-version", _repeated_opset_import, "written once"),
    Accepted(
        "loop-body-lists-a-value-twice",
        _loop_scans_its_carried_value,
        "subgraph outputs bind by position: the second listing gets an Identity",
    ),
    Accepted(
        "if-branch-lists-a-value-twice",
        _if_branch_lists_a_value_twice,
        "the second listing gets an Identity (onnxruntime 1.32 computes the If's first output from "
        "uninitialized memory on the original, correctly on the rewrite)",
    ),
    Accepted("ext-location-with-colon", _location("w:1.bin"), "':' is a file-name character on POSIX"),
    Accepted("ext-location-with-backslash", _location("w\\1.bin"), "'\\' is a file-name character on POSIX"),
    Accepted(
        "ext-constant-value",
        _external_constant,
        "the bytes are read at load (before, a copy saved elsewhere named a data file not beside it)",
    ),
]
