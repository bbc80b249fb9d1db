"""onnxsurgeon compare / bisect: runs models cut into segments (core/verify/segments.h) on the
same inputs, with the tensors to compare exposed as segment outputs, and compares matched
tensors as they appear. Embedded in the binary (compare.cc) and run as
`python compare_run.py CONFIG.json RESULT.json`; needs numpy and the side's runtime
(onnxruntime, or openvino); Python 3.9+.

Memory stays bounded: each side runs one segment at a time, keeping only the values later
segments read (released after their last reader) and the exposed tensors whose partner on
the other side has not appeared yet. Every node runs once.

CONFIG: {"mode": "compare" | "dump" | "inputs" | "probe",
         "inputs": {"file", "save", "specs": [{"name", "dtype", "dims"}], "input_shapes",
                    "default_dim", "seed"},
         "sides": [side, side],   side: {"label", "kind": "onnxruntime" | "openvino" | "npz" | "dump",
                                          "segments": [{"path", "inputs", "outputs", "exposed", "release"}],
                                          "file" (npz) | "dir" (dump)},
         "pairs": [{"a", "b"}], "fp16_tolerance", "extra_atol", "extra_rtol", "dump_dir",
         "probe": {"model", "python", "runner", "input_names", "outdir", "ref_dir", "tensors"}}
RESULT: {"runtime", "rows": [...], "defaulted_dims", "error"} or {"missing": "module"}.
"""

import importlib.util
import json
import os
import sys


def load_tolerance():
    """The shared tolerance table, written beside this script (loaded by path: `python -I`
    leaves the script's folder off sys.path), or from the source tree in tests."""
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


def main(config_path, result_path):
    with open(config_path) as f:
        config = json.load(f)
    try:
        import numpy as np
    except ImportError as e:
        return write(result_path, {"missing": e.name or str(e)})
    kinds = {s["kind"] for s in config.get("sides", [])}
    runtimes = []
    try:
        if "onnxruntime" in kinds:
            import onnxruntime as ort

            runtimes.append("onnxruntime " + ort.__version__)
        if "openvino" in kinds:
            from importlib.metadata import version

            import openvino

            runtimes.append("openvino " + version("openvino"))
            del openvino
    except ImportError as e:
        return write(result_path, {"missing": e.name or str(e)})
    try:
        result = run(np, config)
        result["runtime"] = ", ".join(runtimes)
        write(result_path, result)
    except RuntimeError as e:  # ours: a model a runtime refuses or cannot run
        write(result_path, {"runtime": ", ".join(runtimes), "error": str(e)})
    except Exception as e:  # anything else: report, don't trace
        write(result_path, {"runtime": ", ".join(runtimes), "error": f"{type(e).__name__}: {e}"})


def write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f)


def first_line(e):
    """The reason, without the temporary segment file's path onnxruntime puts before it."""
    import re

    lines = str(e).strip().splitlines()
    line = lines[0] if lines else type(e).__name__
    return re.sub(r"Load model from \S+ failed:\s*", "", line)


# ------------------------------------------------------------------------------- inputs

NUMPY_TYPES = {
    1: "float32",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    9: "bool",
    10: "float16",
    11: "float64",
    12: "uint32",
    13: "uint64",
}


def make_inputs(np, spec, defaulted):
    """The feeds: from the given npz (every model input must be there), else random as
    --check makes them (floats standard normal, integers in [0, 2), bools uniform)."""
    feeds = {}
    if spec.get("file"):
        with np.load(spec["file"], allow_pickle=False) as data:
            given = {k: data[k] for k in data.files}
        missing = [s["name"] for s in spec["specs"] if s["name"] not in given]
        if missing:
            raise RuntimeError(f"{spec['file']} has no array for input(s) {missing} (it has {sorted(given)})")
        for s in spec["specs"]:
            feeds[s["name"]] = given[s["name"]]
        return feeds
    rng = np.random.default_rng(spec.get("seed", 0))
    for s in spec["specs"]:
        fixed = spec.get("input_shapes", {}).get(s["name"])
        shape = []
        for k, d in enumerate(s["dims"]):
            if fixed is not None and k < len(fixed) and fixed[k] >= 0:
                shape.append(fixed[k])
            elif isinstance(d, int) and d >= 0:
                shape.append(d)
            else:
                shape.append(spec.get("default_dim", 2))
                defaulted.append(f"{s['name']}[{k}]" + (f" ({d})" if isinstance(d, str) and d else ""))
        dtype = NUMPY_TYPES.get(s["dtype"])
        if dtype is None:
            raise RuntimeError(f"input '{s['name']}' has element type {s['dtype']}: give its data with --inputs")
        if dtype.startswith("float"):
            feeds[s["name"]] = rng.standard_normal(shape).astype(dtype)
        elif dtype == "bool":
            feeds[s["name"]] = rng.integers(0, 2, size=shape).astype(bool)
        else:  # small, so that they are valid token ids, indices and loop counts
            feeds[s["name"]] = rng.integers(0, 2, size=shape).astype(dtype)
    return feeds


# -------------------------------------------------------------------------------- sides


class SegmentRunner:
    """One model run segment by segment; step() runs the next one and returns the exposed
    tensors it computed ({} when done)."""

    def __init__(self, np, side, feeds):
        self.np = np
        self.side = side
        self.label = side["label"]
        self.segments = side["segments"]
        self.next = 0
        self.env = dict(feeds)

    def done(self):
        return self.next >= len(self.segments)

    def step(self):
        seg = self.segments[self.next]
        self.next += 1
        feeds = {}
        for name in seg["inputs"]:
            if name not in self.env:
                raise RuntimeError(f"model {self.label}: segment {self.next} reads '{name}', which nothing computed")
            feeds[name] = self.env[name]
        try:
            values = self.run(seg, feeds)
        except RuntimeError:
            raise
        except Exception as e:
            raise RuntimeError(f"model {self.label} fails on the inputs ({describe(feeds)}): {first_line(e)}") from None
        exposed = {}
        for name, value in values.items():
            if name in seg["exposed"]:
                exposed[name] = value
            self.env[name] = value
        for name in seg["release"]:
            self.env.pop(name, None)
        return exposed

    def run(self, seg, feeds):
        raise NotImplementedError


class OrtRunner(SegmentRunner):
    def run(self, seg, feeds):
        import onnxruntime as ort

        options = ort.SessionOptions()
        # What the files compute, not what onnxruntime's own rewrites make of them; one
        # thread, so reductions run in the same order in both models.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        try:
            sess = ort.InferenceSession(seg["path"], options, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise RuntimeError(f"onnxruntime cannot load model {self.label}: {first_line(e)}") from None
        names = [o.name for o in sess.get_outputs()]
        wanted = {i.name for i in sess.get_inputs()}
        out = sess.run(names, {k: v for k, v in feeds.items() if k in wanted})
        return dict(zip(names, out))


class OpenVinoRunner(SegmentRunner):
    def run(self, seg, feeds):
        import openvino as ov

        core = ov.Core()
        try:
            model = core.read_model(seg["path"])
            # f32, so the comparison measures the model, not a bf16 CPU default.
            compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        except Exception as e:
            raise RuntimeError(f"OpenVINO cannot load model {self.label}: {first_line(e)}") from None
        feed = {}
        for port in compiled.inputs:
            names = [n for n in port.get_names() if n in feeds]
            if names:
                feed[names[0]] = feeds[names[0]]
        result = compiled(feed)
        values = {}
        for port, want in zip(compiled.outputs, seg["outputs"]):
            values[want if want in port.get_names() else port.get_any_name()] = self.np.asarray(result[port])
        return values


class StoredRunner:
    """Tensors computed elsewhere: a reference .npz (--reference) or a backend's dump."""

    def __init__(self, np, side):
        self.label = side["label"]
        self.np = np
        if side["kind"] == "npz":
            self.data = np.load(side["file"], allow_pickle=False)
            self.names = set(self.data.files)
        else:
            with open(os.path.join(side["dir"], "index.json")) as f:
                self.index = json.load(f)
            self.names = set(self.index)
        self.side = side
        self.given = False

    def done(self):
        return self.given

    def step(self):  # everything at once, read lazily by get()
        self.given = True
        return {}

    def get(self, name):
        if name not in self.names:
            return None
        if self.side["kind"] == "npz":
            return self.data[name]
        return self.np.load(os.path.join(self.side["dir"], self.index[name]), mmap_mode="r")


def make_runner(np, side, feeds):
    kind = side["kind"]
    if kind == "onnxruntime":
        return OrtRunner(np, side, feeds)
    if kind == "openvino":
        return OpenVinoRunner(np, side, feeds)
    return StoredRunner(np, side)


def describe(feeds):
    return ", ".join(f"{k}{list(v.shape)}" for k, v in feeds.items())


# ----------------------------------------------------------------------------- compare


def compare_pairs(np, tol, config, a, b):
    """Runs both sides in step, comparing each pair once both tensors exist. Pairs are in
    model A's topological order; a tensor computed before its partner waits for it."""
    pairs = config["pairs"]
    by_a, by_b = {}, {}
    for i, p in enumerate(pairs):
        by_a.setdefault(p["a"], []).append(i)
        by_b.setdefault(p["b"], []).append(i)
    got_a, got_b = {}, {}
    rows = [None] * len(pairs)
    fp16 = config.get("fp16_tolerance", False)
    extra = (config.get("extra_atol", 0.0), config.get("extra_rtol", 0.0))

    def take(runner, got, wanted):
        for name, value in runner.step().items():
            if name in wanted:
                got[name] = value

    def finish(i, va, vb):
        p = pairs[i]
        va, vb = np.asarray(va), np.asarray(vb)
        atol, rtol = tol.looser(va.dtype.name, vb.dtype.name, fp16=fp16, extra=extra)
        row = tol.compare_arrays(np, va, vb, atol, rtol)
        row.update(
            a=p["a"], b=p["b"], dtype=va.dtype.name, b_dtype=vb.dtype.name, shape=list(va.shape), atol=atol, rtol=rtol
        )
        row["share_off"] = row["off"] / row["size"] if row["size"] else (1.0 if row["off"] else 0.0)
        rows[i] = row

    for i, p in enumerate(pairs):
        while p["a"] not in got_a and not a.done():
            take(a, got_a, by_a)
        if isinstance(b, StoredRunner):
            vb = b.get(p["b"])
        else:
            while p["b"] not in got_b and not b.done():
                take(b, got_b, by_b)
            vb = got_b.get(p["b"])
        va = got_a.get(p["a"])
        if va is None or vb is None:
            side = "A" if va is None else "B"
            rows[i] = {"a": p["a"], "b": p["b"], "missing": side}
        else:
            finish(i, va, vb)
        # Drop what no later pair needs.
        if all(j <= i for j in by_a.get(p["a"], [])):
            got_a.pop(p["a"], None)
        if all(j <= i for j in by_b.get(p["b"], [])):
            got_b.pop(p["b"], None)
    while not a.done():  # the rest of A runs: a failure there is still a failure
        a.step()
    return rows


def dump_side(np, config, runner):
    """Runs one side and stores every exposed tensor as .npy in dump_dir, with an index:
    a backend in its own venv, compared afterwards by the main helper."""
    out = config["dump_dir"]
    index = {}
    while not runner.done():
        for name, value in runner.step().items():
            file = f"{len(index)}.npy"
            np.save(os.path.join(out, file), np.asarray(value))
            index[name] = file
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump(index, f)


def reference_layout(np, out, ref):
    """A backend's output in the reference's layout when only the layout differs: onnx2tf's
    channels-last outputs turned back to channels-first, or the same elements with unit dims
    added or dropped (as tests/backends/harness.py judges them)."""
    if out.shape == ref.shape:
        return out
    perm = {3: (0, 2, 1), 4: (0, 3, 1, 2), 5: (0, 4, 1, 2, 3)}.get(out.ndim)
    if perm and out.ndim == ref.ndim and out.transpose(perm).shape == ref.shape:
        return out.transpose(perm)
    if out.size == ref.size and [d for d in out.shape if d != 1] == [d for d in ref.shape if d != 1]:
        return out.reshape(ref.shape)
    return out


def probe(np, tol, config, feeds):
    """A backend that cannot expose intermediates runs a model cut at one tensor, through
    its runner (tests/backends/runners, the file protocol of _protocol.py) in its own venv;
    its outputs are compared with what onnxruntime computed for those tensors (ref_dir)."""
    import subprocess

    spec = config["probe"]
    inputs = os.path.join(spec["outdir"], "inputs.npz")
    os.makedirs(spec["outdir"], exist_ok=True)
    # The cut model's inputs, in its order (runners feed by position).
    np.savez(inputs, **{name: feeds[name] for name in spec["input_names"]})
    timeout = spec.get("timeout", 600)
    try:
        proc = subprocess.run(
            [spec["python"], spec["runner"], spec["model"], inputs, spec["outdir"]],
            cwd=spec["outdir"],  # backends leave files in their working folder (kmodel_info.txt, ...)
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"rows": [], "refused": f"the runner did not finish in {timeout} s"}
    result_path = os.path.join(spec["outdir"], "result.json")
    if not os.path.exists(result_path):
        tail = proc.stdout.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {proc.returncode}"]
        return {"rows": [], "refused": f"the runner crashed: {tail[0]}"}
    with open(result_path) as f:
        ran = json.load(f)
    if ran.get("status") != "ok":
        return {
            "rows": [],
            "refused": f"{ran.get('stage')}: {ran.get('message')}",
            "backend": ran.get("backend_version"),
        }
    reference = StoredRunner(np, {"label": "onnxruntime", "kind": "dump", "dir": spec["ref_dir"]})
    fp16 = config.get("fp16_tolerance", False)
    extra = (config.get("extra_atol", 0.0), config.get("extra_rtol", 0.0))
    rows = []
    with np.load(os.path.join(spec["outdir"], "outputs.npz")) as got:
        for i, name in enumerate(spec["tensors"]):
            key = f"out{i}"
            want = reference.get(name)
            if key not in got.files or want is None:
                rows.append({"a": name, "b": name, "missing": "B" if key not in got.files else "A"})
                continue
            va, vb = np.asarray(want), reference_layout(np, np.asarray(got[key]), np.asarray(want))
            if va.dtype.kind in "iub" and vb.dtype.kind in "iub":
                vb = vb.astype(va.dtype)  # a backend's int32 for int64: the values must be equal
            atol, rtol = tol.looser(va.dtype.name, vb.dtype.name, fp16=fp16, extra=extra)
            row = tol.compare_arrays(np, vb, va, atol, rtol)
            row.update(a=name, b=name, dtype=va.dtype.name, b_dtype=vb.dtype.name, shape=list(va.shape))
            row.update(atol=atol, rtol=rtol, share_off=row["off"] / row["size"] if row["size"] else 0.0)
            rows.append(row)
    return {"rows": rows, "backend": ran.get("backend_version", "")}


def run(np, config):
    defaulted = []
    feeds = make_inputs(np, config["inputs"], defaulted)
    if config["inputs"].get("save"):
        np.savez(config["inputs"]["save"], **feeds)
    result = {"rows": [], "defaulted_dims": sorted(set(defaulted)), "error": ""}
    mode = config["mode"]
    if mode == "inputs":
        return result
    sides = config["sides"]
    if mode == "dump":
        dump_side(np, config, make_runner(np, sides[0], feeds))
        return result
    tol = load_tolerance()
    if mode == "probe":
        result.update(probe(np, tol, config, feeds))
        return result
    a = make_runner(np, sides[0], feeds)
    b = make_runner(np, sides[1], feeds)
    result["rows"] = compare_pairs(np, tol, config, a, b)
    return result


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
