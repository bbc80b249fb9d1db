import sys

import numpy as np
import onnxruntime as ort

print("ort", ort.__version__)
x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
for m in sys.argv[1:]:
    try:
        s = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
        y = s.run(None, {"x": x})[0]
        np.save(m + "." + ort.__version__ + ".npy", y)
        print(m, "OK")
    except Exception as e:
        print(m, "FAIL", str(e).splitlines()[0][:160])
