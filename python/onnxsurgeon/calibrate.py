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
import itertools
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

# numpy, onnx and onnxruntime are imported where used: the CLI's --calibrate runs this file
# as a helper and reports a missing module instead of failing at import.
Feeds = Mapping[str, Any]


def _float_values(model) -> list[str]:
    import onnx

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


def _typed(graph) -> dict:
    return {v.name: v.type for v in list(graph.value_info) + list(graph.output) + list(graph.input)}


def _is_float(typed: dict, name: str) -> bool:
    import onnx

    t = typed.get(name)
    return t is not None and t.tensor_type.elem_type == onnx.TensorProto.FLOAT


def _body_values(body, names) -> list[tuple[str, str]]:
    """(name in body, original name) of the body's float values: its inputs, its nodes'
    outputs and, exposed through them, its own If/Loop bodies' values."""
    typed = _typed(body)
    own = [i.name for i in body.input] + [o for n in body.node for o in n.output if o]
    return [(v, v) for v in own if _is_float(typed, v)] + _expose_bodies(body, names)


def _expose_bodies(graph, names) -> list[tuple[str, str]]:
    """Makes the float values inside graph's If and Loop bodies outputs of those nodes: an
    If gets them from the branch that makes them (the other branch gives an empty tensor),
    a Loop as scan outputs (one per iteration, stacked). Returns (output name in graph,
    original name) for each. `names` makes the new names unique."""
    from onnx import TensorProto, helper

    exposed = []
    for node in graph.node:
        bodies = {a.name: a.g for a in node.attribute if a.type == a.GRAPH}
        if node.op_type == "If" and node.domain in ("", "ai.onnx"):
            branches = [bodies["then_branch"], bodies["else_branch"]]
            for j, values in enumerate([_body_values(b, names) for b in branches]):
                for body_name, original in values:
                    for k, branch in enumerate(branches):
                        out = next(names)
                        if k == j:
                            branch.node.append(helper.make_node("Identity", [body_name], [out]))
                        else:
                            empty = helper.make_tensor(out, TensorProto.FLOAT, [0], [])
                            branch.node.append(helper.make_node("Constant", [], [out], value=empty))
                        branch.output.append(helper.make_empty_tensor_value_info(out))
                    node.output.append(next(names))
                    exposed.append((node.output[-1], original))
        elif node.op_type == "Loop" and node.domain in ("", "ai.onnx"):
            body = bodies["body"]
            for body_name, original in _body_values(body, names):
                out = next(names)
                body.node.append(helper.make_node("Identity", [body_name], [out]))
                body.output.append(helper.make_empty_tensor_value_info(out))
                node.output.append(next(names))
                exposed.append((node.output[-1], original))
    return exposed


def _run_ranges(model, names: list[str], exposed: list[tuple[str, str]], inputs) -> dict:
    """Runs the probe model (every wanted value an output) and folds each output's finite
    elements into {original name: (min, max)}."""
    import numpy as np
    import onnx
    import onnxruntime as ort

    declared = {o.name for o in model.graph.output}
    originals = {n: n for n in names} | dict(exposed)
    for name in originals:
        if name not in declared:
            model.graph.output.append(onnx.helper.make_empty_tensor_value_info(name))
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = [o.name for o in session.get_outputs() if o.name in originals]
    ranges: dict[str, tuple[float, float]] = {}
    for feeds in inputs:
        for name, value in zip(wanted, session.run(wanted, dict(feeds))):
            finite = np.asarray(value, dtype=np.float64)
            finite = finite[np.isfinite(finite)]
            if finite.size == 0:
                continue
            lo, hi = float(finite.min()), float(finite.max())
            key = originals[name]
            if key in ranges:
                lo, hi = min(lo, ranges[key][0]), max(hi, ranges[key][1])
            ranges[key] = (lo, hi)
    return ranges


def measure(model, inputs: Union[Feeds, Iterable[Feeds], str, Path]) -> dict:
    """{value name: (min, max)} over every input set, for the main graph's float values
    (finite elements only; a value that is all non-finite is left out). `model`: a
    ModelProto or a path."""
    import onnx

    if not isinstance(model, onnx.ModelProto):
        model = onnx.load(str(model))
    if isinstance(inputs, (str, Path)):
        inputs = _load_sets([str(inputs)])
    elif isinstance(inputs, Mapping):
        inputs = [inputs]
    names = _float_values(model)
    inputs = list(inputs)
    # Values inside If/Loop bodies are measured as extra outputs of those nodes; a model
    # onnxruntime cannot run that way (a Loop whose values change shape per iteration) is
    # measured in its main graph only.
    probe = onnx.shape_inference.infer_shapes(model)
    counter = (f"onnxsurgeon_calibrate_{i}" for i in itertools.count())
    exposed = _expose_bodies(probe.graph, counter)
    try:
        return _run_ranges(probe, names, exposed, inputs)
    except Exception:
        if not exposed:
            raise
    plain = onnx.ModelProto()
    plain.CopyFrom(model)
    return _run_ranges(plain, names, [], inputs)


def write_ranges(ranges: Mapping[str, tuple], path: Union[str, Path]) -> None:
    lines = ["# MIN MAX NAME: measured by onnxsurgeon.calibrate, read by convert-float16(ranges=...)"]
    lines += [f"{lo!r} {hi!r} {name}" for name, (lo, hi) in ranges.items()]
    Path(path).write_text("\n".join(lines) + "\n")


def _load_sets(paths) -> list[dict]:
    import numpy as np

    sets = []
    for path in paths:
        with np.load(path, allow_pickle=False) as data:
            sets.append({k: data[k] for k in data.files})
    return sets


def helper_main(config_path: str, result_path: str) -> None:
    """The CLI's --calibrate (core/verify/calibrate.cc): config {"model", "inputs": [npz]};
    writes {"ranges": [[name, min, max]...]}, {"missing": module} or {"error": text}."""

    def write(obj):
        with open(result_path, "w") as f:
            json.dump(obj, f)

    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        write({"missing": e.name or str(e)})
        return
    with open(config_path) as f:
        config = json.load(f)
    try:
        ranges = measure(config["model"], _load_sets(config["inputs"]))
        write({"ranges": [[name, lo, hi] for name, (lo, hi) in ranges.items()]})
    except Exception as e:  # report, don't trace
        write({"error": f"{type(e).__name__}: {e}"})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m onnxsurgeon.calibrate", description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("inputs", nargs="+", help=".npz files, one input set each (arrays named as the inputs)")
    parser.add_argument("-o", "--output", required=True, help="the ranges file to write")
    args = parser.parse_args(argv)
    write_ranges(measure(args.model, _load_sets(args.inputs)), args.output)
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1].endswith(".config.json"):
        helper_main(sys.argv[1], sys.argv[2])
    else:
        raise SystemExit(main())
