"""rknn-toolkit2 runner: load_onnx, build without quantization for rk3588, run on the x86
simulator (init_runtime() with no target). The simulator computes in fp16."""
import os
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
        lines = log.errors("E ")
        return lines[-1] if lines else default

    with log:
        rknn = RKNN(verbose=False)
        rknn.config(target_platform="rk3588")
        try:
            ret = rknn.load_onnx(model=model)
        except Exception as e:
            ret, exc = -1, e
        else:
            exc = None
    if ret != 0:
        raise Refused("load", why(str(exc) if exc else "load_onnx returned %s" % ret))
    with log:
        try:
            ret = rknn.build(do_quantization=False)
        except Exception as e:
            ret = -1
    if ret != 0:
        raise Refused("build", why("build returned %s" % ret))
    with log:
        ret = rknn.init_runtime()
    if ret != 0:
        raise Refused("build", why("init_runtime (simulator) returned %s" % ret))
    arrays = list(inputs.values())
    # The model's own layout: without data_format the simulator takes 4-D inputs as NHWC.
    formats = ["nchw" if a.ndim == 4 else None for a in arrays]
    with log:
        try:
            outputs = rknn.inference(inputs=arrays, data_format=formats)
        except Exception as e:
            outputs, exc = None, e
    if outputs is None:
        raise Refused("run", why("inference returned nothing"))
    rknn.release()
    return outputs, "fp16 simulator"


if __name__ == "__main__":
    sys.exit(main(probe, run))
