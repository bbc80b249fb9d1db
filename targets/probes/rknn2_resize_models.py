"""Small torch exports behind rknn2's Resize facts: bicubic Resize (mode=cubic) in the forms
torch writes it. Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the
corpus layout tests/backends/harness.py reads, so the harness runs them on rknn2 as exported
and after --target rknn2 and compares with onnxruntime (--probe: whether a named blocker is
real, with --allow-remaining):

    mkdir /tmp/rk-resize && cd /tmp/rk-resize && $REPO/.venv/bin/python $REPO/targets/probes/rknn2_resize_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py --backends rknn2 \\
        --corpus /tmp/rk-resize --out /tmp/rk-resize/out --probe

  cubic_upsample        Conv2d(3, 8) then interpolate(scale 2, bicubic) on x [1,3,8,12]
  cubic_align_corners   the same with align_corners=True
  cubic_downsample      interpolate(size (5, 7), bicubic) of a Conv2d output [1,8,8,12]
  cubic_posembed        a ViT's position table [1,16,4,4] interpolated (bicubic) to the patch grid
                        [6,6] and added to the patch embeddings of x [1,3,24,24]

Recorded results: rknn2_resize_models.txt.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Upsample(nn.Module):
    def __init__(self, align_corners=False, size=None):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.align_corners, self.size = align_corners, size

    def forward(self, x):
        y = self.conv(x)
        if self.size:
            return F.interpolate(y, size=self.size, mode="bicubic", align_corners=self.align_corners)
        return F.interpolate(y, scale_factor=2, mode="bicubic", align_corners=self.align_corners)


class PosEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch = nn.Conv2d(3, 16, 4, stride=4)
        self.pos = nn.Parameter(torch.randn(1, 16, 4, 4))

    def forward(self, x):
        y = self.patch(x)
        return y + F.interpolate(self.pos, size=y.shape[2:], mode="bicubic", align_corners=False)


MODELS = {
    "cubic_upsample": (Upsample(), (1, 3, 8, 12)),
    "cubic_align_corners": (Upsample(align_corners=True), (1, 3, 8, 12)),
    "cubic_downsample": (Upsample(size=(5, 7)), (1, 3, 8, 12)),
    "cubic_posembed": (PosEmbed(), (1, 3, 24, 24)),
}

for name, (module, shape) in MODELS.items():
    x = torch.randn(*shape)
    torch.onnx.export(
        module, (x,), f"{name}.onnx", input_names=["x"], output_names=["y"], opset_version=13, dynamo=False
    )
    np.savez(f"{name}.inputs.npz", x=x.numpy())
