"""Small Scan models behind unroll-scan: each shows on a real backend whether the Scan is
refused and whether the unrolled form runs and matches. Writes NAME.onnx and
NAME.inputs.npz (seed 0) to the current directory, the corpus layout
tests/backends/harness.py reads, so the harness runs them as they are and after --target
and compares with onnxruntime:

    mkdir /tmp/scan && cd /tmp/scan && python $REPO/targets/probes/scan_models.py
    cp $REPO/tests/models/.generated/tf_custom_rnn_op13.{onnx,inputs.npz} .   # tf2onnx's Scan
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py \\
        --backends nncase-k210,tflite --corpus /tmp/scan --out /tmp/scan/out

  scan_fwd    h' = tanh(h + x_t W + z_t) over x [3,2,4] (axis 0, forward), h' and x_t * 2
              scanned forward on axis 0; opset 13
  scan_rev    the same with x [2,3,4] scanned backwards along axis 1 and h' prepended
              along axis 1

Recorded results: scan_models.txt.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "python"))

import scan_models  # noqa: E402

for name, args in (("scan_fwd", (0, 0, 0, 0)), ("scan_rev", (1, 1, 1, 1))):
    path, feeds = scan_models.scan_rnn(Path("."), *args, opset=13)
    path.rename(f"{name}.onnx")
    np.savez(f"{name}.inputs.npz", **feeds)
