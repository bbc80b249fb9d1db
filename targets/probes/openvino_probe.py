import sys

import numpy as np
import openvino as ov

c = ov.Core()
x = np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32)
print("ov", ov.__version__)
for m in sys.argv[1:]:
    try:
        cm = c.compile_model(c.read_model(m), "CPU")
        y = cm([x])[cm.output(0)]
        np.save(m + ".ov.npy", y)
        print(m, "OK")
    except Exception as e:
        print(m, "FAIL", str(e).strip().splitlines()[0][:200])
