import io
import sys

import numpy as np
from rknn.api import RKNN

m = sys.argv[1]
r = RKNN(verbose=False)
r.config(target_platform="rk3588", float_dtype="float16")
buf = io.StringIO()


def last():
    t = [l for l in buf.getvalue().splitlines() if "E " in l or "ERROR" in l or "rror" in l]
    return (t[-1] if t else "")[:200]


if True:
    ret = r.load_onnx(model=m)
if ret != 0:
    print("LOAD-FAIL")
    sys.exit()
if True:
    ret = r.build(do_quantization=False)
if ret != 0:
    print("BUILD-FAIL")
    sys.exit()
if True:
    ret = r.init_runtime()
    x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
    out = r.inference(inputs=[x], data_format=["nchw"])
if out is None:
    print("RUN-FAIL")
    sys.exit()
np.save(m + ".rk.npy", out[0])
print("OK")
