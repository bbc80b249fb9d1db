"""ncnn runner: pnnx converts the ONNX file to ncnn's param/bin (its ONNX front end, with the
corpus inputs' shapes as inputshape), then ncnn's Python binding runs it on the CPU in fp32.

pnnx names the blobs in0, in1, ... and out0, out1, ... in graph order. ncnn's Mat has no
batch dimension: where pnnx takes dim 0 of a blob as the batch it drops it, and ncnn computes
one batch item. Which blobs have one pnnx decides per model and writes into its generated
*_ncnn.py: Mat(x, batch_index=0) for a blob with a batch, batch_index=233 for one without
(every dim in the Mat; pnnx's layers then count axes from dim 0). The runner feeds and reads
each blob as that file does. A batch of B items (inputs with batch_index 0) runs as B
extractions of one item each (what an ncnn application does), their outputs joined along
dim 0; a model that mixes batch items then computes wrong, and the harness's comparison
says so."""

import os
import re
import subprocess
import sys

import numpy as np
from _protocol import CapturedOutput, Refused, main, one_line

# pnnx's type suffixes for inputshape (pnnx README: "f32 f64 f16 i32 i64 i16 i8 u8 bool").
_SUFFIX = {
    np.dtype("float32"): "f32",
    np.dtype("float64"): "f64",
    np.dtype("float16"): "f16",
    np.dtype("int64"): "i64",
    np.dtype("int32"): "i32",
    np.dtype("int8"): "i8",
    np.dtype("uint8"): "u8",
    np.dtype("bool"): "bool",
}


def pnnx_executable():
    """The converter binary inside the pnnx package, found without importing the package
    (its __init__ imports torch for the export API)."""
    import importlib.util

    spec = importlib.util.find_spec("pnnx")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the pnnx package is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "pnnx")


def probe():
    from importlib.metadata import version

    import ncnn  # noqa: F401  (the import itself is the check)

    if not os.access(pnnx_executable(), os.X_OK):
        raise RuntimeError("pnnx's converter binary is missing: %s" % pnnx_executable())
    return "ncnn %s / pnnx %s" % (version("ncnn"), version("pnnx"))


def inputshape(inputs):
    parts = []
    for name, array in inputs.items():
        if array.dtype not in _SUFFIX:
            raise Refused("load", "input %s: dtype %s has no pnnx inputshape type" % (name, array.dtype))
        parts.append("[%s]%s" % (",".join(str(d) for d in array.shape), _SUFFIX[array.dtype]))
    return ",".join(parts)


def link_model(model, link):
    """The model at link: a symlink to it, and copies (not links: pnnx does not follow a
    symlinked external data file) of its external data files beside it, so pnnx meets the
    model as a user would give it."""
    import shutil

    import onnx

    source_dir = os.path.dirname(os.path.abspath(model))
    os.symlink(os.path.abspath(model), link)
    m = onnx.load(model, load_external_data=False)
    tensors = list(m.graph.initializer) + [
        a.t for n in m.graph.node for a in n.attribute if a.type == onnx.AttributeProto.TENSOR
    ]
    for t in tensors:
        for entry in t.external_data:
            target = os.path.join(os.path.dirname(link), entry.value)
            if entry.key == "location" and not os.path.lexists(target):
                os.makedirs(os.path.dirname(target), exist_ok=True)
                shutil.copyfile(os.path.join(source_dir, entry.value), target)


def convert(model, inputs, workdir):
    """pnnx model.onnx -> workdir/model.ncnn.{param,bin}; pnnx's own message when it fails."""
    workdir = os.path.abspath(workdir)
    stem = os.path.join(workdir, "model")
    outputs = {
        "pnnxparam": stem + ".pnnx.param",
        "pnnxbin": stem + ".pnnx.bin",
        "pnnxpy": stem + "_pnnx.py",
        "pnnxonnx": stem + ".pnnx.onnx",
        "ncnnparam": stem + ".ncnn.param",
        "ncnnbin": stem + ".ncnn.bin",
        "ncnnpy": stem + "_ncnn.py",
    }
    # pnnx also writes NAME.pnnxsim.onnx next to the model it reads, whatever the options say:
    # give it a link in workdir (and copies of the model's external data files beside it).
    link = os.path.join(workdir, "input.onnx")
    link_model(model, link)
    cmd = [pnnx_executable(), link, "inputshape=" + inputshape(inputs), "fp16=0", "device=cpu"]
    cmd += ["%s=%s" % kv for kv in outputs.items()]
    log_path = os.path.join(workdir, "pnnx.log")
    with open(log_path, "w") as log:
        try:
            proc = subprocess.run(cmd, cwd=workdir, stdout=log, stderr=subprocess.STDOUT, timeout=600)
        except subprocess.TimeoutExpired:
            raise Refused("build", "pnnx did not finish in 600 s")
    with open(log_path, errors="replace") as f:
        lines = [l.rstrip() for l in f if l.strip()]
    # pnnx reports most problems on stdout and still exits 0; an abort is a signal.
    if proc.returncode != 0 or not os.path.exists(outputs["ncnnparam"]):
        how = (
            "pnnx exited %d" % proc.returncode
            if proc.returncode >= 0
            else "pnnx killed by signal %d" % -proc.returncode
        )
        raise Refused("build", "%s: %s" % (how, one_line("\n".join(lines[-3:]))))
    unsupported = [l for l in lines if "not supported" in l or "unsupported" in l]
    return outputs["ncnnparam"], outputs["ncnnbin"], unsupported, batch_indices(outputs["ncnnpy"])


# pnnx's generated script: ex.input("in0", ncnn.Mat(in0.numpy(), batch_index=0).clone()) and
# out.append(torch.from_numpy(out0.numpy(batch_index=233))).
_FED = re.compile(r'ex\.input\("(in\d+)", ncnn\.Mat\(\w+\.numpy\(\), batch_index=(\d+)\)')
_READ = re.compile(r"\b(out\d+)\.numpy\(batch_index=(\d+)\)")


def batch_indices(ncnn_py):
    """{blob: batch_index} as pnnx's generated *_ncnn.py feeds and reads them (0: dim 0 is the
    batch; 233: no batch axis). A blob the file does not name keeps batch_index 0."""
    try:
        with open(ncnn_py) as f:
            text = f.read()
    except OSError:
        return {}
    found = {name: int(index) for name, index in _FED.findall(text)}
    found.update({name: int(index) for name, index in _READ.findall(text)})
    return found


def run(model, inputs, workdir):
    import ncnn

    param, weights, unsupported, indices = convert(model, inputs, workdir)
    batched = {"in%d" % i: indices.get("in%d" % i, 0) == 0 for i in range(len(inputs))}
    batch = batch_size({k: a for (k, a), b in zip(inputs.items(), batched.values()) if b})
    # pnnx writes what it cannot lower as a layer ncnn then cannot create; its log says which.
    note = "; ".join(sorted(set(unsupported)))[:300]
    import onnx

    n_outputs = len(onnx.load(model, load_external_data=False).graph.output)
    log = CapturedOutput(os.path.join(os.path.abspath(workdir), "ncnn.log"))

    def why(default):
        lines = [l for l in log.lines() if l.strip()]
        return "%s: %s" % (default, "; ".join(lines[-2:])) if lines else default + (": " + note if note else "")

    with ncnn.Net() as net:
        # fp32 throughout, so the comparison measures the conversion, not fp16 storage.
        net.opt.use_fp16_packed = False
        net.opt.use_fp16_storage = False
        net.opt.use_fp16_arithmetic = False
        net.opt.use_bf16_storage = False
        net.opt.num_threads = 1
        with log:
            ok = net.load_param(param) == 0
        if not ok:
            raise Refused("load", why("ncnn load_param failed"))
        with log:
            ok = net.load_model(weights) == 0
        if not ok:
            raise Refused("load", why("ncnn load_model failed"))
        items = [extract(net, item_of(inputs, b, batch, batched), n_outputs, indices, log, why) for b in range(batch)]
    if batch == 1:
        return items[0], note
    return [join_items([item[i] for item in items]) for i in range(n_outputs)], note


def batch_size(inputs):
    """The batch (dim 0) of the inputs: 1, or the size every input with dim 0 > 1 shares."""
    sizes = {a.shape[0] for a in inputs.values() if a.ndim and a.shape[0] != 1}
    if len(sizes) > 1:
        raise Refused("load", "inputs disagree on the batch (dim 0): %s" % sorted(sizes))
    return sizes.pop() if sizes else 1


def item_of(inputs, b, batch, batched):
    """Batch item b of every input with a batch axis (an input of batch 1, or one pnnx gives
    no batch axis, goes in whole every time)."""
    if batch == 1:
        return list(inputs.values())
    return [
        a[b : b + 1] if has_batch and a.ndim and a.shape[0] == batch else a
        for a, has_batch in zip(inputs.values(), batched.values())
    ]


def join_items(outs):
    """One output's items back into a batch: along dim 0 when each item has it as 1."""
    if all(o.ndim and o.shape[0] == 1 for o in outs):
        return np.concatenate(outs, axis=0)
    return np.stack(outs, axis=0)


def extract(net, arrays, n_outputs, indices, log, why):
    """One extraction: the inputs in, every output out, each with pnnx's batch_index."""
    import ncnn

    results = []
    with net.create_extractor() as ex:
        for i, array in enumerate(arrays):
            # As pnnx's own generated *_ncnn.py feeds them: integer inputs (token ids) as
            # int32, whose bits ncnn's Embed reads as ints; everything else as float32.
            integer = np.issubdtype(array.dtype, np.integer) or array.dtype == np.bool_
            data = np.ascontiguousarray(array, dtype=np.int32 if integer else np.float32)
            ex.input("in%d" % i, ncnn.Mat(data, batch_index=indices.get("in%d" % i, 0)).clone())
        for i in range(n_outputs):
            with log:
                ret, mat = ex.extract("out%d" % i)
            if ret != 0:
                raise Refused("run", why("ncnn extract out%d returned %d" % (i, ret)))
            results.append(np.array(mat.numpy(batch_index=indices.get("out%d" % i, 0))))
    return results


if __name__ == "__main__":
    sys.exit(main(probe, run))
