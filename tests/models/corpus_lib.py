"""Export machinery shared by the corpus builders (corpus_*.py).

A builder returns a Spec: a torch module, example inputs and how to export it.  produce()
turns a Spec into the corpus files: the ONNX model, the inputs and the torch outputs
(the ground truth every later rewrite is compared against) and the JSON manifest.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import re
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any, Callable, ContextManager, Optional

import numpy as np
import onnx
import torch
from corpus_common import _all_nodes, _walk, default_opset, derived_tags, histogram  # noqa: F401

TORCHSCRIPT = "torchscript"
DYNAMO = "dynamo"

# torch module class name -> kind recorded in the manifest's "modules" counts.  Counting
# by class name covers transformers' own classes without importing transformers here.
_KIND_BY_CLASS = {
    "LayerNorm": "LayerNorm",
    "T5LayerNorm": "RMSNorm",
    "LlamaRMSNorm": "RMSNorm",
    "RMSNorm": "RMSNorm",
    "GELU": "GELU",
    "GELUActivation": "GELU",
    "NewGELUActivation": "GELU",
    "GELUTanh": "GELU",
    "SiLU": "SiLU",
    "SiLUActivation": "SiLU",
    "ReLU": "ReLU",
    "LeakyReLU": "LeakyReLU",
    "Linear": "Linear",
    "Conv1D": "Linear",  # transformers' GPT-2 Conv1D is a transposed Linear
    "Conv1d": "Conv",
    "Conv2d": "Conv",
    "ConvTranspose1d": "ConvTranspose",
    "LSTM": "LSTM",
    "InstanceNorm1d": "InstanceNorm",
    "BatchNorm2d": "BatchNorm",
    "Embedding": "Embedding",
}


@dataclasses.dataclass
class Spec:
    """How to build and export one corpus model.

    modules: explicit kind counts; by default they are counted from `count_from` (or
    `module`) with count_modules().  context: a context manager factory entered around
    the TorchScript export (custom symbolics, tracing workarounds).  edit: a post-export
    rewrite with the onnx API, recorded as "<exporter>+edit" with edit_note.
    """

    module: torch.nn.Module
    args: tuple
    input_names: list[str]
    output_names: list[str]
    exporter: str
    opset: int
    tags: list[str] = dataclasses.field(default_factory=list)
    dynamic_axes: Optional[dict[str, dict[int, str]]] = None
    export_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)  # TorchScript only
    dynamo_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)  # dynamo only
    context: Optional[Callable[[], ContextManager]] = None
    edit: Optional[Callable[[onnx.ModelProto], onnx.ModelProto]] = None
    edit_note: str = ""
    runnable: bool = True
    rtol: float = 1e-4
    atol: float = 1e-4
    modules: Optional[dict[str, int]] = None
    count_from: Optional[torch.nn.Module] = None
    notes: list[str] = dataclasses.field(default_factory=list)
    randomize: bool = True  # see randomize_parameters()
    external_data: bool = False  # also save <name>_external.onnx + .onnx.data


def count_modules(module: torch.nn.Module) -> dict[str, int]:
    """Counts module kinds (see _KIND_BY_CLASS).

    Hand-written modules declare `corpus_kind` (one of that kind) and/or `corpus_counts`
    (a dict of extra counts, e.g. a functional layer_norm call inside a block).
    "LayerNorm" is always present so tests can rely on it, 0 meaning "nothing here may
    become a LayerNormalization".
    """
    counts: Counter = Counter({"LayerNorm": 0})
    for sub in module.modules():
        kind = getattr(type(sub), "corpus_kind", None)
        if kind is None:
            kind = _KIND_BY_CLASS.get(getattr(sub, "original_name", type(sub).__name__))
        if kind:
            counts[kind] += 1
        counts.update(getattr(type(sub), "corpus_counts", {}))
    return dict(sorted(counts.items()))


@torch.no_grad()
def randomize_parameters(module: torch.nn.Module) -> None:
    """Gives every parameter random, O(1)-scale values.

    Default initializations are too kind to an equivalence oracle: LayerNorm weight=1
    and bias=0 (a fuser that drops the affine part would pass), transformers' zero
    biases and std=0.02 weights (near-uniform attention hides a broken softmax or
    mask).  Norm weights become 1 + 0.2*N(0,1), biases and other vectors 0.2*N(0,1),
    matrices N(0, 1/fan_in); BatchNorm running statistics are randomized too.
    """
    for sub in module.modules():
        is_norm = "Norm" in getattr(sub, "original_name", type(sub).__name__)
        for name, param in sub.named_parameters(recurse=False):
            noise = torch.randn(param.shape)
            if is_norm and name == "weight":
                value = 1.0 + 0.2 * noise
            elif param.dim() <= 1:
                value = 0.2 * noise
            else:
                value = noise / max(1, param[0].numel()) ** 0.5
            param.copy_(value.to(param.dtype))
        for name, buffer in sub.named_buffers(recurse=False):
            if name == "running_mean":
                buffer.copy_(0.2 * torch.randn(buffer.shape))
            elif name == "running_var":
                buffer.copy_(0.5 + torch.rand(buffer.shape))


def quiet_exporters() -> None:
    """Silences exporter chatter (deprecation warnings, torchvision notices)."""
    warnings.filterwarnings("ignore")
    for name in ("torch.onnx", "torch.export", "torch._dynamo", "onnxscript"):
        logging.getLogger(name).setLevel(logging.ERROR)


# -------------------------------------------------------------------------- export


def _flatten(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    raise TypeError(f"unsupported module output type {type(value).__name__}")


def _to_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, bool):
        return np.array(value)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)  # python ints become int64 graph inputs
    if isinstance(value, float):
        return np.array(value, dtype=np.float32)
    raise TypeError(f"unsupported example input type {type(value).__name__}")


def _export_torchscript(spec: Spec, opset: int) -> onnx.ModelProto:
    buffer = io.BytesIO()
    context = spec.context() if spec.context else contextlib.nullcontext()
    with context:
        torch.onnx.export(
            spec.module,
            spec.args,
            buffer,
            dynamo=False,
            opset_version=opset,
            input_names=spec.input_names,
            output_names=spec.output_names,
            dynamic_axes=spec.dynamic_axes,
            **spec.export_kwargs,
        )
    return onnx.load_from_string(buffer.getvalue())


def _export_dynamo(spec: Spec, opset: int) -> onnx.ModelProto:
    dynamic_shapes = None
    if spec.dynamic_axes:
        dims: dict[str, Any] = {}
        dynamic_shapes = tuple(
            {axis: dims.setdefault(sym, torch.export.Dim(sym)) for axis, sym in spec.dynamic_axes.get(name, {}).items()}
            or None
            for name in spec.input_names
        )
    program = torch.onnx.export(
        spec.module,
        spec.args,
        dynamo=True,
        opset_version=opset,
        input_names=spec.input_names,
        output_names=spec.output_names,
        dynamic_shapes=dynamic_shapes,
        verbose=False,
        **spec.dynamo_kwargs,
    )
    return program.model_proto


def _summarize_error(exc: BaseException) -> str:
    """'Type: first line' of the exception and of its root cause, without colour codes
    (the exporters wrap the real cause in a generic 'Failed to export' error)."""

    def line(e: BaseException) -> str:
        text = re.sub(r"\x1b\[[0-9;]*m", "", str(e)).strip()
        return f"{type(e).__name__}: {(text.splitlines() or [''])[0][:300]}"

    root = exc
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    return line(exc) if root is exc else f"{line(exc)} <- {line(root)}"


def _apply_output_names(model: onnx.ModelProto, names: list[str]) -> dict[str, str]:
    """Renames graph outputs to `names` where the exporter did not.

    The TorchScript exporter drops output_names when a module is exported as a local
    function, and then picks a counter-based name that changes from run to run.
    """
    renamed = {}
    for output, wanted in zip(model.graph.output, names):
        if output.name != wanted:
            renamed[output.name] = wanted
            output.name = wanted
    if renamed:
        for node in _walk(model.graph.node):
            for i, name in enumerate(node.input):
                node.input[i] = renamed.get(name, name)
            for i, name in enumerate(node.output):
                node.output[i] = renamed.get(name, name)
    return renamed


@dataclasses.dataclass
class Produced:
    manifest: dict
    seconds: float


def produce(name: str, spec: Spec, out_dir: Path, stamp: str, description: str = "") -> Produced:
    """Exports `spec` and writes <name>.onnx/.inputs.npz/.expected.npz/.json, then the stamp.

    The stamp is written last: a crash half-way leaves no stamp, so the next run
    regenerates the model instead of trusting partial files.
    """
    start = time.perf_counter()
    stamp_path = out_dir / f"{name}.stamp"
    stamp_path.unlink(missing_ok=True)

    spec.module.eval()
    if spec.randomize:
        randomize_parameters(spec.module)
    with torch.no_grad():
        expected = [t.detach().cpu().numpy() for t in _flatten(spec.module(*spec.args))]

    manifest_extra: dict[str, Any] = {}
    exporter = spec.exporter
    if exporter == DYNAMO:
        try:
            model = _export_dynamo(spec, spec.opset)
        except Exception as exc:  # any exporter failure: record it, fall back
            manifest_extra["requested_exporter"] = DYNAMO
            manifest_extra["dynamo_error"] = _summarize_error(exc)
            exporter = TORCHSCRIPT
            model = _export_torchscript(spec, spec.opset)
    elif exporter == TORCHSCRIPT:
        model = _export_torchscript(spec, spec.opset)
    else:
        raise ValueError(f"unknown exporter {exporter!r}")

    exporter_label = exporter
    edits = []
    if spec.edit is not None:
        model = spec.edit(model)
        edits.append(spec.edit_note)
    renamed = _apply_output_names(model, spec.output_names)
    if renamed:
        edits.append(f"renamed graph outputs {renamed} (the exporter ignored output_names)")
    if edits:
        exporter_label += "+edit"
        manifest_extra["edit"] = "; ".join(edits)

    graph_inputs = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    if graph_inputs != list(spec.input_names):
        raise RuntimeError(f"exported inputs {graph_inputs} differ from the declared {spec.input_names}")
    outputs = [o.name for o in model.graph.output]
    if len(outputs) != len(expected):
        raise RuntimeError(f"model has outputs {outputs} but torch returned {len(expected)} tensors")
    onnx.checker.check_model(model, full_check=True)

    opset = default_opset(model)
    if opset != spec.opset:
        manifest_extra["requested_opset"] = spec.opset
    tags = set(spec.tags) | derived_tags(model)
    runnable = spec.runnable and "custom-domain" not in tags

    out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out_dir / f"{name}.onnx")
    np.savez(out_dir / f"{name}.inputs.npz", **{n: _to_numpy(a) for n, a in zip(graph_inputs, spec.args)})
    np.savez(out_dir / f"{name}.expected.npz", **dict(zip(outputs, expected)))
    if spec.external_data:
        # Tensors go to <name>_external.onnx.data next to the model; small ones stay inline.
        # onnx.save rewrites the tensors it externalizes in place: save a copy.
        external = onnx.ModelProto()
        external.CopyFrom(model)
        onnx.save(
            external,
            out_dir / f"{name}_external.onnx",
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=f"{name}_external.onnx.data",
            size_threshold=1024,
        )
        manifest_extra["external_data_model"] = f"{name}_external.onnx"

    manifest = {
        "name": name,
        "description": description,
        "model": f"{name}.onnx",
        "exporter": exporter_label,
        "opset": opset,
        "modules": (
            dict(sorted({"LayerNorm": 0, **spec.modules}.items()))
            if spec.modules is not None
            else count_modules(spec.count_from or spec.module)
        ),
        "inputs": f"{name}.inputs.npz",
        "expected_outputs": f"{name}.expected.npz",
        "input_names": graph_inputs,
        "output_names": outputs,
        "tags": sorted(tags),
        "runnable": runnable,
        "rtol": spec.rtol,
        "atol": spec.atol,
        "node_count": len(model.graph.node),
        "op_histogram": histogram(model),
        "functions": [f"{f.domain}::{f.name}" for f in model.functions],
        "notes": spec.notes,
        **manifest_extra,
    }
    seconds = time.perf_counter() - start
    manifest["generation_seconds"] = round(seconds, 2)
    (out_dir / f"{name}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    stamp_path.write_text(stamp + "\n")
    return Produced(manifest, seconds)
