"""Torch exports behind the tflite fact on Pad when dynamic-input:1: torch writes F.pad's
constant pads as a chain of ops on constants (ConstantOfShape, Concat, a Slice with step -1,
Transpose, Reshape, Cast) that --target left unfolded unless something else asked for
simplify. Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the corpus
layout tests/backends/harness.py reads:

    mkdir /tmp/tfl-pad && cd /tmp/tfl-pad && $REPO/.venv/bin/python $REPO/targets/probes/tflite_pad_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py --backends tflite \\
        --corpus /tmp/tfl-pad --out /tmp/tfl-pad/out

  pad_depthwise   F.pad(x, (1, 1, 1, 1)) then a depthwise Conv2d(16, 16, 3, groups 16) on x [1,16,12,10]
  hf_mobilenet_v2 transformers MobileNetV2Model (depth_multiplier 0.35, image 40, tf_padding: F.pad
                  before each strided Conv), pixel_values [1,3,40,40]

Recorded results: tflite_pad_models.txt.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PadDepthwise(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, groups=16)

    def forward(self, x):
        return self.conv(F.pad(x, (1, 1, 1, 1)))


def export(name, module, x, input_name="x"):
    torch.onnx.export(module.eval(), (x,), f"{name}.onnx", input_names=[input_name], opset_version=13, dynamo=False)
    np.savez(f"{name}.inputs.npz", **{input_name: x.numpy()})


export("pad_depthwise", PadDepthwise(), torch.randn(1, 16, 12, 10))

from transformers import MobileNetV2Config, MobileNetV2Model  # noqa: E402

config = MobileNetV2Config(depth_multiplier=0.35, image_size=40, tf_padding=True)
export("hf_mobilenet_v2", MobileNetV2Model(config), torch.randn(1, 3, 40, 40), "pixel_values")
