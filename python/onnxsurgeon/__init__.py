"""onnxsurgeon: fast ONNX graph surgery.

    import onnxsurgeon as osg
    model = osg.load("model.onnx")             # or osg.Model.from_proto(onnx_model)
    osg.run(model, "nop")                      # a pipeline, same grammar as the CLI
    model.save("fixed.onnx")                   # atomic; external data kept external
    proto = model.to_proto()                   # back to onnx.ModelProto

`run` also takes an onnx.ModelProto (returns one) or a path (returns the rewritten Model,
or writes `output=` and returns its path: a path is never overwritten unless it is the
`output=` given), so it can follow `torch.onnx.export` directly.
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence, Union

from . import _core, _proto
from ._core import Graph, Model, Node, OnnxSurgeonError, Value
from .rules import Pattern, Rule, apply_rules, register_rules
from .types import ValueType

__version__: str = _core.__version__

__all__ = [
    "Graph",
    "Model",
    "Node",
    "OnnxSurgeonError",
    "Value",
    "ValueType",
    "load",
    "save",
    "parse_text",
    "inspect",
    "run",
    "passes",
    "Pattern",
    "Rule",
    "apply_rules",
    "register_rules",
    "__version__",
    "check_target",
    "compare",
    "bisect",
]


def load(source: Union[str, os.PathLike, bytes]) -> Model:
    """Loads a model from a path (weights stay memory-mapped) or from serialized bytes."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        # bytes are immutable, so weights view them without a copy; others are copied once
        return _core.load_buffer(source if isinstance(source, bytes) else bytes(source))
    return _core.load(os.fspath(source))


def save(
    model: Model,
    path: Union[str, os.PathLike],
    external_data: str = "keep",
    size_threshold: int = 1024,
    location: str = "",
) -> None:
    """Writes `model` atomically. external_data: 'keep', 'inline' or 'all'."""
    model.save(os.fspath(path), external_data, size_threshold, location)


def parse_text(text: str) -> Model:
    """Parses the ONNX text format, e.g. '<ir_version: 10, opset_import: ["" : 18]> g (float[N] X) => (float[N] Y) { Y = Relu(X) }'."""
    return _core.parse_text(text)


def _from_proto(proto: Any, base_dir: str = "") -> Model:
    """Builds a Model from an onnx.ModelProto (not changed): the big initializers' raw_data
    read once each and viewed by the Model, the rest serialized once by protobuf (_proto.py)."""
    return _proto.from_proto(proto, base_dir)


def _to_proto(self: Model) -> Any:
    """The model as a new onnx.ModelProto: serialized in C++ without the big weights, parsed
    once by protobuf, then each big initializer's payload copied in once (_proto.py)."""
    return _proto.to_proto(self)


def _inspect(self: Model) -> dict:
    return json.loads(self.inspect_json())


Model.from_proto = staticmethod(_from_proto)
Model.to_proto = _to_proto
Model.inspect = _inspect
Value.type = property(
    lambda self: ValueType._from_tuple(self._type_tuple()),
    doc="The value's type (ValueType), or None when the model does not say.",
)
Node.attrs = property(
    lambda self: {name: self.attribute(name) for name in self.attribute_names},
    doc="Every attribute as {name: value}, in the types Rewriter.op(attrs=...) takes.",
)


def inspect(model: Union[Model, str, os.PathLike, Any]) -> dict:
    """The health report of `onnxsurgeon inspect --json`, as a dict."""
    return _as_model(model).inspect()


def passes() -> list:
    """Every pass: name, summary, options, and builtin (False for rule sets registered
    from Python with register_rules). Each option: name, type (bool, int, float, string,
    enum, list, shapes), default, help, choices (enum and list; else empty)."""
    return _core.passes()


def check_target(model: Any, target: str, input_shapes: Union[str, dict, None] = None) -> dict:
    """What `target` (a built-in profile name such as "rknn2", or a path to a .toml profile)
    refuses in the model, node by node: the dict `onnxsurgeon check --target NAME --json`
    prints ("accepted", "blockers", "warnings"; each finding with node, op, where, reason,
    fact, source, fix, fixable). The model is not changed.

    `input_shapes` is what you would give `--target` to make inputs static: the text of
    `--input-shapes` ("x:1x3x224x224,mask:1x128") or a dict {"x": [1, 3, 224, 224]}.
    Raises OnnxSurgeonError for an unknown target or an invalid profile file.
    """
    if isinstance(input_shapes, dict):
        input_shapes = ";".join(f"{name}:{'x'.join(str(int(d)) for d in dims)}" for name, dims in input_shapes.items())
    name = os.fspath(model) if isinstance(model, (str, os.PathLike)) else "<model>"
    text = _core.check_target(_as_model(model), target, input_shapes or "", name)
    return json.loads(text)


def _shapes(input_shapes: Union[dict, None]) -> dict:
    return {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}


def _label(model: Any, default: str) -> str:
    return os.fspath(model) if isinstance(model, (str, os.PathLike)) else default


def compare(
    a: Any,
    b: Any = None,
    *,
    backend: Union[str, None] = None,
    reference: Union[str, os.PathLike, None] = None,
    inputs: Union[str, os.PathLike, None] = None,
    input_shapes: Union[dict, None] = None,
    seed: int = 0,
    batch: int = 64,
    outputs_only: bool = False,
    fp16_tolerance: bool = False,
) -> dict:
    """Where do two models part? `onnxsurgeon compare A B --json` as a dict.

    Runs `a` and `b` (a Model, ModelProto or path) in onnxruntime on the same inputs with
    their intermediate tensors exposed, pairs tensors by name and by the Rewriter's
    provenance, and judges each with --check's tolerance table. Give exactly one of `b`,
    `backend` (run `a` in onnxruntime and in a backend's venv: "ort-1.15", "openvino", ...)
    or `reference` (a .npz of tensors computed elsewhere, keyed by tensor name). `inputs`
    is a .npz keyed by input name (default: random from `seed`, symbolic dims 2, or
    `input_shapes` {"x": [1, 3, 224, 224]}). `fp16_tolerance` judges every float tensor
    with float16's tolerance (`b` is a convert-float16 result).

    Result keys: "ok", "first_divergence" (None, or the tensor row: "a", "b", "a_node",
    "a_op", "b_node", "b_rule", "max_abs", "max_rel", "share_off", "problem", ...),
    "tensors" (every row, in `a`'s topological order), "drift", "runtime", "segments".
    Raises OnnxSurgeonError when a model cannot be run or no Python with onnxruntime is found.
    """
    given = sum(x is not None for x in (b, backend, reference))
    if given != 1:
        raise ValueError("give exactly one of b, backend= or reference=")
    text = _core._compare(
        _as_model(a),
        _as_model(b) if b is not None else None,
        os.fspath(inputs) if inputs is not None else "",
        os.fspath(reference) if reference is not None else "",
        backend or "",
        _shapes(input_shapes),
        seed,
        batch,
        outputs_only,
        fp16_tolerance,
        _label(a, "<model a>"),
        _label(b, "<model b>") if b is not None else (backend or os.fspath(reference)),
    )
    return json.loads(text)


def bisect(
    model: Any,
    pipeline: Union[str, Sequence[str]],
    *,
    inputs: Union[str, os.PathLike, None] = None,
    input_shapes: Union[dict, None] = None,
    seed: int = 0,
    widen: bool = True,
) -> dict:
    """Which step of `pipeline` changes what `model` computes? `onnxsurgeon bisect --json`
    as a dict, plus "reproducer": a Model of the step's region as it was before the step
    (None when none could be cut), on which the pass shows the difference when
    "reproduces" is true.

    Keys: "differs" (the whole pipeline's outputs are off tolerance), "pass" and
    "pass_index" (the first pass that makes them so), "steps", "step" (the first step,
    1-based, after which they are), "rule", "root", "nodes" (what that step rewrote),
    "comparison", "log". Rules registered with register_rules are stepped like built-in
    ones. `widen=False` judges approximating passes (rewrite-gelu, ...) by the plain table.
    """
    text, reproducer = _core._bisect(
        _as_model(model),
        _pipeline_text(pipeline),
        os.fspath(inputs) if inputs is not None else "",
        _shapes(input_shapes),
        seed,
        widen,
    )
    result = json.loads(text)
    result["reproducer"] = reproducer
    return result


def _as_model(model: Any) -> Model:
    if isinstance(model, Model):
        return model
    if isinstance(model, (str, os.PathLike)):
        return load(model)
    if hasattr(model, "SerializeToString"):
        return Model.from_proto(model)
    raise TypeError(f"expected an onnxsurgeon.Model, onnx.ModelProto or path, not {type(model).__name__}")


def _pipeline_text(pipeline: Union[str, Sequence[str]]) -> str:
    if isinstance(pipeline, str):
        return pipeline
    items = list(pipeline)
    if not all(isinstance(p, str) for p in items):
        raise TypeError("a pipeline is a string or a list of pass strings")
    return ",".join(items)


def run(
    model: Any,
    pipeline: Union[str, Sequence[str]],
    output: Union[str, os.PathLike, None] = None,
    verify_each: bool = False,
    report: list | None = None,
) -> Any:
    """Runs a pass pipeline: "fix-layernorm,downgrade-opset=15", or a list of pass strings
    (["fix-layernorm", "downgrade-opset=15"]). Rule sets registered with
    onnxsurgeon.register_rules can be named like passes.

    - Model: rewritten in place and returned.
    - onnx.ModelProto (e.g. torch.onnx.export(..., dynamo=True).model_proto): a new
      ModelProto is returned; the one given is left as it was. The ONNXProgram itself is
      accepted too (its model_proto).
    - path: the file is read, never written: the rewritten Model is returned.
    With `output=` the result is also saved there (atomically) and its path returned: the
    only way a file is written. `output` naming the input (or any file it reads, however
    spelled) is refused before anything is written; to replace a model in place, ask for
    it explicitly: `m = run(path, ...); m.save(path, replace_source=True)`.
    If `report` is a list, per-pass reports (rule counts, histograms, time) are appended.
    """
    pipeline = _pipeline_text(pipeline)
    _core.check_pipeline(pipeline)  # fail on a bad pipeline before loading anything
    if isinstance(model, Model):
        m = model
        result: Any = model
    elif isinstance(model, (str, os.PathLike)):
        m = load(model)
        result = m
    elif hasattr(model, "SerializeToString") or hasattr(getattr(model, "model_proto", None), "SerializeToString"):
        # Deferred: a big weight no pass reads is copied once, into the result (_proto.py).
        m = _proto.from_proto(model if hasattr(model, "SerializeToString") else model.model_proto, defer=True)
        result = None  # converted back below, after the run
    else:
        raise TypeError(f"expected an onnxsurgeon.Model, onnx.ModelProto or path, not {type(model).__name__}")
    reports = m.run(pipeline, verify_each)
    if report is not None:
        report.extend(reports)
    if output is not None:
        out = os.fspath(output)
        m.save(out)
        return out
    return m.to_proto() if result is None else result
