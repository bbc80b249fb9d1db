"""LayerNorm corpus: nn.LayerNorm across opsets and the hand-written forms found in the wild.

Every hand-written variant is wrapped between two Linear layers so that the norm's input
and output are computed values, as in real models, not graph inputs and outputs.
Variants that are NOT LayerNorms (eps outside the sqrt, unbiased variance) are tagged
"must-not-fuse-layernorm" and record "LayerNorm": 0; their constants are chosen so that
a wrong fusion changes the outputs far beyond the oracle's 1e-4 tolerance.
"""

from __future__ import annotations

import contextlib

import torch
from corpus_lib import DYNAMO, TORCHSCRIPT, Spec
from torch import nn

D = 32  # hidden size
SHAPE = (2, 5, D)  # (batch, sequence, hidden)


class WithNorm(nn.Module):
    """Linear -> norm -> Linear."""

    def __init__(self, norm: nn.Module, d: int = D):
        super().__init__()
        self.proj_in = nn.Linear(d, d)
        self.norm = norm
        self.proj_out = nn.Linear(d, d)

    def forward(self, x):
        return self.proj_out(self.norm(self.proj_in(x)))


class _HandNorm(nn.Module):
    corpus_kind = "LayerNorm"

    def __init__(self, d: int = D, eps: float = 1e-5, affine: bool = True):
        super().__init__()
        self.eps = eps
        if affine:
            self.weight = nn.Parameter(torch.ones(d))
            self.bias = nn.Parameter(torch.zeros(d))


class PowDivLayerNorm(_HandNorm):
    """The textbook form: Pow(d, 2) variance, Div by Sqrt, then Mul/Add affine."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(-1, keepdim=True)
        return d / torch.sqrt(var + self.eps) * self.weight + self.bias


class MulRsqrtLayerNorm(_HandNorm):
    """Mul(d, d) variance and rsqrt (TorchScript: Div(1, Sqrt); dynamo: Reciprocal(Sqrt));
    the affine weight is the left Mul operand."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        var = (d * d).mean(-1, keepdim=True)
        return self.weight * (d * torch.rsqrt(var + self.eps)) + self.bias


class DupSubLayerNorm(_HandNorm):
    """x - mean written twice, so the graph holds two identical Sub nodes."""

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.weight + self.bias


class NoAffineLayerNorm(_HandNorm):
    """No weight/bias; reduces over axis 1 of a rank-2 input (positive axis)."""

    def __init__(self, d: int = D, eps: float = 1e-6):
        super().__init__(d, eps, affine=False)

    def forward(self, x):
        mean = x.mean(1, keepdim=True)
        d = x - mean
        var = d.pow(2).mean(1, keepdim=True)
        return d / torch.sqrt(var + self.eps)


class LayerNorm2d(nn.Module):
    """ConvNeXt/SAM channels-first LayerNorm: normalizes NCHW over C (axis 1) only.

    LayerNormalization(axis=1) would normalize over C, H and W together, which is a
    different function: a fuser must transpose to channels-last or leave it alone.
    """

    corpus_kind = "LayerNorm2d"

    def __init__(self, channels: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(channels))
        self.bias = nn.Parameter(torch.zeros(channels))
        self.eps = eps

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + self.eps)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class StdEpsNorm(_HandNorm):
    """(x - mean) / (std + eps): eps outside the square root, so NOT a LayerNorm.

    eps = 1e-2 makes the difference to a LayerNorm about 0.5% of the output.
    """

    corpus_kind = "NotLayerNorm"

    def __init__(self, d: int = D):
        super().__init__(d, eps=1e-2)

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        d = x - mean
        std = torch.sqrt(d.pow(2).mean(-1, keepdim=True))
        return d / (std + self.eps) * self.weight + self.bias


class UnbiasedVarNorm(_HandNorm):
    """torch.var's default unbiased (N-1) variance: NOT a LayerNorm (factor N/(N-1))."""

    corpus_kind = "NotLayerNorm"

    def forward(self, x):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias


class LocalLayerNorm(PowDivLayerNorm):
    """Exported as a model-local function: the TorchScript exporter names the function
    domain after the class's __module__, hence "local"."""

    __module__ = "local"


class TwoLocalNorms(nn.Module):
    """Two calls of the same local function, with different weights."""

    def __init__(self):
        super().__init__()
        self.proj_in = nn.Linear(D, D)
        self.norm1 = LocalLayerNorm()
        self.mid = nn.Linear(D, D)
        self.norm2 = LocalLayerNorm()

    def forward(self, x):
        return self.norm2(self.mid(self.norm1(self.proj_in(x))))


class Fp16CastNorm(nn.Module):
    """fp16 Linear layers with the LayerNorm computed in fp32 between Casts (AMP style)."""

    def __init__(self):
        super().__init__()
        self.proj_in = nn.Linear(D, D).half()
        self.norm = PowDivLayerNorm()
        self.proj_out = nn.Linear(D, D).half()

    def forward(self, x):
        h = self.proj_in(x)
        h = self.norm(h.float()).half()
        return self.proj_out(h)


def _x(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def _nn_layernorm(opset: int, tags: list[str], dynamic: bool = False) -> Spec:
    return Spec(
        module=WithNorm(nn.LayerNorm(D)),
        args=(_x(*SHAPE),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=opset,
        tags=["layernorm", "nn-layernorm", *tags],
        dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}} if dynamic else None,
    )


def layernorm_op13() -> Spec:
    return _nn_layernorm(13, ["layernorm-decomposed", "reducemean-axes-attr"], dynamic=True)


def layernorm_op15() -> Spec:
    return _nn_layernorm(15, ["layernorm-decomposed", "reducemean-axes-attr"])


def layernorm_op16() -> Spec:
    return _nn_layernorm(16, ["layernorm-decomposed", "reducemean-axes-attr"])


def layernorm_op17() -> Spec:
    return _nn_layernorm(17, ["layernorm-op"])


def layernorm_op18() -> Spec:
    return _nn_layernorm(18, ["layernorm-op"])


def layernorm_op20() -> Spec:
    return _nn_layernorm(20, ["layernorm-op"], dynamic=True)


def _hand(norm: nn.Module, opset: int, tags: list[str], exporter: str = TORCHSCRIPT, shape=SHAPE, **kw) -> Spec:
    axes_tag = "reducemean-axes-attr" if opset < 18 else "reducemean-axes-input"
    return Spec(
        module=WithNorm(norm),
        args=(_x(*shape),),
        input_names=["x"],
        output_names=["y"],
        exporter=exporter,
        opset=opset,
        tags=["hand-written", axes_tag, *tags],
        **kw,
    )


def ln_pow_div_op17() -> Spec:
    return _hand(PowDivLayerNorm(), 17, ["layernorm", "layernorm-decomposed", "pow"])


def ln_mul_rsqrt_op18() -> Spec:
    return _hand(MulRsqrtLayerNorm(), 18, ["layernorm", "layernorm-decomposed", "rsqrt"])


def ln_reciprocal_dynamo18() -> Spec:
    return _hand(MulRsqrtLayerNorm(), 18, ["layernorm", "layernorm-decomposed", "reciprocal"], exporter=DYNAMO)


def ln_dup_sub_dynamo18() -> Spec:
    # TorchScript's exporter CSEs the two Subs away, and so does the dynamo exporter's
    # optimizer; the raw dynamo graph (optimize=False, also with Transposed weights and
    # Reshaped constants) keeps them.
    return _hand(
        DupSubLayerNorm(),
        18,
        ["layernorm", "layernorm-decomposed", "duplicated-sub", "unoptimized"],
        exporter=DYNAMO,
        dynamo_kwargs={"optimize": False},
    )


def ln_noaffine_op18() -> Spec:
    return _hand(NoAffineLayerNorm(), 18, ["layernorm", "layernorm-decomposed", "no-affine"], shape=(6, D))


def ln_std_eps_op17() -> Spec:
    return _hand(
        StdEpsNorm(),
        17,
        ["must-not-fuse-layernorm"],
        notes=["eps (1e-2) is added to the standard deviation, not to the variance"],
    )


def ln_unbiased_var_op17() -> Spec:
    return _hand(
        UnbiasedVarNorm(),
        17,
        ["must-not-fuse-layernorm", "unbiased-variance"],
        notes=["variance divides by N-1 (torch.var default): not a LayerNorm"],
    )


def ln_fp16_casts_op17() -> Spec:
    return Spec(
        module=Fp16CastNorm(),
        args=(_x(*SHAPE).half(),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["layernorm", "layernorm-decomposed", "hand-written", "fp16"],
        rtol=1e-2,
        atol=1e-2,
        notes=["torch computes the fp16 Linear layers on CPU differently from onnxruntime: tolerance 1e-2"],
    )


def ln2d_channels_first_op17() -> Spec:
    module = nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1),
        LayerNorm2d(16),
        nn.GELU(),
        nn.Conv2d(16, 8, 1),
    )
    return Spec(
        module=module,
        args=(_x(2, 3, 8, 8),),
        input_names=["image"],
        output_names=["features"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["layernorm-channels-first", "hand-written", "gelu-erf"],
        notes=[
            "normalizes over axis 1 only; a single LayerNormalization(axis=1) would normalize over "
            "C,H,W and is NOT equivalent (needs Transposes), hence modules.LayerNorm = 0"
        ],
    )


@contextlib.contextmanager
def _custom_layernorm_symbolic(opset: int):
    """Exports aten::layer_norm as custom::Custom_LayerNorm(x, weight, bias) with epsilon
    and axis attributes, the way vendor toolchains emit their own LayerNorm op."""
    from torch.onnx import register_custom_op_symbolic, symbolic_helper, unregister_custom_op_symbolic

    @symbolic_helper.parse_args("v", "is", "v", "v", "f", "b")
    def layer_norm(g, x, normalized_shape, weight, bias, eps, cudnn_enable):
        out = g.op("custom::Custom_LayerNorm", x, weight, bias, epsilon_f=eps, axis_i=-len(normalized_shape))
        out.setType(x.type())
        return out

    register_custom_op_symbolic("aten::layer_norm", layer_norm, opset)
    try:
        yield
    finally:
        unregister_custom_op_symbolic("aten::layer_norm", opset)


def ln_custom_domain_op17() -> Spec:
    return Spec(
        module=WithNorm(nn.LayerNorm(D)),
        args=(_x(*SHAPE),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["layernorm", "custom-domain", "custom-layernorm"],
        export_kwargs={"custom_opsets": {"custom": 1}},
        context=lambda: _custom_layernorm_symbolic(17),
        runnable=False,
        notes=["custom symbolic registered for aten::layer_norm (no post-export edit)"],
    )


def ln_local_function_op17() -> Spec:
    return Spec(
        module=TwoLocalNorms(),
        args=(_x(*SHAPE),),
        input_names=["x"],
        output_names=["y"],
        exporter=TORCHSCRIPT,
        opset=17,
        tags=["layernorm", "layernorm-decomposed", "hand-written", "local-function"],
        export_kwargs={"export_modules_as_functions": {LocalLayerNorm}},
        notes=["export_modules_as_functions: one FunctionProto local::LocalLayerNorm, called twice"],
    )
