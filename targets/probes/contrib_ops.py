"""Which onnxruntime contrib ops (com.microsoft, and SimplifiedLayerNormalization /
SkipSimplifiedLayerNormalization in the default domain) a backend loads: one single-node
model per op that lower-contrib-ops lowers (ai.onnx opset 13, IR 7, float32, typed
inputs), loaded by the backend. The probe is the load: onnxruntime's InferenceSession
(kernel lookup), OpenVINO's read_model + compile_model on CPU.

    python targets/probes/contrib_ops.py make /tmp/contrib            # onnx needed
    .backends/ort-1.10/venv/bin/python targets/probes/contrib_ops.py ort /tmp/contrib
    .backends/openvino/venv/bin/python targets/probes/contrib_ops.py openvino /tmp/contrib

Prints one line per op: OK, or REFUSED with the backend's first message line."""

from __future__ import annotations

import glob
import os
import sys

MS = "com.microsoft"
B, S, D, N = 2, 4, 8, 2
F, I64, I32, U8, I8, BOOL = 1, 7, 6, 2, 3, 9  # TensorProto element types

# QLinearAdd and QLinearMul: a, its scale and zero point, the same for b, then c's.
QLINEAR_BINARY = [
    ("a", U8, [B, D]),
    ("as", F, []),
    ("az", U8, []),
    ("b", U8, [B, D]),
    ("bs", F, []),
    ("bz", U8, []),
    ("cs", F, []),
    ("cz", U8, []),
]


# op -> (domain, inputs [(name, elem type, shape) or None for omitted], n outputs, attributes);
# OP.FORM names a form of OP (the model file is OP.FORM.onnx).
def _qattention_inputs(mask):
    """The quantizer's QAttention inputs, with the mask given or omitted (None)."""
    return [
        ("x", U8, [B, S, D]),
        ("w", I8, [D, 3 * D]),
        ("b", F, [3 * D]),
        ("xs", F, []),
        ("ws", F, []),
        mask,
        ("xz", U8, []),
        ("wz", I8, []),
    ]


OPS = {
    "SkipLayerNormalization": (MS, [("x", F, [B, S, D]), ("skip", F, [B, S, D]), ("g", F, [D]), ("b", F, [D])], 1, {}),
    # output 3, the sum x + skip, as the optimizer writes it (outputs 1 and 2 left out)
    "SkipLayerNormalization.sum-output": (
        MS,
        [("x", F, [B, S, D]), ("skip", F, [B, S, D]), ("g", F, [D]), ("b", F, [D])],
        4,
        {},
    ),
    "SkipSimplifiedLayerNormalization": (MS, [("x", F, [B, S, D]), ("skip", F, [B, S, D]), ("g", F, [D])], 1, {}),
    "SimplifiedLayerNormalization": ("", [("x", F, [B, S, D]), ("g", F, [D])], 1, {"axis": -1}),
    # the default domain's LayerNormalization below opset 17 (here 13): onnxruntime's own
    "LayerNormalization": ("", [("x", F, [B, S, D]), ("g", F, [D]), ("b", F, [D])], 1, {"axis": -1}),
    "Gelu": (MS, [("x", F, [B, S, D])], 1, {}),
    "FastGelu": (MS, [("x", F, [B, S, D]), ("b", F, [D])], 1, {}),
    "BiasGelu": (MS, [("x", F, [B, S, D]), ("b", F, [D])], 1, {}),
    "QuickGelu": (MS, [("x", F, [B, S, D])], 1, {"alpha": 1.702}),
    "BiasAdd": (MS, [("x", F, [B, S, D]), ("b", F, [D]), ("skip", F, [B, S, D])], 1, {}),
    "FusedMatMul": (MS, [("a", F, [B, S, D]), ("b", F, [D, D])], 1, {"alpha": 0.5}),
    "RotaryEmbedding": (
        MS,
        [("x", F, [B, S, D]), ("pos", I64, [B, S]), ("cos", F, [16, 2]), ("sin", F, [16, 2])],
        1,
        {"num_heads": N},
    ),
    "MatMulNBits": (
        MS,
        [("a", F, [B, 32]), ("w", U8, [D, 1, 16]), ("scales", F, [D])],
        1,
        {"K": 32, "N": D, "bits": 4, "block_size": 32},
    ),
    "Attention": (
        MS,
        [("x", F, [B, S, D]), ("w", F, [D, 3 * D]), ("b", F, [3 * D]), ("mask", I32, [B, S])],
        1,
        {"num_heads": N},
    ),
    # The quantizer's QAttention with the attribute onnxruntime 1.13 added to Attention
    "QAttention.mask_filter_value": (
        MS,
        _qattention_inputs(("mask", I32, [B])),
        1,
        {"num_heads": N, "mask_filter_value": -10000.0},
    ),
    "MultiHeadAttention": (MS, [("q", F, [B, S, D]), ("k", F, [B, S, D]), ("v", F, [B, S, D])], 1, {"num_heads": N}),
    "EmbedLayerNormalization": (
        MS,
        [
            ("ids", I32, [B, S]),
            ("seg", I32, [B, S]),
            ("we", F, [16, D]),
            ("pe", F, [16, D]),
            ("se", F, [2, D]),
            ("g", F, [D]),
            ("b", F, [D]),
        ],
        2,
        {},
    ),
    "GroupQueryAttention": (
        MS,
        [
            ("q", F, [B, S, D]),
            ("k", F, [B, S, D]),
            ("v", F, [B, S, D]),
            ("pk", F, [B, N, 0, 4]),
            ("pv", F, [B, N, 0, 4]),
            ("seqlens_k", I32, [B]),
            ("total", I32, []),
        ],
        3,
        {"num_heads": N, "kv_num_heads": N},
    ),
    "BiasSplitGelu": (MS, [("x", F, [B, S, 2 * D]), ("b", F, [2 * D])], 1, {}),
    "FusedConv": (MS, [("x", F, [1, 2, 5, 5]), ("w", F, [3, 2, 3, 3])], 1, {"activation": "Relu"}),
    "DynamicQuantizeMatMul": (MS, [("a", F, [B, D]), ("w", I8, [D, D]), ("s", F, []), ("z", I8, [])], 1, {}),
    "MatMulIntegerToFloat": (MS, [("a", U8, [B, D]), ("w", I8, [D, D]), ("sa", F, []), ("sb", F, [])], 1, {}),
    "QLinearAdd": (
        MS,
        QLINEAR_BINARY,
        1,
        {},
    ),
    "QLinearMul": (
        MS,
        QLINEAR_BINARY,
        1,
        {},
    ),
    "QLinearSigmoid": (MS, [("a", U8, [B, D]), ("as", F, []), ("az", U8, []), ("cs", F, []), ("cz", U8, [])], 1, {}),
    "QLinearLeakyRelu": (
        MS,
        [("a", U8, [B, D]), ("as", F, []), ("az", U8, []), ("cs", F, []), ("cz", U8, [])],
        1,
        {"alpha": 0.1},
    ),
    "QLinearGlobalAveragePool": (
        MS,
        [("a", U8, [1, 2, 4, 4]), ("as", F, []), ("az", U8, []), ("cs", F, []), ("cz", U8, [])],
        1,
        {},
    ),
    "QLinearConcat": (
        MS,
        [
            ("cs", F, []),
            ("cz", U8, []),
            ("a", U8, [B, D]),
            ("as", F, []),
            ("az", U8, []),
            ("b", U8, [B, D]),
            ("bs", F, []),
            ("bz", U8, []),
        ],
        1,
        {"axis": 1},
    ),
    "QLinearAveragePool": (
        MS,
        [("a", U8, [1, 2, 4, 4]), ("as", F, []), ("az", U8, []), ("cs", F, []), ("cz", U8, [])],
        1,
        {"kernel_shape": [2, 2]},
    ),
    "QLinearWhere": (
        MS,
        [
            ("cond", BOOL, [B, D]),
            ("a", U8, [B, D]),
            ("as", F, []),
            ("az", U8, []),
            ("b", U8, [B, D]),
            ("bs", F, []),
            ("bz", U8, []),
            ("cs", F, []),
            ("cz", U8, []),
        ],
        1,
        {},
    ),
    "QLinearSoftmax": (
        MS,
        [("a", U8, [B, D]), ("as", F, []), ("az", U8, []), ("cs", F, []), ("cz", U8, [])],
        1,
        {"opset": 13, "axis": -1},
    ),
    "QGemm": (
        MS,
        [("a", U8, [B, D]), ("as", F, []), ("az", U8, []), ("w", I8, [D, D]), ("ws", F, []), ("wz", I8, [])],
        1,
        {},
    ),
    "QLinearConv": (
        MS,
        [
            ("a", U8, [1, 2, 5, 5]),
            ("as", F, []),
            ("az", U8, []),
            ("w", I8, [3, 2, 3, 3]),
            ("ws", F, []),
            ("wz", I8, []),
            ("cs", F, []),
            ("cz", U8, []),
        ],
        1,
        {},
    ),
    # uint8 data (two 4-bit values a byte: IR 7 has no int4), scales [rows, 1 block]
    "GatherBlockQuantized": (
        MS,
        [("d", U8, [16, 8]), ("ids", I64, [B, S]), ("s", F, [16, 1])],
        1,
        {"gather_axis": 0, "quantize_axis": 1, "block_size": 16, "bits": 4},
    ),
    "QAttention": (
        MS,
        _qattention_inputs(None),
        1,
        {"num_heads": N},
    ),
    "QEmbedLayerNormalization": (
        MS,
        [
            ("ids", I32, [B, S]),
            ("seg", I32, [B, S]),
            ("we", U8, [16, D]),
            ("pe", U8, [16, D]),
            ("se", U8, [2, D]),
            ("g", U8, [D]),
            ("bt", U8, [D]),
            ("mask", I32, [B, S]),
            ("wes", F, []),
            ("pes", F, []),
            ("ses", F, []),
            ("gs", F, []),
            ("bts", F, []),
            ("wez", U8, []),
            ("pez", U8, []),
            ("sez", U8, []),
            ("gz", U8, []),
            ("btz", U8, []),
        ],
        2,
        {},
    ),
    "MatMulBnb4": (
        MS,
        [("a", F, [B, 16]), ("w", U8, [16]), ("absmax", F, [2])],
        1,
        {"K": 16, "N": 2, "block_size": 16, "quant_type": 1},
    ),
    # the diffusion ops of the optimizer's unet/vae model types (NHWC), T5's bias, the gated bias
    "GroupNorm": (MS, [("x", F, [B, 4, 4, D]), ("g", F, [D]), ("beta", F, [D])], 1, {"groups": 2, "activation": 1}),
    "SkipGroupNorm": (
        MS,
        [("x", F, [B, 4, 4, D]), ("g", F, [D]), ("beta", F, [D]), ("sk", F, [B, 4, 4, D])],
        1,
        {"groups": 2, "activation": 1},
    ),
    "NhwcConv": (MS, [("x", F, [1, 5, 5, 2]), ("w", F, [3, 3, 3, 2])], 1, {"kernel_shape": [3, 3]}),
    "GemmFastGelu": (MS, [("x", F, [B, S, D]), ("w", F, [D, D]), ("b", F, [D])], 1, {}),
    "RelativePositionBias": (
        MS,
        [("t", F, [32, N]), ("q", I64, []), ("k", I64, [])],
        1,
        {"max_distance": 128, "is_bidirectional": 1},
    ),
    "GatedRelativePositionBias": (
        MS,
        [
            ("q", F, [B, S, N * 4]),
            ("qb", F, [N * 4]),
            ("rel", F, [1, N, S, S]),
            ("w", F, [4, 6]),
            ("bb", F, [6]),
            ("eco", F, [1, N, 1, 1]),
        ],
        1,
        {"num_heads": N},
    ),
}


def make(out_dir):
    import numpy as np
    import onnx
    from onnx import helper as oh
    from onnx import numpy_helper

    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    np_of = {F: np.float32, I64: np.int64, I32: np.int32, U8: np.uint8, I8: np.int8, BOOL: np.bool_}
    for key, (domain, inputs, n_out, attrs) in OPS.items():
        op = key.split(".")[0]
        # Weights (everything after the first input, except ids/masks/lengths) as initializers,
        # as the optimizer writes them; the first input a graph input.
        graph_inputs, inits = [], []
        for i, spec in enumerate(inputs):
            if spec is None:  # an omitted optional input
                continue
            name, t, shape = spec
            runtime = (
                i == 0
                or name in ("skip", "mask", "pos", "seg", "ids", "k", "v", "pk", "pv", "seqlens_k", "total", "b")
                and op
                in (
                    "SkipLayerNormalization",
                    "SkipSimplifiedLayerNormalization",
                    "BiasAdd",
                    "MultiHeadAttention",
                    "GroupQueryAttention",
                    "RotaryEmbedding",
                    "EmbedLayerNormalization",
                    "Attention",
                    "QLinearAdd",
                    "QLinearMul",
                    "QLinearConcat",
                    "QLinearWhere",
                    "GatherBlockQuantized",
                    "QEmbedLayerNormalization",
                )
            )
            if runtime and name not in ("b", "g") or i == 0:
                graph_inputs.append(oh.make_tensor_value_info(name, t, shape))
            else:
                arr = (
                    (rng.random(shape) * 4).astype(np_of[t])
                    if t != F
                    else rng.standard_normal(shape).astype(np.float32)
                )
                if name == "total":
                    arr = np.array(S, np.int32)
                inits.append(numpy_helper.from_array(arr, name))
        outs = [f"o{i}" if i in (0, n_out - 1) or op != "SkipLayerNormalization" else "" for i in range(n_out)]
        node = oh.make_node(op, [spec[0] if spec else "" for spec in inputs], outs, domain=domain, **attrs)
        graph = oh.make_graph([node], op, graph_inputs, [onnx.ValueInfoProto(name=o) for o in outs if o], inits)
        model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13), oh.make_opsetid(MS, 1)], ir_version=7)
        onnx.save(model, os.path.join(out_dir, f"{key}.onnx"))


def first_line(e):
    text = [t.strip() for t in str(e).strip().splitlines() if t.strip()]
    # OpenVINO's first line is its own source position: the conversion error is further down
    named = [t for t in text if "rule" in t or "not supported" in t or "Check" in t]
    return (named or text or [type(e).__name__])[0][:200]


def probe_ort(path):
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return f"onnxruntime {ort.__version__}"


def probe_openvino(path):
    import openvino as ov

    core = ov.Core()
    core.compile_model(core.read_model(path), "CPU")
    return f"OpenVINO {ov.__version__}"


def main():
    mode, out_dir = sys.argv[1], sys.argv[2]
    if mode == "make":
        make(out_dir)
        return
    probe = {"ort": probe_ort, "openvino": probe_openvino}[mode]
    for path in sorted(glob.glob(os.path.join(out_dir, "*.onnx"))):
        op = os.path.basename(path)[:-5]
        try:
            version = probe(path)
            print(f"{op}: OK ({version})", flush=True)
        except Exception as e:  # noqa: BLE001 - the backend's refusal is the result
            print(f"{op}: REFUSED {first_line(e)}", flush=True)


if __name__ == "__main__":
    main()
