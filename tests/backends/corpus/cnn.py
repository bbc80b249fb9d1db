"""Edge CNN families written out in torch at small widths (the project's venv has no
torchvision): ShuffleNetV2, SqueezeNet, DenseNet, a CenterNet-style detector and a
DBNet-style text detector, batch 1."""

from __future__ import annotations


def _shufflenet(opset):
    import torch
    from torch import nn

    def cbr(a, b, k=1, s=1, groups=1, relu=True):
        layers = [nn.Conv2d(a, b, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(b)]
        return nn.Sequential(*layers, *([nn.ReLU()] if relu else []))

    class Unit(nn.Module):
        """ShuffleNetV2 unit: split (stride 1) or two branches (stride 2), concat, shuffle."""

        def __init__(self, a, b, stride):
            super().__init__()
            self.stride, half = stride, b // 2
            inner = a if stride > 1 else half
            self.branch2 = nn.Sequential(
                cbr(inner, half), cbr(half, half, 3, stride, half, relu=False), cbr(half, half)
            )
            if stride > 1:
                self.branch1 = nn.Sequential(cbr(a, a, 3, stride, a, relu=False), cbr(a, half))

        def forward(self, x):
            if self.stride == 1:
                x1, x2 = x.chunk(2, dim=1)
                out = torch.cat((x1, self.branch2(x2)), 1)
            else:
                out = torch.cat((self.branch1(x), self.branch2(x)), 1)
            n, c, h, w = out.shape
            return out.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)

    class ShuffleNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(cbr(3, 16, 3, 2), nn.MaxPool2d(3, 2, 1))
            self.stages = nn.Sequential(Unit(16, 32, 2), Unit(32, 32, 1), Unit(32, 64, 2), Unit(64, 64, 1))
            self.fc = nn.Linear(64, 10)

        def forward(self, x):
            return self.fc(self.stages(self.stem(x)).mean((2, 3)))

    return ShuffleNetV2(), {"image": ("randn", (1, 3, 64, 64))}, ["logits"], opset


def _squeezenet(opset):
    import torch
    from torch import nn

    class Fire(nn.Module):
        def __init__(self, a, squeeze, expand):
            super().__init__()
            self.squeeze = nn.Sequential(nn.Conv2d(a, squeeze, 1), nn.ReLU())
            self.e1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
            self.e3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

        def forward(self, x):
            s = self.squeeze(x)
            return torch.cat([self.e1(s), self.e3(s)], 1)

    class SqueezeNet11(nn.Module):
        """SqueezeNet 1.1 at a quarter width: ceil-mode max pools, conv classifier."""

        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 16, 3, 2),
                nn.ReLU(),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(16, 8, 16),
                Fire(32, 8, 16),
                nn.MaxPool2d(3, 2, ceil_mode=True),
                Fire(32, 16, 32),
            )
            self.classifier = nn.Sequential(nn.Conv2d(64, 10, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

        def forward(self, x):
            return torch.flatten(self.classifier(self.features(x)), 1)

    return SqueezeNet11(), {"image": ("randn", (1, 3, 64, 64))}, ["logits"], opset


def _densenet(opset):
    import torch
    from torch import nn

    class DenseLayer(nn.Module):
        def __init__(self, a, growth):
            super().__init__()
            self.body = nn.Sequential(
                nn.BatchNorm2d(a),
                nn.ReLU(),
                nn.Conv2d(a, 2 * growth, 1, bias=False),
                nn.BatchNorm2d(2 * growth),
                nn.ReLU(),
                nn.Conv2d(2 * growth, growth, 3, padding=1, bias=False),
            )

        def forward(self, x):
            return torch.cat([x, self.body(x)], 1)

    class DenseNet(nn.Module):
        """Two dense blocks (BN-ReLU-Conv pre-activation, concat growth) and a transition."""

        def __init__(self, growth=8):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU())
            self.block1 = nn.Sequential(DenseLayer(16, growth), DenseLayer(24, growth))
            self.transition = nn.Sequential(nn.BatchNorm2d(32), nn.ReLU(), nn.Conv2d(32, 16, 1), nn.AvgPool2d(2))
            self.block2 = nn.Sequential(DenseLayer(16, growth), DenseLayer(24, growth))
            self.norm = nn.BatchNorm2d(32)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            f = self.block2(self.transition(self.block1(self.stem(x))))
            return self.fc(torch.relu(self.norm(f)).mean((2, 3)))

    return DenseNet(), {"image": ("randn", (1, 3, 32, 32))}, ["logits"], opset


def _centernet(opset):
    import torch
    from torch import nn

    class CenterNet(nn.Module):
        """Stride-8 backbone, ConvTranspose upsampling to stride 2, heatmap/size/offset heads;
        peaks kept where a 3x3 max pool equals the heatmap (the NMS-free decode)."""

        def __init__(self, classes=3):
            super().__init__()
            self.backbone = nn.Sequential(
                *(m for a, b in ((3, 16), (16, 24), (24, 32)) for m in (nn.Conv2d(a, b, 3, 2, 1), nn.ReLU()))
            )
            self.up = nn.Sequential(nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 16, 4, 2, 1))
            self.heat, self.size, self.offset = nn.Conv2d(16, classes, 1), nn.Conv2d(16, 2, 1), nn.Conv2d(16, 2, 1)

        def forward(self, x):
            f = torch.relu(self.up(self.backbone(x)))
            heat = torch.sigmoid(self.heat(f))
            peaks = heat * (nn.functional.max_pool2d(heat, 3, 1, 1) == heat).float()
            return peaks, self.size(f), self.offset(f)

    return CenterNet(), {"image": ("randn", (1, 3, 64, 64))}, ["heatmap", "size", "offset"], opset


def _dbnet(opset):
    import torch
    from torch import nn

    class DBNet(nn.Module):
        """DBNet-style text detector: a 4-level backbone, an FPN that upsamples and sums,
        concatenated levels, a probability head (ConvTranspose x2, sigmoid) and a threshold
        head, combined by the differentiable binarization 1 / (1 + exp(-k (P - T)))."""

        def __init__(self):
            super().__init__()
            widths = (3, 8, 16, 24, 32)
            self.stages = nn.ModuleList(
                nn.Sequential(nn.Conv2d(a, b, 3, 2, 1), nn.BatchNorm2d(b), nn.ReLU())
                for a, b in zip(widths, widths[1:])
            )
            self.lateral = nn.ModuleList(nn.Conv2d(c, 16, 1) for c in widths[1:])
            self.smooth = nn.ModuleList(nn.Conv2d(16, 4, 3, padding=1) for _ in widths[1:])

            def head():
                return nn.Sequential(
                    nn.Conv2d(16, 4, 3, padding=1),
                    nn.BatchNorm2d(4),
                    nn.ReLU(),
                    nn.ConvTranspose2d(4, 4, 2, 2),
                    nn.ReLU(),
                    nn.ConvTranspose2d(4, 1, 2, 2),
                    nn.Sigmoid(),
                )

            self.prob, self.thresh = head(), head()

        def forward(self, x):
            feats = []
            for stage in self.stages:
                x = stage(x)
                feats.append(x)
            lat = [conv(f) for conv, f in zip(self.lateral, feats)]
            for i in range(len(lat) - 2, -1, -1):
                lat[i] = lat[i] + nn.functional.interpolate(lat[i + 1], scale_factor=2.0, mode="nearest")
            size = lat[0].shape[-2:]
            fused = torch.cat(
                [nn.functional.interpolate(s(f), size=size, mode="nearest") for s, f in zip(self.smooth, lat)], 1
            )
            p, t = self.prob(fused), self.thresh(fused)
            return torch.reciprocal(1 + torch.exp(-50 * (p - t)))

    return DBNet(), {"image": ("randn", (1, 3, 64, 64))}, ["binary_map"], opset


MODELS = {
    "shufflenet_v2_op13_b1": lambda: _shufflenet(13),
    "squeezenet_op13_b1": lambda: _squeezenet(13),
    "densenet_op13_b1": lambda: _densenet(13),
    "centernet_op13_b1": lambda: _centernet(13),
    "dbnet_op13_b1": lambda: _dbnet(13),
}
