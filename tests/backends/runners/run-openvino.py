"""OpenVINO runner: read the ONNX file with OpenVINO's frontend, compile for CPU in f32, infer."""

import sys

from _protocol import Refused, main


def probe():
    from importlib.metadata import version

    import openvino  # noqa: F401  (the import itself is the check)

    return version("openvino")


def run(model, inputs, workdir):
    import openvino as ov

    core = ov.Core()
    try:
        m = core.read_model(model)
    except Exception as e:
        raise Refused("load", str(e))
    try:
        # f32 so the comparison measures the model, not a bf16 CPU default.
        compiled = core.compile_model(m, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    except Exception as e:
        raise Refused("build", str(e))
    feed = {}
    for port in compiled.inputs:
        # A port carries every name its tensor had (an input a no-op Reshape passed on
        # has two); the graph input's is the one to feed.
        names = [n for n in port.get_names() if n in inputs]
        if not names:
            raise Refused("run", "OpenVINO input %s is not a graph input" % sorted(port.get_names()))
        feed[names[0]] = inputs[names[0]]
    try:
        result = compiled(feed)
    except Exception as e:
        raise Refused("run", str(e))
    return [result[port] for port in compiled.outputs], ""


if __name__ == "__main__":
    sys.exit(main(probe, run))
