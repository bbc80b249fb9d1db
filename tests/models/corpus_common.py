"""Framework-free helpers shared by every corpus builder: the torch one (corpus_lib.py)
and the exporter stacks that run in their own virtualenvs (exporters/), which have onnx
and numpy but no torch."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx

# Standard domains onnxruntime implements; a node in any other domain that is not a
# model-local function makes the model unrunnable without a custom-op library.
_STANDARD_DOMAINS = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft", "ai.onnx.preview.training"}


def default_opset(model: onnx.ModelProto) -> int:
    """The ai.onnx opset; 0 for a model that imports only other domains (ai.onnx.ml)."""
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def write_input_sets(name: str, out_dir: Path, sets: list[tuple[str, dict, dict]]) -> list[dict[str, str]]:
    """Writes each (label, inputs, expected outputs) set and returns the manifest's
    "input_sets" list. The first set is NAME.inputs.npz / NAME.expected.npz (what every
    corpus reader has always read); the others NAME.inputs.LABEL.npz and
    NAME.expected.LABEL.npz. Several sets exist so that every branch of an If runs: a
    merged decoder with use_cache_branch False and True, a VAD at both sample rates."""
    entries = []
    for number, (label, inputs, expected) in enumerate(sets):
        suffix = "" if number == 0 else f".{label}"
        entry = {
            "label": label,
            "inputs": f"{name}.inputs{suffix}.npz",
            "expected_outputs": f"{name}.expected{suffix}.npz",
        }
        np.savez(out_dir / entry["inputs"], **inputs)
        np.savez(out_dir / entry["expected_outputs"], **expected)
        entries.append(entry)
    if len({e["label"] for e in entries}) != len(entries):
        raise ValueError(f"{name}: input set labels repeat: {[e['label'] for e in entries]}")
    return entries


def _walk(nodes):
    """Nodes and, recursively, the nodes of their subgraphs (If/Loop/Scan bodies)."""
    for node in nodes:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _walk(attr.g.node)
            for graph in attr.graphs:
                yield from _walk(graph.node)


def _has_subgraph(nodes) -> bool:
    return any(
        attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
        for node in nodes
        for attr in node.attribute
    )


def _all_nodes(model: onnx.ModelProto):
    yield from _walk(model.graph.node)
    for function in model.functions:
        yield from _walk(function.node)


def histogram(model: onnx.ModelProto) -> dict[str, int]:
    """Main graph + subgraphs (not function bodies), keyed like testing.op_histogram."""
    counts = Counter(
        n.op_type if n.domain in ("", "ai.onnx") else f"{n.domain}::{n.op_type}" for n in _walk(model.graph.node)
    )
    return dict(sorted(counts.items()))


def derived_tags(model: onnx.ModelProto) -> set[str]:
    """Structural tags read off the exported graph, so they cannot drift from it."""
    nodes = list(_all_nodes(model))
    local_domains = {f.domain for f in model.functions}
    ops = {n.op_type for n in nodes if n.domain in ("", "ai.onnx")}
    tags = set()
    if _has_subgraph(nodes):
        tags.add("subgraph")
    if any(n.domain not in _STANDARD_DOMAINS and n.domain not in local_domains for n in nodes):
        tags.add("custom-domain")
    if model.functions:
        tags.add("local-function")
    fp16 = onnx.TensorProto.FLOAT16
    if (
        any(i.data_type == fp16 for i in model.graph.initializer)
        or any(v.type.tensor_type.elem_type == fp16 for v in list(model.graph.input) + list(model.graph.output))
        or any(n.op_type == "Cast" and any(a.name == "to" and a.i == fp16 for a in n.attribute) for n in nodes)
    ):
        tags.add("fp16")
    if any(d.HasField("dim_param") for v in model.graph.input for d in v.type.tensor_type.shape.dim):
        tags.add("dynamic-shape")
    for op, tag in (
        ("ScatterND", "scatternd"),
        ("Identity", "identity"),
        ("Cast", "cast"),
        ("If", "if"),
        ("Loop", "loop"),
    ):
        if op in ops:
            tags.add(tag)
    return tags
