"""OpenVINO runner: read the ONNX file with OpenVINO's frontend, compile for CPU in f32, infer."""
import sys

from _protocol import Refused, main


def probe():
    import openvino  # noqa: F401  (the import itself is the check)
    from importlib.metadata import version
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
        name = port.get_any_name()
        if name not in inputs:
            raise Refused("run", "OpenVINO input %r is not a graph input" % name)
        feed[name] = inputs[name]
    try:
        result = compiled(feed)
    except Exception as e:
        raise Refused("run", str(e))
    return [result[port] for port in compiled.outputs], ""


if __name__ == "__main__":
    sys.exit(main(probe, run))
