"""Measured value ranges for convert-float16 (its `ranges=FILE` option).

convert-float16 bounds every value from the graph (constants exactly, activations through
the ops); a graph input's range is unknown unless measured. This module measures them:
it runs the model in onnxruntime on real inputs with every float value of the main graph
exposed as an output, and writes one line per value, "MIN MAX NAME". The pass is C++ and
does not run onnxruntime, so the measurement is a file the pass reads:

    python -m onnxsurgeon.calibrate model.onnx inputs.npz -o ranges.txt
    onnxsurgeon --pass 'convert-float16(ranges=ranges.txt)' model.onnx -o half.onnx

The pass doubles each measured range (headroom for inputs beyond the calibration set)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Iterable, Mapping, Union

import numpy as np
import onnx

Feeds = Mapping[str, np.ndarray]


def _float_values(model: onnx.ModelProto) -> list[str]:
    inferred = onnx.shape_inference.infer_shapes(model)
    graph = inferred.graph
    float_type = onnx.TensorProto.FLOAT
    seen = {i.name for i in graph.initializer}
    names = []
    typed = {v.name: v.type for v in list(graph.value_info) + list(graph.output) + list(graph.input)}
    candidates = [v.name for v in graph.input] + [o for n in graph.node for o in n.output if o]
    for name in candidates:
        t = typed.get(name)
        if name in seen or t is None or t.tensor_type.elem_type != float_type:
            continue
        seen.add(name)
        names.append(name)
    return names


def measure(model: Union[onnx.ModelProto, str, Path], inputs: Union[Feeds, Iterable[Feeds], str, Path]) -> dict:
    """{value name: (min, max)} over every input set, for the main graph's float values
    (finite elements only; a value that is all non-finite is left out)."""
    import onnxruntime as ort

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    if isinstance(inputs, (str, Path)):
        with np.load(str(inputs)) as data:
            inputs = [{k: data[k] for k in data.files}]
    elif isinstance(inputs, Mapping):
        inputs = [inputs]
    names = _float_values(model)
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    declared = {o.name for o in probe.graph.output}
    for name in names:
        if name not in declared:
            probe.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(probe.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = [o.name for o in session.get_outputs() if o.name in set(names)]
    ranges: dict[str, tuple[float, float]] = {}
    for feeds in inputs:
        for name, value in zip(wanted, session.run(wanted, dict(feeds))):
            finite = np.asarray(value, dtype=np.float64)
            finite = finite[np.isfinite(finite)]
            if finite.size == 0:
                continue
            lo, hi = float(finite.min()), float(finite.max())
            if name in ranges:
                lo, hi = min(lo, ranges[name][0]), max(hi, ranges[name][1])
            ranges[name] = (lo, hi)
    return ranges


def write_ranges(ranges: Mapping[str, tuple[float, float]], path: Union[str, Path]) -> None:
    lines = ["# MIN MAX NAME: measured by onnxsurgeon.calibrate, read by convert-float16(ranges=...)"]
    lines += [f"{lo!r} {hi!r} {name}" for name, (lo, hi) in ranges.items()]
    Path(path).write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onnxsurgeon.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("inputs", nargs="+", help=".npz files, one input set each (arrays named as the inputs)")
    parser.add_argument("-o", "--output", required=True, help="the ranges file to write")
    args = parser.parse_args(argv)
    sets = []
    for path in args.inputs:
        with np.load(path) as data:
            sets.append({k: data[k] for k in data.files})
    write_ranges(measure(args.model, sets), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
