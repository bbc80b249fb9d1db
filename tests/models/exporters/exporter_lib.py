"""What the non-torch corpus builders share: they run inside an exporter's own virtualenv
(scripts/exporter-venv.sh), which has that framework, its exporter, onnx and numpy, but
no torch.

A builder returns an Exported: the ONNX model its exporter wrote, the inputs, and the
outputs the framework itself computed on them (the ground truth a rewrite is compared
against). write() turns it into the same corpus files the torch builders produce
(tests/models/generate.py): NAME.onnx, NAME.inputs.npz, NAME.expected.npz, NAME.json,
and the stamp, last.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
from pathlib import Path
from typing import Any, Optional

import numpy as np
import onnx
from corpus_common import default_opset, derived_tags, histogram, write_input_sets


@dataclasses.dataclass
class InputSet:
    """Another set of inputs and the framework's outputs on them (see Exported.more_sets)."""

    label: str
    inputs: dict[str, np.ndarray]
    expected: list[np.ndarray]


@dataclasses.dataclass
class Exported:
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]  # by graph input name, in graph order
    expected: list[np.ndarray]  # the framework's outputs, in graph output order
    exporter: str  # "tf2onnx", "jax2onnx", "paddle2onnx"
    framework: str  # "tensorflow", "jax", "paddle": the package whose version is recorded
    modules: dict[str, int]  # kind counts: LayerNorm (0: nothing here may become one), GELU, ...
    opset: int  # the opset asked for
    tags: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    rtol: float = 1e-4
    atol: float = 1e-4
    # Input sets beyond the first (labelled `label`): every If branch must run, so a merged
    # decoder carries use_cache_branch False and True and two past lengths.
    more_sets: list[InputSet] = dataclasses.field(default_factory=list)
    label: str = "default"
    # False: onnx's full checker rejects the model as exported (kept as exported, and
    # recorded in the manifest: "checker_error"); the corpus must hold what users have.
    must_pass_checker: bool = True


def versions(*packages: str) -> dict[str, str]:
    found = {}
    for package in packages:
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = "missing"
    return found


def write(
    name: str,
    exported: Exported,
    out_dir: Path,
    stamp: str,
    description: str,
    seconds: float,
    extra: Optional[dict[str, Any]] = None,
) -> dict:
    """Checks the model and writes the corpus files; the stamp goes last, so a crash
    half-way leaves no stamp and the next run rebuilds the model."""
    model = exported.model
    stamp_path = out_dir / f"{name}.stamp"
    stamp_path.unlink(missing_ok=True)
    initializers = {t.name for t in model.graph.initializer}
    graph_inputs = [i.name for i in model.graph.input if i.name not in initializers]
    if graph_inputs != list(exported.inputs):
        raise RuntimeError(f"exported inputs {graph_inputs} differ from the given {list(exported.inputs)}")
    outputs = [o.name for o in model.graph.output]
    for one in [exported.expected, *(s.expected for s in exported.more_sets)]:
        if len(outputs) != len(one):
            raise RuntimeError(f"model has outputs {outputs} but the framework returned {len(one)} arrays")
    checker_error = None
    try:
        onnx.checker.check_model(model, full_check=True)
    except onnx.checker.ValidationError as exc:
        if exported.must_pass_checker:
            raise
        checker_error = str(exc).strip().splitlines()[0]
    tags = set(exported.tags) | derived_tags(model)
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, out_dir / f"{name}.onnx")
    sets = [(exported.label, exported.inputs, dict(zip(outputs, exported.expected)))]
    sets += [(s.label, s.inputs, dict(zip(outputs, s.expected))) for s in exported.more_sets]
    input_sets = write_input_sets(name, out_dir, sets)
    manifest = {
        "name": name,
        "description": description,
        "model": f"{name}.onnx",
        "exporter": exported.exporter,
        "opset": default_opset(model),
        "modules": dict(sorted({"LayerNorm": 0, **exported.modules}.items())),
        "inputs": f"{name}.inputs.npz",
        "expected_outputs": f"{name}.expected.npz",
        "input_names": graph_inputs,
        "input_sets": input_sets,
        "output_names": outputs,
        "tags": sorted(tags),
        "runnable": "custom-domain" not in tags,
        "rtol": exported.rtol,
        "atol": exported.atol,
        "node_count": len(model.graph.node),
        "op_histogram": histogram(model),
        "functions": [f"{f.domain}::{f.name}" for f in model.functions],
        "notes": exported.notes,
        **({"checker_error": checker_error} if checker_error else {}),
        "versions": versions(exported.framework, exported.exporter, "onnx", "numpy"),
        **({"requested_opset": exported.opset} if default_opset(model) != exported.opset else {}),
        **(extra or {}),
        "generation_seconds": round(seconds, 2),
    }
    (out_dir / f"{name}.json").write_text(json.dumps(manifest, indent=2) + "\n")
    stamp_path.write_text(stamp + "\n")
    return manifest
