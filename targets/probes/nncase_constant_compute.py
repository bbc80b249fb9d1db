"""Arithmetic on constants left to nncase 1.9: a T5 encoder (transformers, small random
config, torch.onnx.export at opset 17, static batch 1 x 10) computes its relative position buckets
from constants only (int64 Abs, Less, Where, Min, Add and a float Log), which the export
leaves unfolded; with a static input shape nothing in it is a profile blocker. Writes, to
the current directory, NAME.onnx, NAME.inputs.npz and NAME.ref.npz (onnxruntime on the
export) for:

  - t5enc_op17_shapes: the export with its input shape set and shapes annotated
    (set-input-shape, infer-shapes: what `--target nncase-k210` wrote when only the static
    shape was asked for), the constant arithmetic left in;
  - t5enc_op17_simplified: the same after `--pass simplify` (the constants folded);
  - t5enc_op17_target: `--target nncase-k210` as the CLI given by ONNXSURGEON plans it.

nncase_embedding.py (with the nncase venv's python, one model per run) runs each on nncase
1.9 (k210, simulator). Results: nncase_constant_compute.txt.

    mkdir /tmp/cc && cd /tmp/cc && ONNXSURGEON=$REPO/build/onnxsurgeon python $REPO/targets/probes/nncase_constant_compute.py
    for f in *.onnx; do $REPO/.backends/nncase-k210/venv/bin/python \\
        $REPO/targets/probes/nncase_embedding.py $f; done
"""

import os
import subprocess

import numpy as np
import onnxruntime as ort
import torch
from transformers import T5Config, T5EncoderModel


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids):
        return self.m(input_ids=input_ids).last_hidden_state


torch.manual_seed(1)
cfg = T5Config(
    vocab_size=120, d_model=48, d_kv=16, d_ff=96, num_layers=3, num_heads=3, relative_attention_num_buckets=16
)
ids = torch.randint(0, 120, (1, 10))
export = "t5enc_op17_export.onnx"
torch.onnx.export(
    Encoder(T5EncoderModel(cfg)).eval(),
    (ids,),
    export,
    input_names=["input_ids"],
    output_names=["y"],
    opset_version=17,
    dynamo=False,
)
feeds = {"input_ids": ids.numpy()}
ref = ort.InferenceSession(export, providers=["CPUExecutionProvider"]).run(None, feeds)
cli = os.environ.get("ONNXSURGEON", "onnxsurgeon")
shape = "input_ids:1x10"
runs = {
    "t5enc_op17_shapes": ["--pass", f"set-input-shape(shapes={shape}),infer-shapes"],
    "t5enc_op17_simplified": ["--pass", f"set-input-shape(shapes={shape}),simplify,infer-shapes"],
    "t5enc_op17_target": ["--target", "nncase-k210", "--input-shapes", shape],
}
for name, args in runs.items():
    subprocess.run([cli, export, *args, "-o", f"{name}.onnx"], check=True)
    np.savez(f"{name}.inputs.npz", **feeds)
    np.savez(f"{name}.ref.npz", *ref)
os.remove(export)
