"""A BLOOM model's ALiBi positions on nncase 1.9: transformers' BloomModel (small random
config) exported by torch at opset 17 with input_ids and attention_mask (batch 1 x 7)
computes them as CumSum(attention_mask) in int64, which nncase fails ('unsupported dtype
for cumsum: i64'; the single-op form is embedding_models.py cumsum_i64). Writes, to the
current directory, NAME.onnx, NAME.inputs.npz and NAME.ref.npz (onnxruntime on the export)
for bloom_mask_op17_target (`--target nncase-k210` with --allow-remaining, by the CLI given
by ONNXSURGEON) and bloom_mask_op17_cumsum (that model cut at the CumSum's output).
nncase_embedding.py (with the nncase venv's python, one model per run) runs each on nncase
1.9 (k210, simulator). Results: nncase_cumsum_int64.txt.

    mkdir /tmp/cs && cd /tmp/cs && ONNXSURGEON=$REPO/build/onnxsurgeon python $REPO/targets/probes/nncase_cumsum_int64.py
    for f in *.onnx; do $REPO/.backends/nncase-k210/venv/bin/python \\
        $REPO/targets/probes/nncase_embedding.py $f; done
"""

import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import torch
from transformers import BloomConfig, BloomModel


class Encoder(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state


torch.manual_seed(2)
ids = torch.randint(0, 150, (1, 7))
export = "bloom_mask_op17_export.onnx"
model = Encoder(BloomModel(BloomConfig(vocab_size=150, hidden_size=48, n_layer=2, n_head=4))).eval()
torch.onnx.export(
    model,
    (ids, torch.ones_like(ids)),
    export,
    input_names=["input_ids", "attention_mask"],
    opset_version=17,
    dynamo=False,
)
feeds = {"input_ids": ids.numpy(), "attention_mask": np.ones((1, 7), np.int64)}
cli = os.environ.get("ONNXSURGEON", "onnxsurgeon")
target = "bloom_mask_op17_target"
shapes = ["--input-shapes", "input_ids:1x7;attention_mask:1x7"]
subprocess.run(
    [cli, export, "--target", "nncase-k210", *shapes, "--allow-remaining", "-o", f"{target}.onnx"], check=True
)
os.remove(export)
cut = "bloom_mask_op17_cumsum"
m = onnx.load(f"{target}.onnx")
(cs,) = [n.output[0] for n in m.graph.node if n.op_type == "CumSum"][:1]
onnx.utils.extract_model(f"{target}.onnx", f"{cut}.onnx", ["attention_mask"], [cs])
for name, f in ((target, feeds), (cut, {"attention_mask": feeds["attention_mask"]})):
    np.savez(f"{name}.inputs.npz", **f)
    np.savez(f"{name}.ref.npz", *ort.InferenceSession(f"{name}.onnx", providers=["CPUExecutionProvider"]).run(None, f))
