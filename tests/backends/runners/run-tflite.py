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


def onnx2tf_error(lines):
    """onnx2tf's reason: the exception it reports and the ONNX node it names (its other
    ERROR lines are generic advice)."""
    caught = [i for i, l in enumerate(lines) if re.match(r"^(?:[a-z_0-9]+\.)*[A-Z]\w*(?:Error|Exception): ", l)]
    node = [l.split("onnx_op_name:", 1)[1].strip() for l in lines if "onnx_op_name:" in l]
    if caught:
        i = caught[-1]
        text = " ".join(
            [lines[i]] + [l.strip() for l in lines[i + 1 : i + 3] if l.startswith(" ") or l.startswith("\t")]
        )
        return text + (" (onnx node %s)" % node[-1] if node else "")
    errors = [l for l in lines if l.startswith("ERROR:") and "trace log" not in l]
    return errors[0] if errors else ""


def sanitize(name):
    """A tensor name as it comes out of the .tflite signature: onnx2tf writes ':' as '__'
    (onnx2tf.py's _sanitize_tf_input_name, 1.29.24), TF then anything else not a word
    character as '_'."""
    return re.sub(r"[^A-Za-z0-9_]", "_", name.replace(":", "__"))


def onnx2tf_input_name(name, signaturedefs):
    """A graph input's name as onnx2tf matches keep_ncw_or_nchw_or_ncdhw_input_names against
    it: it renames the graph's tensors before (onnx2tf.py's sanitizing, 1.29.24: ':' as '__',
    and with signature defs a leading '/' as 'wa/'), and silently ignores a name it does not
    find, converting that input channels-last (tf2onnx's 'x:0' came out transposed)."""
    name = name.replace(":", "__")
    return re.sub("^/", "wa/", name) if signaturedefs else name


# onnx2tf validates a model whose inputs all look like NHWC images ([N<=20,H,W,3]) on sample
# images it downloads into its cwd unless this file is there (utils/common_functions.py,
# download_test_image_data). The backend run must not reach the network: a fixed local
# stand-in of the same shape and range, made once per run folder and linked into each
# model's cwd. It only feeds onnx2tf's own validation; the harness compares on the
# corpus inputs.
CALIBRATION = "calibration_image_sample_data_20x128x128x3_float32.npy"


def calibration_stand_in(workdir):
    here = os.path.join(os.getcwd(), CALIBRATION)
    if os.path.exists(here):
        return
    import numpy as np

    shared = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(workdir))), CALIBRATION)
    if not os.path.isfile(shared):
        data = np.random.default_rng(0).random((20, 128, 128, 3), dtype=np.float32)
        tmp = shared + ".%d.tmp" % os.getpid()
        with open(tmp, "wb") as f:
            np.save(f, data)
        os.replace(tmp, shared)
    os.symlink(shared, here)


def run_without_signature(interp, inputs, output_names):
    """A .tflite converted with -osd has no SignatureDef: inputs by name, outputs in order
    (onnx2tf writes them in the ONNX graph's output order, named Identity, Identity_1, ...)."""
    interp.allocate_tensors()
    by_name = {sanitize(n): a for n, a in inputs.items()}
    for d in interp.get_input_details():
        a = by_name.get(sanitize(d["name"]))
        if a is None:
            raise Refused("run", "tflite input %r matches no ONNX input (%s)" % (d["name"], ", ".join(inputs)))
        if list(d["shape"]) != list(a.shape):
            interp.resize_tensor_input(d["index"], a.shape)
            interp.allocate_tensors()
        interp.set_tensor(d["index"], a.astype(d["dtype"]))
    interp.invoke()
    details = interp.get_output_details()
    if len(details) != len(output_names):
        raise Refused("run", "tflite has %d outputs, the ONNX graph %d" % (len(details), len(output_names)))
    return [interp.get_tensor(d["index"]) for d in details]


def run(model, inputs, workdir):
    out = os.path.join(workdir, "tf")
    calibration_stand_in(workdir)
    log = CapturedOutput(os.path.join(workdir, "onnx2tf.log"))
    # onnx2tf's saved_model step refuses some TF op names and then says to "convert again
    # with the `-osd` or `--output_signaturedefs` option": what a user does, so the runner
    # does it too (signature defs change the export path, not the numerics).
    for signaturedefs in (False, True):
        with log:
            import onnx2tf
            import tensorflow as tf

            try:
                onnx2tf.convert(
                    input_onnx_file_path=model,
                    output_folder_path=out,
                    non_verbose=True,
                    output_signaturedefs=signaturedefs,
                    # (onnx2tf accepts only 3-D to 5-D inputs in this list)
                    keep_ncw_or_nchw_or_ncdhw_input_names=[
                        onnx2tf_input_name(n, signaturedefs) for n, a in inputs.items() if 3 <= a.ndim <= 5
                    ]
                    or None,
                )
                exc = None
            except BaseException as e:  # onnx2tf calls sys.exit(1) on an unsupported model
                exc = e
        if exc is None or not any("OP name does not match the following pattern" in line for line in log.lines()):
            break
    files = sorted(glob.glob(os.path.join(out, "*_float32.tflite")))
    if exc is not None or not files:
        raise Refused("load", onnx2tf_error(log.lines()) or "onnx2tf produced no .tflite (%r)" % (exc,))
    import onnx

    output_names = [o.name for o in onnx.load(model, load_external_data=False).graph.output]
    try:
        interp = tf.lite.Interpreter(model_path=files[0])
        if not interp.get_signature_list():
            return run_without_signature(interp, inputs, output_names), "onnx2tf float32 tflite, -osd (no signature)"
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
