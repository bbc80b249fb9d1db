import sys

import nncase
import numpy as np

m = sys.argv[1]
o = nncase.CompileOptions()
o.target = "k210"
o.dump_ir = False
o.dump_asm = False
c = nncase.Compiler(o)
try:
    c.import_onnx(open(m, "rb").read(), nncase.ImportOptions())
except Exception as e:
    print("IMPORT-FAIL", str(e).splitlines()[0][:150])
    sys.exit()
try:
    c.compile()
    k = c.gencode_tobytes()
except Exception as e:
    print("COMPILE-FAIL", str(e).splitlines()[0][:150])
    sys.exit()
s = nncase.Simulator()
s.load_model(k)
s.set_input_tensor(
    0, nncase.RuntimeTensor.from_numpy(np.random.default_rng(0).standard_normal((1, 4, 8, 8)).astype(np.float32))
)
s.run()
np.save(m + ".nn.npy", s.get_output_tensor(0).to_numpy())
print("OK")
