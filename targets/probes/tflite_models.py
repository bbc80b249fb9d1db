"""Small torch exports behind tflite facts: each shows one onnx2tf
behaviour. Writes NAME.onnx and NAME.inputs.npz (seed 0) to the current directory, the
corpus layout tests/backends/harness.py reads, so the harness runs them through onnx2tf
before and after --target tflite and compares with onnxruntime:

    mkdir /tmp/tfl && cd /tmp/tfl && $REPO/.venv/bin/python $REPO/targets/probes/tflite_models.py
    cd $REPO && BACKENDS_DIR=... .venv/bin/python tests/backends/harness.py --backends tflite \\
        --corpus /tmp/tfl --out /tmp/tfl/out --markdown /tmp/tfl/out/table.md

The numbers in targets/tflite.toml were measured on one group at a time (`tflite_models.py
concat` ...): the weights and inputs depend on what was exported before in the same run.

Grouped ConvTranspose ([[missing]] ConvTranspose when attribute:group):
  ct_dw_input             ConvTranspose1d(64, 64, 3, stride 2, groups 64) on a graph input [1,64,23]
  ct_dw_after_transpose   the same after transpose(1, 2) of [1,23,64]
  ct_g1_after_transpose   groups 1 after transpose(1, 2) (control)
  ct_dw_adain             AdaIN (InstanceNorm1d, style Linear) and LeakyReLU before it (Kokoro's
                          AdainResBlk1d upsampling)
  ct_g1_adain             the same with groups 1 (control)
  ct_g4_after_transpose   ConvTranspose1d(64, 32, 4, stride 2, padding 1, groups 4) after a transpose
  ct2d_dw_after_permute   ConvTranspose2d(16, 16, 3, stride 2, groups 16) after permute(0, 3, 1, 2)

Loop (control_flow loop = false), torch.jit.script:
  loop_input_trip_tanh    h = tanh(h) + x for a trip count given as a graph input
  loop_shape_trip_tanh    the same for range(x.size(0)) (a constant trip count once shapes are static)
  loop_shape_trip_linear  h = relu(linear(h)) for range(x.size(0))
  loop_shape_trip_ln      a hand LayerNorm of tanh(h) + x for range(x.size(0)) (control_flow_op17's body)
  loop_shape_trip_tanh_own  h = tanh(h) + 1 (the body reads no value of the main graph)
  loop_shape_trip_ln_own  a hand LayerNorm of tanh(h) (the same)
  (torch.jit.script unrolls a constant range(3) at export: no Loop)
Concat on axis 1 (Concat when channel-axis-equals-spatial):
  cat_conv_{h8,w8,h10}    two Conv2d(3, 8) outputs [1,8,H,W] concatenated: channels = H, = W, neither
  cat_input_h8            two graph inputs [1,8,8,12] concatenated, then Conv2d
  cat_upsample_h8         nearest 2x upsampling of a [1,8,4,6] Conv output, Concat with a [1,8,8,12] one
  cat_bilinear_h8[_b2]    the same with bilinear upsampling (batch 1, batch 2)
  cat_add_h8              Concat of conv_a(x) + conv_b(x) and conv_c(x), [1,8,8,12] each
  cat_add_resize_h8       Concat of conv(x) + nearest-upsampled conv and a conv output (fpn's first input)
  cat_mul_h8              Concat of conv_a(x) * conv_b(x) and conv_c(x)
  cat_sub_h8              Concat of conv_a(x) - conv_b(x) and conv_c(x)
  cat_add_relu_h8         Concat of relu(conv_a(x) + conv_b(x)) and conv_c(x) (a residual block's output)
  cat_add_second_h8       Concat of conv_c(x) and conv_a(x) + conv_b(x) (the Add second)
  fpn_h8, fpn_h10         fpn_dynamic_hw_op13's FPN (tests/models/corpus_shapes.py) exported static at
                          2x3x16x24 (its Concat over [2,8,8,12] tensors) and 2x3x20x24 ([2,8,10,12])
  fpnv_noadd, fpnv_nobilinear, fpnv_nohead  fpn_h8 without the Add before the Concat, with a
                          nearest second upsampling, without the sigmoid and last upsampling
Reshape of a square rank-3 tensor to rank 2 (Reshape when square-ncw-input):
  flat_square_linear      [2,32,32] -> reshape(-1, 32) -> Linear(32, 32) -> reshape(2, 32, 32)
  flat_square_after_gelu  GELU of a [2,32,32] Linear output, then as above (flax_mixer's token MLP)
  flat_nonsquare_linear   [2,32,16] -> reshape(-1, 16) -> Linear(16, 16) -> reshape back (control)
"""

import sys

import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
rng = np.random.default_rng(0)


def export(name, mod, *shapes, opset=17):
    mod.eval()
    args = tuple(torch.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes)
    names = ["x", "s", "t"][: len(shapes)]
    with torch.no_grad():
        torch.onnx.export(mod, args, f"{name}.onnx", opset_version=opset, input_names=names, dynamo=False)
    np.savez(f"{name}.inputs.npz", **{n: a.numpy() for n, a in zip(names, args)})


class CT1d(nn.Module):
    def __init__(self, cin, cout, k, groups, transpose, padding=1, output_padding=1):
        super().__init__()
        self.transpose = transpose
        self.ct = nn.ConvTranspose1d(
            cin, cout, k, stride=2, padding=padding, output_padding=output_padding, groups=groups
        )

    def forward(self, x):
        return self.ct(x.transpose(1, 2) if self.transpose else x)


class AdaINUpsample(nn.Module):
    """Kokoro's AdainResBlk1d shortcut-free half: AdaIN, LeakyReLU, depthwise upsampling."""

    def __init__(self, groups):
        super().__init__()
        self.norm = nn.InstanceNorm1d(64, affine=False)
        self.fc = nn.Linear(128, 128)
        self.ct = nn.ConvTranspose1d(64, 64, 3, stride=2, padding=1, output_padding=1, groups=groups)

    def forward(self, x, s):
        gamma, beta = torch.chunk(self.fc(s).view(s.size(0), 128, 1), 2, dim=1)
        return self.ct(nn.functional.leaky_relu((1 + gamma) * self.norm(x) + beta, 0.2))


class CT2d(nn.Module):
    def __init__(self):
        super().__init__()
        self.ct = nn.ConvTranspose2d(16, 16, 3, stride=2, padding=1, output_padding=1, groups=16)

    def forward(self, x):
        return self.ct(x.permute(0, 3, 1, 2))


def convtranspose():
    export("ct_dw_input", CT1d(64, 64, 3, 64, False), (1, 64, 23))
    export("ct_dw_after_transpose", CT1d(64, 64, 3, 64, True), (1, 23, 64))
    export("ct_g1_after_transpose", CT1d(64, 64, 3, 1, True), (1, 23, 64))
    export("ct_dw_adain", AdaINUpsample(64), (1, 64, 23), (1, 128))
    export("ct_g1_adain", AdaINUpsample(1), (1, 64, 23), (1, 128))
    export("ct_g4_after_transpose", CT1d(64, 32, 4, 4, True, output_padding=0), (1, 23, 64))
    export("ct2d_dw_after_permute", CT2d(), (1, 12, 10, 16))


class LoopTanh(nn.Module):
    def forward(self, x, steps: int):
        h = x
        for _ in range(steps):
            h = torch.tanh(h) + x
        return h


class LoopTanhShape(nn.Module):
    def forward(self, x):
        h = x
        for _ in range(x.size(0)):
            h = torch.tanh(h) + x
        return h


class LoopTanhOwn(nn.Module):
    def forward(self, x):
        h = x
        for _ in range(x.size(0)):
            h = torch.tanh(h) + 1.0
        return h


class LoopLayerNormOwn(nn.Module):
    def forward(self, x):
        h = x
        for _ in range(x.size(0)):
            t = torch.tanh(h)
            d = t - t.mean(-1, keepdim=True)
            h = d / torch.sqrt(d.pow(2).mean(-1, keepdim=True) + 1e-5)
        return h


class LoopLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        h = x
        for _ in range(x.size(0)):
            h = torch.relu(self.fc(h))
        return h


class LoopLayerNorm(nn.Module):
    def forward(self, x):
        h = x
        for _ in range(x.size(0)):
            t = torch.tanh(h) + x
            d = t - t.mean(-1, keepdim=True)
            h = d / torch.sqrt(d.pow(2).mean(-1, keepdim=True) + 1e-5)
        return h


def export_script(name, mod, inputs, names):
    script = torch.jit.script(mod.eval())
    with torch.no_grad():
        torch.onnx.export(script, inputs, f"{name}.onnx", opset_version=17, input_names=names, dynamo=False)
    np.savez(f"{name}.inputs.npz", **{n: np.asarray(a) for n, a in zip(names, inputs)})


def loop():
    x = torch.from_numpy(rng.standard_normal((2, 16)).astype(np.float32))
    export_script("loop_input_trip_tanh", LoopTanh(), (x, 3), ["x", "steps"])
    export_script("loop_shape_trip_tanh", LoopTanhShape(), (x,), ["x"])
    export_script("loop_shape_trip_linear", LoopLinear(), (x,), ["x"])
    export_script("loop_shape_trip_ln", LoopLayerNorm(), (x,), ["x"])
    export_script("loop_shape_trip_tanh_own", LoopTanhOwn(), (x,), ["x"])
    export_script("loop_shape_trip_ln_own", LoopLayerNormOwn(), (x,), ["x"])


class CatConv(nn.Module):
    def __init__(self, upsample=None):
        super().__init__()
        self.a, self.b = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(3, 8, 3, padding=1, stride=2 if upsample else 1)
        self.upsample = upsample
        self.out = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        b = self.b(x)
        if self.upsample:
            b = nn.functional.interpolate(b, scale_factor=2.0, mode=self.upsample)
        return self.out(torch.cat([torch.relu(self.a(x)), b], 1))


class FPN(nn.Module):
    """fpn_dynamic_hw_op13's module (tests/models/corpus_shapes.py), exported with static shapes."""

    def __init__(self, variant=None):
        super().__init__()
        self.variant = variant
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.ReLU())
        self.c2 = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.lat1 = nn.Conv2d(8, 8, 1, bias=False)
        self.lat2 = nn.Conv2d(16, 8, 1)
        self.bias = nn.Parameter(torch.randn(8, 1, 1))
        self.out = nn.Conv2d(16, 1, 3, 1, 1)

    def forward(self, x):
        f = nn.functional
        a = self.c1(x)
        b = self.c2(a)
        p = self.lat1(a) + self.bias
        up = f.interpolate(self.lat2(b) * 0.5, size=a.shape[2:], mode="nearest")
        first = p if self.variant == "noadd" else p + up
        mode = "nearest" if self.variant == "nobilinear" else "bilinear"
        cat = torch.cat([first, f.interpolate(self.lat2(b), size=p.shape[2:], mode=mode)], 1)
        cat = cat.permute(0, 2, 3, 1).permute(0, 3, 1, 2)
        if self.variant == "nohead":
            return self.out(cat)
        y = torch.sigmoid(self.out(cat))
        return f.interpolate(y, size=x.shape[2:], mode="bilinear")


class CatBinary(nn.Module):
    def __init__(self, op):
        super().__init__()
        self.op = op
        self.a, self.c = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(3, 8, 3, padding=1)
        self.b = nn.Conv2d(3, 8, 3, padding=1, stride=2 if op == "add_resize" else 1)
        self.out = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        a, b = self.a(x), self.b(x)
        if self.op == "add_resize":
            b = nn.functional.interpolate(b, scale_factor=2.0, mode="nearest")
        first = a * b if self.op == "mul" else a - b if self.op == "sub" else a + b
        if self.op == "add_relu":
            first = torch.relu(first)
        if self.op == "add_second":
            return self.out(torch.cat([self.c(x), first], 1))
        return self.out(torch.cat([first, self.c(x)], 1))


class CatInput(nn.Module):
    def __init__(self):
        super().__init__()
        self.out = nn.Conv2d(16, 4, 1)

    def forward(self, x, s):
        return self.out(torch.cat([x, s], 1))


def concat():
    export("cat_conv_h8", CatConv(), (1, 3, 8, 12))
    export("cat_conv_w8", CatConv(), (1, 3, 12, 8))
    export("cat_conv_h10", CatConv(), (1, 3, 10, 12))
    export("cat_input_h8", CatInput(), (1, 8, 8, 12), (1, 8, 8, 12))
    export("cat_upsample_h8", CatConv(upsample="nearest"), (1, 3, 8, 12))
    export("cat_bilinear_h8", CatConv(upsample="bilinear"), (1, 3, 8, 12))
    export("cat_bilinear_h8_b2", CatConv(upsample="bilinear"), (2, 3, 8, 12))
    export("cat_add_h8", CatBinary("add"), (1, 3, 8, 12))
    export("cat_add_resize_h8", CatBinary("add_resize"), (1, 3, 8, 12))
    export("cat_mul_h8", CatBinary("mul"), (1, 3, 8, 12))
    export("cat_sub_h8", CatBinary("sub"), (1, 3, 8, 12))
    export("cat_add_relu_h8", CatBinary("add_relu"), (1, 3, 8, 12))
    export("cat_add_second_h8", CatBinary("add_second"), (1, 3, 8, 12))
    export("fpn_h8", FPN(), (2, 3, 16, 24), opset=13)
    export("fpn_h10", FPN(), (2, 3, 20, 24), opset=13)
    for variant in ("noadd", "nobilinear", "nohead"):
        export(f"fpnv_{variant}", FPN(variant), (2, 3, 16, 24), opset=13)


class FlatLinear(nn.Module):
    def __init__(self, d, gelu=False):
        super().__init__()
        self.d, self.gelu = d, gelu
        self.pre = nn.Linear(d, d)
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        if self.gelu:
            x = nn.functional.gelu(self.pre(x))
        n, c, _ = x.shape
        return self.fc(x.reshape(-1, self.d)).reshape(n, c, self.d)


def reshape():
    export("flat_square_linear", FlatLinear(32), (2, 32, 32))
    export("flat_square_after_gelu", FlatLinear(32, gelu=True), (2, 32, 32))
    export("flat_nonsquare_linear", FlatLinear(16), (2, 32, 16))


GROUPS = {"convtranspose": convtranspose, "loop": loop, "concat": concat, "reshape": reshape}

if __name__ == "__main__":
    for g in sys.argv[1:] or GROUPS:
        GROUPS[g]()
