"""The file protocol every backend runner speaks (Python 3.9+, numpy only).

    python run-NAME.py --probe                      prints the backend's version, exit 0 if it loads
    python run-NAME.py MODEL.onnx INPUTS.npz OUTDIR  runs MODEL on the inputs

OUTDIR/result.json says what happened:
    {"status": "ok" | "refused", "stage": "load" | "build" | "run", "message": "...",
     "backend_version": "...", "output_names": [...], "note": "..."}
"refused" means the backend rejected the model at that stage (the message is its own
error); "ok" means OUTDIR/outputs.npz holds the outputs as out0, out1, ... in graph order.
The inputs in INPUTS.npz are keyed by graph input name, in graph order.
A runner that crashes or hangs leaves no result.json; the harness records that itself.
"""

import json
import os
import re
import sys
import traceback

import numpy as np


class Refused(Exception):
    """The backend rejected the model; stage names the step that did."""

    def __init__(self, stage, message):
        super().__init__(message)
        self.stage = stage
        self.message = message


def without_cpp_noise(text):
    """onnxruntime's exception text minus the model path, source file and C++ signature
    that precede the actual reason."""
    text = re.sub(r"Load model from \S+ failed:", "", str(text))
    text = re.sub(r"/onnxruntime_src/\S+:\d+ ", "", text)
    text = re.sub(r"(?:[\w~]+::)+[\w~]+\((?:[^()]|\([^()]*\))*\)(?: const)? ", "", text)
    return text.strip()


def one_line(text, limit=600):
    """The backend's error as one line: the last non-empty line that says something."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    if not lines:
        return "(no message)"
    line = " | ".join(lines[-3:]) if len(lines[-1]) < 40 else lines[-1]
    return line[:limit]


def main(probe, run):
    """probe() -> version string; run(model_path, inputs: dict, workdir) -> (outputs list, note)."""
    if len(sys.argv) == 2 and sys.argv[1] == "--probe":
        print(probe())
        return 0
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    model, inputs_path, outdir = sys.argv[1:]
    os.makedirs(outdir, exist_ok=True)
    with np.load(inputs_path) as npz:
        inputs = {name: npz[name] for name in npz.files}
    result = {"backend_version": "", "status": "refused", "stage": "load", "message": ""}
    try:
        result["backend_version"] = probe()
        outputs, note = run(model, inputs, outdir)
        np.savez(os.path.join(outdir, "outputs.npz"), **{"out%d" % i: np.asarray(o) for i, o in enumerate(outputs)})
        result.update(status="ok", stage="run", message="", note=note or "")
    except Refused as e:
        result.update(stage=e.stage, message=one_line(e.message))
    except Exception as e:  # the backend's own exception type is its refusal
        tb = traceback.format_exc()
        result.update(stage=getattr(e, "stage", "run"), message=one_line("%s: %s" % (type(e).__name__, e)))
        with open(os.path.join(outdir, "traceback.txt"), "w") as f:
            f.write(tb)
    with open(os.path.join(outdir, "result.json"), "w") as f:
        json.dump(result, f, indent=1)
    return 0


class CapturedOutput:
    """Sends the process's stdout/stderr (C++ logs included) to a file while active, so a
    backend that reports errors by logging instead of raising can be quoted."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        self.file = open(self.path, "a")
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        self.file.close()
        return False

    def lines(self):
        """The log's lines, without terminal colour codes."""
        with open(self.path, errors="replace") as f:
            return [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip() for l in f]
