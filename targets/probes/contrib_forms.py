"""Forms of onnxruntime contrib ops an older onnxruntime may not know, though it knows the op:
SkipLayerNormalization with its fourth output (input_skip_bias_sum, the sum it normalizes,
which onnxruntime's transformer optimizer uses for the next residual), beside the same op
with one and three outputs; EmbedLayerNormalization with its third output (embedding_sum,
the GPT-2 fusion's) beside two. One single-node model per form (com.microsoft, ai.onnx opset
13, IR 7, float32), each with its inputs and the current onnxruntime's outputs; the probe
loads and runs it in the backend's onnxruntime and compares element by element.

    python targets/probes/contrib_forms.py make /tmp/forms       # onnx + onnxruntime needed
    .backends/ort-1.10/venv/bin/python targets/probes/contrib_forms.py ort /tmp/forms

Prints one line per form: OK with the max abs error, or REFUSED with the backend's first
message line."""

from __future__ import annotations

import glob
import os
import sys

import numpy as np

B, S, D, V = 2, 4, 8, 16
SKIP_LN = ["input", "skip", "gamma", "beta", "bias"]
EMBED_LN = ["ids", "", "word", "pos", "", "gamma", "beta"]
# form -> (op, its inputs, the outputs it has: names, "" leaves one out)
FORMS = {
    "skip_layernorm_1_output": ("SkipLayerNormalization", SKIP_LN, ["out"]),
    "skip_layernorm_3_outputs": ("SkipLayerNormalization", SKIP_LN, ["out", "mean", "inv_std_var"]),
    "skip_layernorm_sum_output": ("SkipLayerNormalization", SKIP_LN, ["out", "", "", "input_skip_bias_sum"]),
    "embed_layernorm_2_outputs": ("EmbedLayerNormalization", EMBED_LN, ["out", "mask_index"]),
    "embed_layernorm_sum_output": ("EmbedLayerNormalization", EMBED_LN, ["out", "mask_index", "embedding_sum"]),
}
SHAPES = {
    "out": [B, S, D],
    "mean": [B, S, 1],
    "inv_std_var": [B, S, 1],
    "input_skip_bias_sum": [B, S, D],
    "mask_index": [B],
    "embedding_sum": [B, S, D],
}


def make(folder: str) -> None:
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    every = {
        "input": rng.standard_normal((B, S, D)).astype(np.float32),
        "skip": rng.standard_normal((B, S, D)).astype(np.float32),
        "gamma": rng.standard_normal(D).astype(np.float32),
        "beta": rng.standard_normal(D).astype(np.float32),
        "bias": rng.standard_normal(D).astype(np.float32),
        "ids": rng.integers(0, V, (B, S)).astype(np.int32),
        "word": rng.standard_normal((V, D)).astype(np.float32),
        "pos": rng.standard_normal((S, D)).astype(np.float32),
    }
    for form, (op, inputs, outputs) in FORMS.items():
        feeds = {k: every[k] for k in inputs if k}
        node = helper.make_node(op, inputs, outputs, domain="com.microsoft", epsilon=1e-5)
        elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
        graph = helper.make_graph(
            [node],
            form,
            [helper.make_tensor_value_info(k, elem[v.dtype], list(v.shape)) for k, v in feeds.items()],
            [
                helper.make_tensor_value_info(
                    o, TensorProto.INT32 if o == "mask_index" else TensorProto.FLOAT, SHAPES[o]
                )
                for o in outputs
                if o
            ],
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)],
            ir_version=7,
        )
        path = os.path.join(folder, form + ".onnx")
        onnx.save(model, path)
        session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        np.savez(os.path.join(folder, form + ".inputs.npz"), **feeds)
        np.savez(os.path.join(folder, form + ".ref.npz"), *session.run(None, feeds))
    print(f"wrote {len(FORMS)} models with onnxruntime {ort.__version__}'s outputs into {folder}")


def run_ort(folder: str) -> None:
    import onnxruntime as ort

    for path in sorted(glob.glob(os.path.join(folder, "*.onnx"))):
        form = os.path.basename(path)[: -len(".onnx")]
        feeds = dict(np.load(os.path.join(folder, form + ".inputs.npz")))
        with np.load(os.path.join(folder, form + ".ref.npz")) as npz:
            refs = [npz[k] for k in sorted(npz.files, key=lambda k: int(k.split("_")[1]))]
        try:
            outs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feeds)
        except Exception as e:  # the backend's refusal is the finding
            line = str(e).splitlines()[0]
            # onnxruntime's schema errors put the reason after the node's signature
            why = line[line.find(", Error ") + 2 :] if ", Error " in line else ""
            print(f"{form}: REFUSED {line[:60]} ... {why[:200]}")
            continue
        # An older onnxruntime may leave an optional output unset (None): said so, not compared.
        unset = [i for i, o in enumerate(outs) if o is None]
        err = max(float(np.abs(o - r).max()) for o, r in zip(outs, refs) if o is not None)
        note = f", output(s) {unset} not computed" if unset else ""
        print(f"{form}: OK (onnxruntime {ort.__version__}), max abs error {err:.2e}{note}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("make", "ort"):
        sys.exit(__doc__)
    (make if sys.argv[1] == "make" else run_ort)(sys.argv[2])
