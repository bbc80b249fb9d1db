"""nncase 1.9 runner: import the ONNX model, compile for the K210 target without
quantization, run the kmodel on nncase's simulator."""

import sys

from _protocol import Refused, main


def probe():
    from importlib.metadata import version

    import nncase  # noqa: F401  (the import itself is the check)

    return version("nncase")


def run(model, inputs, workdir):
    import nncase

    options = nncase.CompileOptions()
    options.target = "k210"
    options.dump_ir = False
    options.dump_asm = False
    compiler = nncase.Compiler(options)
    with open(model, "rb") as f:
        data = f.read()
    try:
        compiler.import_onnx(data, nncase.ImportOptions())
    except Exception as e:
        raise Refused("load", str(e))
    try:
        compiler.compile()
        kmodel = compiler.gencode_tobytes()
    except Exception as e:
        raise Refused("build", str(e))
    sim = nncase.Simulator()
    try:
        sim.load_model(kmodel)
        for i, array in enumerate(inputs.values()):
            sim.set_input_tensor(i, nncase.RuntimeTensor.from_numpy(array))
        sim.run()
        return [sim.get_output_tensor(i).to_numpy() for i in range(sim.outputs_size)], ""
    except Exception as e:
        raise Refused("run", str(e))


if __name__ == "__main__":
    sys.exit(main(probe, run))
