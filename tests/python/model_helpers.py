"""Helpers the Python tests share for reading a model back: its outputs under onnxruntime and
its op types. One definition each, imported by the tests (`import model_helpers as mh`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort


def ort_outputs(model: Path | str | onnx.ModelProto, feeds: dict, *, optimize: bool = True) -> list[np.ndarray]:
    """The model's outputs on onnxruntime's CPU provider, fed the entries of `feeds` it takes as
    inputs (the others are ignored). `optimize=False` turns onnxruntime's graph optimizations off,
    so what runs is the graph as written."""
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    source = model.SerializeToString() if isinstance(model, onnx.ModelProto) else str(model)
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    return session.run(None, {k: v for k, v in feeds.items() if k in names})


def op_types(model: Path | str | onnx.ModelProto) -> list[str]:
    """Every node's op type, in order: the main graph, its subgraphs (If branches, Loop and
    Scan bodies), then the model's local functions."""
    m = model if isinstance(model, onnx.ModelProto) else onnx.load(str(model))
    found: list[str] = []

    def walk(nodes) -> None:
        for n in nodes:
            found.append(n.op_type)
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g.node)
                elif a.type == onnx.AttributeProto.GRAPHS:
                    for g in a.graphs:
                        walk(g.node)

    walk(m.graph.node)
    for f in m.functions:
        walk(f.node)
    return found
