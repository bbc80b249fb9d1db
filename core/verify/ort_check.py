"""onnxsurgeon --check: runs the original and the rewritten model in onnxruntime on the same
random inputs and compares every output. Embedded in the onnxsurgeon binary (numeric_check.cc)
and run as `python3 -c <this> CONFIG.json RESULT.json`; needs only onnxruntime and numpy.

CONFIG: {"original", "result", "runs", "seed", "input_shapes": {name: [dims]},
         "default_dim", "extra_atol", "extra_rtol", "fp16_tolerance"}
RESULT: {"ok", "onnxruntime", "defaulted_dims", "outputs": [...], "error"} or
        {"missing": "onnxruntime"} when a module is not importable.
"""

import json
import sys


def _tolerance_module():
    """The shared tolerance table (python/onnxsurgeon/tolerance.py): written beside this
    script by the binary, or read from the source tree when a test loads this file. Loaded
    by path: `python -I` leaves the script's folder off sys.path."""
    import importlib.util
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    for path in (
        os.path.join(here, "onnxsurgeon_tolerance.py"),
        os.path.join(here, "..", "..", "python", "onnxsurgeon", "tolerance.py"),
    ):
        if os.path.exists(path):
            spec = importlib.util.spec_from_file_location("onnxsurgeon_tolerance", path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            return module
    raise ImportError("onnxsurgeon_tolerance.py is not beside the helper")


tolerance = _tolerance_module()


def main(config_path, result_path):
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError as e:
        write(result_path, {"missing": e.name or str(e)})
        return
    with open(config_path) as f:
        config = json.load(f)
    try:
        write(result_path, check(np, ort, config))
    except RuntimeError as e:  # ours: a model onnxruntime refuses or cannot run
        write(result_path, {"ok": False, "onnxruntime": ort.__version__, "error": str(e)})
    except Exception as e:  # anything else: report, don't trace
        write(result_path, {"ok": False, "onnxruntime": ort.__version__, "error": f"{type(e).__name__}: {e}"})


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def session(ort, path, label):
    options = ort.SessionOptions()
    # Compare what the two models compute, not what onnxruntime's own rewrites make of them.
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise RuntimeError(f"onnxruntime cannot load the {label} model: {str(e).strip().splitlines()[0]}") from None


NUMPY_TYPES = {
    "tensor(float)": "float32",
    "tensor(double)": "float64",
    "tensor(float16)": "float16",
    "tensor(int8)": "int8",
    "tensor(int16)": "int16",
    "tensor(int32)": "int32",
    "tensor(int64)": "int64",
    "tensor(uint8)": "uint8",
    "tensor(uint16)": "uint16",
    "tensor(uint32)": "uint32",
    "tensor(uint64)": "uint64",
    "tensor(bool)": "bool",
}


def feeds_for(np, sess, config, rng, defaulted):
    feeds = {}
    for i in sess.get_inputs():
        given = config["input_shapes"].get(i.name)
        shape = []
        for k, d in enumerate(i.shape):
            if given is not None and k < len(given) and given[k] >= 0:
                shape.append(given[k])
            elif isinstance(d, int) and d >= 0:
                shape.append(d)
            else:
                shape.append(config["default_dim"])
                defaulted.add(f"{i.name}[{k}]" + (f" ({d})" if isinstance(d, str) else ""))
        value = random_value(np, rng, i.type, shape)
        if value is None:
            raise RuntimeError(f"input '{i.name}' has type {i.type}: --check cannot make random data for it")
        feeds[i.name] = value
    return feeds


# Strings --check feeds: short tokens, some of them what classical-ML encoders' vocabularies
# hold (digits, single letters), so that lookups hit as well as miss.
STRINGS = ["a", "b", "c", "0", "1", "2", "x y", ""]


def split_type(text):
    """'map(int64,tensor(float))' -> ('map', ['int64', 'tensor(float)']): the top-level
    constructor and its comma-separated arguments."""
    head, _, rest = text.partition("(")
    args, depth, start = [], 0, 0
    body = rest[:-1]
    for k, ch in enumerate(body):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            args.append(body[start:k].strip())
            start = k + 1
    args.append(body[start:].strip())
    return head, args


def random_value(np, rng, type_text, shape):
    """Random data of an onnxruntime input type: tensors (numbers, bool, strings), sequences
    (two elements) and maps (four keys, scalar values); None for a type it cannot make."""
    head, args = split_type(type_text)
    if head == "tensor":
        if args == ["string"]:
            return rng.choice(np.array(STRINGS, dtype=object), size=shape)
        dtype = NUMPY_TYPES.get(type_text)
        if dtype is None:
            return None
        if dtype.startswith("float"):
            return rng.standard_normal(shape).astype(dtype)
        if dtype == "bool":
            return rng.integers(0, 2, size=shape).astype(bool)
        # small, so that they are valid token ids, indices and loop counts
        return rng.integers(0, 2, size=shape).astype(dtype)
    if head == "seq" and len(args) == 1:
        items = [random_value(np, rng, args[0], shape) for _ in range(2)]
        return None if any(x is None for x in items) else items
    if head == "map" and len(args) == 2:
        keys = STRINGS[:4] if args[0] == "string" else list(range(4))
        value_head, value_args = split_type(args[1]) if "(" in args[1] else (args[1], [])
        if value_head == "tensor" and value_args == ["string"]:
            return {k: str(rng.choice(STRINGS)) for k in keys}
        if value_head == "tensor" and "float" in value_args[0] or value_head in ("float", "double"):
            return {k: float(rng.standard_normal()) for k in keys}
        return {k: int(rng.integers(0, 2)) for k in keys}
    return None


def flatten(np, value, path="out"):
    """A sequence or map output as (structure, [(path, array)]): the structure (lengths,
    keys, leaf dtypes and shapes) must match exactly, the leaves within tolerance."""
    if isinstance(value, dict):
        keys = sorted(value, key=repr)
        leaves, parts = [], [f"map{keys!r}"]
        for k in keys:
            sub, got = flatten(np, value[k], f"{path}[{k!r}]")
            parts.append(sub)
            leaves += got
        return "{" + ",".join(parts) + "}", leaves
    if isinstance(value, (list, tuple)):
        leaves, parts = [], []
        for k, item in enumerate(value):
            sub, got = flatten(np, item, f"{path}[{k}]")
            parts.append(sub)
            leaves += got
        return f"[{len(value)}:" + ",".join(parts) + "]", leaves
    array = np.asarray(value)
    return f"{array.dtype.kind}{list(array.shape)}", [(path, array)]


def compare(np, name, a, b, out_type, config):
    """a: original, b: result. Returns a row for the report."""
    atol, rtol = tolerance.tolerance_for(
        out_type, config.get("fp16_tolerance", False), (config["extra_atol"], config["extra_rtol"])
    )
    row = {
        "name": name,
        "type": out_type,
        "shape": list(np.shape(a)),
        "atol": atol,
        "rtol": rtol,
        "max_abs": 0.0,
        "max_rel": 0.0,
        "ok": True,
        "problem": "",
    }
    if isinstance(a, (list, tuple, dict)) or isinstance(b, (list, tuple, dict)):
        return compare_structured(np, row, a, b, config)
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype:  # an output's element type is the model's interface
        return {**row, "ok": False, "problem": f"element type changed: {a.dtype} -> {b.dtype}"}
    got = tolerance.compare_arrays(np, b, a, atol, rtol)
    return {
        **row,
        "max_abs": got["max_abs"],
        "max_rel": got["max_rel"],
        "ok": not got["problem"],
        "problem": got["problem"],
    }


def compare_structured(np, row, a, b, config):
    """A sequence or map output (ZipMap's seq(map(int64, float))): the same structure, and
    every leaf within its element type's tolerance."""
    shape_a, leaves_a = flatten(np, a)
    shape_b, leaves_b = flatten(np, b)
    if shape_a != shape_b:
        return {**row, "ok": False, "problem": "sequence/map structure changed (lengths, keys or element types)"}
    for (path, x), (_, y) in zip(leaves_a, leaves_b):
        # Map values come back as Python floats (float64): judge them as the declared type.
        declared = "float32" if x.dtype.kind == "f" and "tensor(float)" in (row["type"] or "") else str(x.dtype)
        atol, rtol = tolerance.tolerance_for(
            declared, config.get("fp16_tolerance", False), (config["extra_atol"], config["extra_rtol"])
        )
        got = tolerance.compare_arrays(np, y, x, atol, rtol)
        row["atol"], row["rtol"] = max(row["atol"], atol), max(row["rtol"], rtol)
        row["max_abs"] = max(row["max_abs"], got["max_abs"])
        row["max_rel"] = max(row["max_rel"], got["max_rel"])
        if got["problem"]:
            return {**row, "ok": False, "problem": f"{path}: {got['problem']}"}
    return row


def check(np, ort, config):
    original = session(ort, config["original"], "original")
    result = session(ort, config["result"], "rewritten")
    in_a = [i.name for i in original.get_inputs()]
    in_b = [i.name for i in result.get_inputs()]
    if sorted(in_a) != sorted(in_b):
        raise RuntimeError(f"the inputs changed: {in_a} -> {in_b}")
    outs_a, outs_b = original.get_outputs(), result.get_outputs()
    if [o.name for o in outs_a] != [o.name for o in outs_b]:
        raise RuntimeError(f"the outputs changed: {[o.name for o in outs_a]} -> {[o.name for o in outs_b]}")
    rng = np.random.default_rng(config["seed"])
    defaulted = set()
    rows = {}
    for _ in range(config["runs"]):
        # The rewritten model may have static input shapes (--input-shapes): take them from it.
        feeds = feeds_for(np, result, config, rng, defaulted)
        try:
            got_a = original.run(None, feeds)
        except Exception as e:
            raise RuntimeError(
                f"the original model fails on random inputs {shapes(feeds)}: "
                f"{str(e).strip().splitlines()[0]} (give --input-shapes)"
            ) from None
        try:
            got_b = result.run(None, feeds)
        except Exception as e:
            raise RuntimeError(
                f"the rewritten model fails where the original runs, on inputs {shapes(feeds)}: "
                f"{str(e).strip().splitlines()[0]}"
            ) from None
        for meta_a, meta_b, a, b in zip(outs_a, outs_b, got_a, got_b):
            out_type = meta_a.type if meta_a.type == meta_b.type else None
            row = compare(np, meta_a.name, a, b, meta_a.type, config)
            if out_type is None:
                row.update(ok=False, problem=f"declared type changed: {meta_a.type} -> {meta_b.type}")
            best = rows.get(meta_a.name)
            if best is None:
                rows[meta_a.name] = row
            else:  # keep the worst figures over the runs, and the first failure
                best["max_abs"] = max(best["max_abs"], row["max_abs"])
                best["max_rel"] = max(best["max_rel"], row["max_rel"])
                if best["ok"] and not row["ok"]:
                    best.update(ok=False, problem=row["problem"])
    outputs = [rows[o.name] for o in outs_a]
    return {
        "ok": all(r["ok"] for r in outputs),
        "onnxruntime": ort.__version__,
        "runs": config["runs"],
        "defaulted_dims": sorted(defaulted),
        "outputs": outputs,
        "error": "",
    }


def shapes(feeds):
    return ", ".join(f"{k}{list(v.shape)}" for k, v in feeds.items())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
