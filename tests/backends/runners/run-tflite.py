"""TFLite runner: onnx2tf converts the ONNX model to a float32 .tflite, TF's interpreter
runs it. Inputs keep the ONNX layout (keep_ncw_or_nchw_or_ncdhw_input_names); onnx2tf
may still emit channels-last outputs, which the harness accounts for by trying the
NHWC->NCHW permutation when the shapes say so (recorded in the note)."""
import glob
import os
import re
import sys

from _protocol import CapturedOutput, Refused, main


def probe():
    from importlib.metadata import version
    with CapturedOutput(os.devnull):
        import onnx2tf  # noqa: F401
        import tensorflow  # noqa: F401
    return "onnx2tf %s, tensorflow-cpu %s" % (version("onnx2tf"), version("tensorflow-cpu"))


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def run(model, inputs, workdir):
    out = os.path.join(workdir, "tf")
    log = CapturedOutput(os.path.join(workdir, "onnx2tf.log"))
    with log:
        import onnx2tf
        import tensorflow as tf
        try:
            onnx2tf.convert(
                input_onnx_file_path=model, output_folder_path=out, non_verbose=True,
                keep_ncw_or_nchw_or_ncdhw_input_names=list(inputs))
            exc = None
        except BaseException as e:  # onnx2tf calls sys.exit(1) on an unsupported model
            exc = e
    files = sorted(glob.glob(os.path.join(out, "*_float32.tflite")))
    if exc is not None or not files:
        with open(log.path, errors="replace") as f:
            lines = [l for l in f.read().splitlines() if "ERROR" in l or "Error" in l]
        raise Refused("load", lines[-1] if lines else "onnx2tf produced no .tflite (%r)" % (exc,))
    import onnx
    output_names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
    try:
        interp = tf.lite.Interpreter(model_path=files[0])
        runner = interp.get_signature_runner()
        wanted = runner.get_input_details()
        by_name = {sanitize(n): a for n, a in inputs.items()}
        feed = {}
        for pos, (name, d) in enumerate(wanted.items()):
            a = by_name.get(sanitize(name))
            if a is None:
                raise Refused("run", "tflite input %r matches no ONNX input (%s)" % (name, ", ".join(inputs)))
            feed[name] = a.astype(d["dtype"])
        result = runner(**feed)
    except Refused:
        raise
    except Exception as e:
        raise Refused("run", str(e))
    by_out = {sanitize(k): v for k, v in result.items()}
    missing = [n for n in output_names if sanitize(n) not in by_out]
    if missing:
        raise Refused("run", "tflite outputs %s do not name ONNX outputs %s" % (sorted(result), missing))
    outputs = [by_out[sanitize(n)] for n in output_names]
    return outputs, "onnx2tf float32 tflite"


if __name__ == "__main__":
    sys.exit(main(probe, run))
