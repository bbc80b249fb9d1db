"""rknn-toolkit2 runner: load_onnx, build without quantization for rk3588, run on the x86
simulator (init_runtime() with no target). The simulator computes in fp16.

With RKNN_QUANTIZE=1 in the environment it builds with rknn's own quantizer instead
(build(do_quantization=True, dataset=LIST), asymmetric uint8 for rk3588): the calibration
list is the inputs and 7 copies with Gaussian noise of 10% of each input's deviation (seed 0),
one line of .npy files per sample, written to the work folder."""

import os
import re
import sys

from _protocol import CapturedOutput, Refused, main


def probe():
    with CapturedOutput(os.devnull):
        from rknn.api import RKNN  # noqa: F401  (the import itself is the check)
    from importlib.metadata import version

    return version("rknn-toolkit2")


def run(model, inputs, workdir):
    from rknn.api import RKNN

    log = CapturedOutput(os.path.join(workdir, "rknn.log"))

    def why(default):
        """rknn logs its errors instead of raising them: its API-level line ("E build: ..."),
        else the exception it caught, else the runtime's own ("E RKNN: ...")."""
        lines = log.lines()
        api = [
            l
            for l in lines
            if re.match(r"^E \w+: ", l)
            and not l.endswith("(most recent call last):")
            and "rknn-toolkit2 version" not in l
            and not l.startswith("E RKNN:")
        ]
        caught = [l for l in lines if re.match(r"^(?:[a-z_0-9]+\.)+[A-Z]\w*: |^\w+(?:Error|Exception): ", l)]
        runtime = [l for l in lines if l.startswith("E RKNN:")]
        for found in (api, caught, runtime):
            if found:
                return found[-1]
        return default

    import onnx

    graph = onnx.load(model, load_external_data=False).graph
    dynamic = any(
        not d.HasField("dim_value") for i in graph.input if i.name in inputs for d in i.type.tensor_type.shape.dim
    )
    # A dynamic model needs its input shapes at conversion, as rknn's user guide says:
    # load_onnx(inputs=names, input_size_list=shapes) fixes them. rknn has no rank-0 tensor:
    # a scalar input is given, and fed, as shape [1] (an empty shape in the list makes
    # inference fail with "IndexError: list index out of range" in get_input_img).
    fixed = (
        {"inputs": list(inputs), "input_size_list": [list(a.shape) or [1] for a in inputs.values()]} if dynamic else {}
    )
    with log:
        rknn = RKNN(verbose=False)
        rknn.config(target_platform="rk3588")
        try:
            ret = rknn.load_onnx(model=model, **fixed)
        except Exception as e:
            ret, exc = -1, e
        else:
            exc = None
    if ret != 0:
        raise Refused("load", why(str(exc) if exc else "load_onnx returned %s" % ret))
    quantize = os.environ.get("RKNN_QUANTIZE") == "1"
    build = {"do_quantization": quantize}
    if quantize:
        build["dataset"] = calibration_list(inputs, workdir)
    with log:
        try:
            ret = rknn.build(**build)
        except Exception:
            ret = -1
    if ret != 0:
        raise Refused("build", why("build returned %s" % ret))
    with log:
        ret = rknn.init_runtime()
    if ret != 0:
        raise Refused("build", why("init_runtime (simulator) returned %s" % ret))
    arrays = [a.reshape(1) if a.ndim == 0 else a for a in inputs.values()]
    # The model's own layout: without data_format the simulator takes 4-D inputs as NHWC
    # (the format of other ranks is ignored, but must be a string).
    formats = ["nchw"] * len(arrays)
    with log:
        try:
            outputs = rknn.inference(inputs=arrays, data_format=formats)
        except Exception as e:
            outputs, exc = None, e
    if outputs is None:
        raise Refused("run", why("inference returned nothing"))
    rknn.release()
    mode = "int8 (rknn's quantizer) simulator" if quantize else "fp16 simulator"
    return outputs, mode + (", input_size_list given" if dynamic else "")


def calibration_list(inputs, workdir):
    """rknn's dataset file: per line one sample, its inputs' .npy paths separated by spaces."""
    import numpy as np

    rng = np.random.default_rng(0)
    lines = []
    for k in range(8):
        paths = []
        for i, (name, a) in enumerate(inputs.items()):
            sample = a if k == 0 or a.dtype.kind != "f" else a + rng.normal(0, 0.1 * (a.std() or 1), a.shape)
            path = os.path.join(workdir, "calib_%d_%d.npy" % (k, i))
            np.save(path, sample.astype(a.dtype).reshape(a.shape or (1,)))
            paths.append(path)
        lines.append(" ".join(paths))
    listing = os.path.join(workdir, "dataset.txt")
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    return listing


if __name__ == "__main__":
    sys.exit(main(probe, run))
