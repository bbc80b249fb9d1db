"""Run every NAME.onnx in the current directory on nncase 1.9 (k210, simulator) with
NAME.inputs.npz and compare with NAME.ref.npz (onnxruntime); see embedding_models.py."""

import glob
import sys

import nncase
import numpy as np

for m in sorted(sys.argv[1:] or glob.glob("*.onnx")):
    name = m[:-5]
    o = nncase.CompileOptions()
    o.target = "k210"
    o.dump_ir = False
    o.dump_asm = False
    c = nncase.Compiler(o)
    try:
        c.import_onnx(open(m, "rb").read(), nncase.ImportOptions())
        c.compile()
        k = c.gencode_tobytes()
    except Exception as e:
        print(f"{name:28s} FAIL {str(e).splitlines()[0][:120]}", file=sys.stderr)
        continue
    s = nncase.Simulator()
    s.load_model(k)
    feeds = np.load(f"{name}.inputs.npz")
    for i, a in enumerate(feeds.values()):
        s.set_input_tensor(i, nncase.RuntimeTensor.from_numpy(a))
    try:
        s.run()
    except Exception as e:
        print(f"{name:28s} RUN-FAIL {e}", file=sys.stderr)
        continue
    ref = np.load(f"{name}.ref.npz")
    for j, r in enumerate(ref.values()):
        y = s.get_output_tensor(j).to_numpy()
        err = np.abs(y.astype(np.float64) - r.astype(np.float64)).max() if y.shape == r.shape else "shape"
        print(f"{name:28s} out{j} {y.dtype}{list(y.shape)} vs {r.dtype}{list(r.shape)} max err {err}", file=sys.stderr)
        if err != 0 and r.size <= 16:
            print("   nn ", y.ravel()[:16], "\n   ref", r.ravel()[:16], file=sys.stderr)
