"""An onnxruntime of a pinned old version (ort-1.10, ort-1.14, ort-1.15: one runner for each venv): create a CPU session, run it."""

import sys

from _protocol import Refused, main, without_cpp_noise


def probe():
    import onnxruntime

    return onnxruntime.__version__


def run(model, inputs, workdir):
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise Refused("load", without_cpp_noise(e))
    feed = {i.name: inputs[i.name] for i in session.get_inputs()}
    try:
        return session.run(None, feed), ""
    except Exception as e:
        raise Refused("run", without_cpp_noise(e))


if __name__ == "__main__":
    sys.exit(main(probe, run))
