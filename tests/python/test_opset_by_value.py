"""Attributes the older opset lacks are judged by what they mean given the node's constant
inputs and other attributes (passes/opset/adapters.cc): the golden cases of
tests/golden/convert-opset that convert, checked in onnxruntime on inputs full of ties
(small integers as floats), where select_last_index, TopK's order and ceil_mode show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "convert-opset"
CASES = [
    "reduce_sum_noop_constant_axes_13_to_11",
    "reduce_mean_noop_constant_axes_18_to_13",
    "reduce_noop_empty_axes_is_identity",
    "reduce_l2_noop_empty_axes_decomposed_18_to_13",
    "pool_ceil_mode_exact_10_to_9",
    "maxpool_storage_order_unused_indices_8_to_7",
    "quantize_saturate_uint8_19_to_13",
    "resize_antialias_upsample_18_to_13",
    "topk_smallest_11_to_10",
    "argmax_select_last_index_12_to_11",
]


def _case(name: str) -> tuple[str, str]:
    text = (GOLDEN / f"{name}.txt").read_text()
    pipeline = next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("pipeline:"))
    source = text.split("--- input\n", 1)[1].split("\n--- ", 1)[0]  # up to the next section
    return pipeline, source


def _tied_inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.integers(-3, 4, size=shape).astype(np.float32)
    return feeds


@pytest.mark.parametrize("name", CASES)
def test_conversion_by_value_is_exact(name, oracle):
    pipeline, source = _case(name)
    original = osg.parse_text(source).to_proto()
    converted = osg.run(original, pipeline)
    oracle.assert_valid(converted)
    inputs = _tied_inputs(original)
    oracle.assert_equivalent(original, converted, inputs=inputs, rtol=0, atol=0)


def test_topk_unsorted_keeps_the_same_elements(oracle):
    """sorted=0 leaves the order open; TopK-10 sorts, which is one of the allowed orders:
    the same k elements come out, in sorted order."""
    _, source = _case("topk_smallest_11_to_10")
    original = osg.parse_text(source.replace("TopK<largest = 0>", "TopK<largest = 0, sorted = 0>")).to_proto()
    converted = osg.run(original, "downgrade-opset=10")
    inputs = {"X": np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)}
    before = oracle.run_model(original, inputs)["V"]
    after = oracle.run_model(converted, inputs)["V"]
    np.testing.assert_array_equal(np.sort(before, axis=1), after)


# ---- exact downgrades that move data around the older op (passes/opset/adapters_layout.cc):
# each original runs at its own opset in onnxruntime, the converted model at the target.

from onnx import TensorProto, helper  # noqa: E402

LAYOUT_CASES = [  # the LSTM golden case: see test_recurrent_batch_first_downgrade (onnxruntime lacks layout=1)
    "gathernd_batch_dims_12_to_11",
    "depth_to_space_crd_11_to_10",
    "depth_to_space_crd_dynamic_11_to_10",
]


def _normal_inputs(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        v.name: rng.standard_normal([d.dim_value or 3 for d in v.type.tensor_type.shape.dim]).astype(np.float32)
        for v in model.graph.input
        if v.type.tensor_type.elem_type == TensorProto.FLOAT
    }


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_layout_golden_cases_run_the_same(name, oracle):
    pipeline, source = _case(name)
    original = osg.parse_text(source).to_proto()
    converted = osg.run(original, pipeline)
    oracle.assert_valid(converted)
    inputs = _normal_inputs(original)
    for v in original.graph.input:  # index inputs: valid positions
        if v.type.tensor_type.elem_type == TensorProto.INT64:
            shape = [d.dim_value for d in v.type.tensor_type.shape.dim]
            inputs[v.name] = np.random.default_rng(2).integers(-3, 3, size=shape).astype(np.int64)
    oracle.assert_equivalent(original, converted, inputs=inputs, rtol=1e-6, atol=1e-6)


def _recurrent_model(
    op: str, direction: str, with_initial: bool, outputs: tuple[str, ...], seq_lens: bool = False, layout: int = 1
) -> onnx.ModelProto:
    seq, inp, hidden = 5, 4, 6
    dirs = 2 if direction == "bidirectional" else 1
    gates = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    rng = np.random.default_rng(7)
    inits = [
        helper.make_tensor(
            "W", TensorProto.FLOAT, [dirs, gates * hidden, inp], rng.standard_normal(dirs * gates * hidden * inp) * 0.5
        ),
        helper.make_tensor(
            "R",
            TensorProto.FLOAT,
            [dirs, gates * hidden, hidden],
            rng.standard_normal(dirs * gates * hidden * hidden) * 0.5,
        ),
        helper.make_tensor(
            "B", TensorProto.FLOAT, [dirs, 2 * gates * hidden], rng.standard_normal(dirs * 2 * gates * hidden) * 0.1
        ),
    ]
    batch_first = layout == 1
    x_shape = ["batch", seq, inp] if batch_first else [seq, "batch", inp]
    state_shape = ["batch", dirs, hidden] if batch_first else [dirs, "batch", hidden]
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)]
    node_inputs = ["X", "W", "R", "B", "seq_lens" if seq_lens else ""]
    if seq_lens:
        graph_inputs.append(helper.make_tensor_value_info("seq_lens", TensorProto.INT32, ["batch"]))
    if with_initial:
        graph_inputs.append(helper.make_tensor_value_info("H0", TensorProto.FLOAT, state_shape))
        node_inputs.append("H0")
        if op == "LSTM":
            graph_inputs.append(helper.make_tensor_value_info("C0", TensorProto.FLOAT, state_shape))
            node_inputs.append("C0")
    while node_inputs[-1] == "":
        node_inputs.pop()
    names = ["Y", "Y_h", "Y_c"][: 3 if op == "LSTM" else 2]
    node_outputs = [n if n in outputs else "" for n in names]
    while node_outputs and not node_outputs[-1]:
        node_outputs.pop()
    attrs = {"layout": 1} if batch_first else {}
    node = helper.make_node(op, node_inputs, node_outputs, hidden_size=hidden, direction=direction, **attrs)
    y_shape = ["batch", seq, dirs, hidden] if batch_first else [seq, dirs, "batch", hidden]
    shapes = {"Y": y_shape, "Y_h": state_shape, "Y_c": state_shape}
    graph_outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shapes[n]) for n in node_outputs if n]
    graph = helper.make_graph([node], "rnn", graph_inputs, graph_outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8)


def _recurrent_inputs(op: str, direction: str, with_initial: bool) -> dict[str, np.ndarray]:
    dirs = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(3)
    inputs = {"X": rng.standard_normal((3, 5, 4)).astype(np.float32)}
    if with_initial:
        inputs["H0"] = rng.standard_normal((3, dirs, 6)).astype(np.float32)
        if op == "LSTM":
            inputs["C0"] = rng.standard_normal((3, dirs, 6)).astype(np.float32)
    return inputs


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("with_initial", [False, True])
@pytest.mark.parametrize("outputs", [("Y",), ("Y_h",), ("Y", "Y_h", "Y_c")])
@pytest.mark.parametrize("target", [13, 11])
def test_recurrent_batch_first_downgrade(op, direction, with_initial, outputs, target, oracle):
    """layout=1 (batch first) before 14: Transposes around layout 0; only the outputs the
    graph uses are transposed back. onnxruntime refuses layout=1 ("Batchwise recurrent
    operations (layout == 1) are not supported"), so the original runs in onnx's
    reference evaluator and the converted model in onnxruntime."""
    from onnx.reference import ReferenceEvaluator

    if op != "LSTM" and outputs == ("Y", "Y_h", "Y_c"):
        outputs = ("Y", "Y_h")
    original = _recurrent_model(op, direction, with_initial, outputs)
    converted = osg.run(original, f"convert-opset={target}")
    oracle.assert_valid(converted)
    assert all(n.op_type != op or not any(a.name == "layout" for a in n.attribute) for n in converted.graph.node)
    assert sum(n.op_type == "Transpose" for n in converted.graph.node) == 1 + (
        2 if with_initial and op == "LSTM" else int(with_initial)
    ) + len(outputs)
    inputs = _recurrent_inputs(op, direction, with_initial)
    names = [o.name for o in original.graph.output]
    expected = dict(zip(names, ReferenceEvaluator(original).run(None, inputs)))
    oracle.assert_outputs_close(oracle.run_model(converted, inputs), expected, 1e-5, 1e-5)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_recurrent_batch_first_ragged_sequence_lengths(op, direction, oracle):
    """With sequence_lens (which onnx's reference evaluator ignores): the converted model
    matches the same recurrence written at layout 0, fed and read through numpy transposes."""
    outputs = ("Y", "Y_h", "Y_c") if op == "LSTM" else ("Y", "Y_h")
    original = _recurrent_model(op, direction, True, outputs, seq_lens=True)
    converted = osg.run(original, "convert-opset=11")
    oracle.assert_valid(converted)
    inputs = _recurrent_inputs(op, direction, True)
    inputs["seq_lens"] = np.array([5, 2, 4], np.int32)
    time_major = _recurrent_model(op, direction, True, outputs, seq_lens=True, layout=0)
    feeds = {k: (v if k == "seq_lens" else np.ascontiguousarray(np.swapaxes(v, 0, 1))) for k, v in inputs.items()}
    raw = oracle.run_model(time_major, feeds)
    expected = {k: np.transpose(v, [2, 0, 1, 3] if k == "Y" else [1, 0, 2]) for k, v in raw.items()}
    oracle.assert_outputs_close(oracle.run_model(converted, inputs), expected, 1e-6, 1e-6)


def _gathernd_model(data_shape, indices_shape, batch_dims: int, out_rank: int) -> onnx.ModelProto:
    node = helper.make_node("GatherND", ["D", "I"], ["Y"], batch_dims=batch_dims)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("D", TensorProto.FLOAT, data_shape),
            helper.make_tensor_value_info("I", TensorProto.INT64, indices_shape),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [f"y{i}" for i in range(out_rank)])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=7)


@pytest.mark.parametrize(
    "data, indices, batch_dims",
    [
        ((2, 3, 4), (2, 1), 1),  # one index per batch, no index dims
        ((2, 3, 4), (2, 5, 1), 1),  # k=1: rows
        ((2, 3, 4), (2, 5, 2), 1),  # k=2: elements
        ((2, 3, 4, 5), (2, 3, 7, 1), 2),  # two batch dims
        ((2, 3, 4, 5), (2, 3, 2, 2, 2), 2),
    ],
)
@pytest.mark.parametrize("dynamic", [False, True])
def test_gathernd_batch_dims_downgrade(data, indices, batch_dims, dynamic, oracle):
    """batch_dims as a batch index grid prepended to the indices, for static and dynamic
    dims; negative indices included."""
    dshape = [f"d{i}" for i in range(len(data))] if dynamic else list(data)
    ishape = [f"i{i}" for i in range(len(indices) - 1)] + [indices[-1]] if dynamic else list(indices)
    out_rank = len(indices) - 1 + len(data) - batch_dims - indices[-1]
    original = _gathernd_model(dshape, ishape, batch_dims, out_rank)
    converted = osg.run(original, "convert-opset=11")
    oracle.assert_valid(converted)
    rng = np.random.default_rng(5)
    k = indices[-1]
    bounds = np.array(data[batch_dims : batch_dims + k])
    idx = rng.integers(-bounds, bounds, size=indices).astype(np.int64)
    inputs = {"D": rng.standard_normal(data).astype(np.float32), "I": idx}
    oracle.assert_equivalent(original, converted, inputs=inputs, rtol=0, atol=0)


@pytest.mark.parametrize("blocksize, channels", [(2, 8), (3, 18), (2, 4)])
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("target", [10, 9])
def test_depth_to_space_crd_downgrade(blocksize, channels, dynamic, target, oracle):
    shape = ["n", channels, "h", "w"] if dynamic else [2, channels, 3, 5]
    node = helper.make_node("DepthToSpace", ["X"], ["Y"], blocksize=blocksize, mode="CRD")
    graph = helper.make_graph(
        [node],
        "d2s",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["n", "c", "h", "w"])],
    )
    original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=6)
    converted = osg.run(original, f"convert-opset={target}")
    oracle.assert_valid(converted)
    assert not any(n.op_type == "DepthToSpace" for n in converted.graph.node)
    x = np.random.default_rng(4).standard_normal((2, channels, 3, 5)).astype(np.float32)
    oracle.assert_equivalent(original, converted, inputs={"X": x}, rtol=0, atol=0)


@pytest.mark.parametrize("target", [10, 9])
def test_pixel_shuffle_export_downgrades(target, oracle):
    """A real export: torch's PixelShuffle is DepthToSpace mode=CRD from opset 11 (an
    ESPCN-style super-resolution head with dynamic batch and spatial dims); below 11 it
    becomes Reshape/Transpose/Reshape, checked against torch's own output."""
    import io
    import warnings

    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 3 * 9, 3, padding=1),
        torch.nn.PixelShuffle(3),
    ).eval()
    x = torch.randn(2, 3, 5, 7)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            net,
            (x,),
            buffer,
            opset_version=11,
            dynamo=False,
            input_names=["x"],
            output_names=["y"],
            dynamic_axes={"x": {0: "n", 2: "h", 3: "w"}, "y": {0: "n", 2: "h3", 3: "w3"}},
        )
    original = onnx.load_from_string(buffer.getvalue())
    assert any(n.op_type == "DepthToSpace" and any(a.s == b"CRD" for a in n.attribute) for n in original.graph.node)
    converted = osg.run(original, f"convert-opset={target}")
    oracle.assert_valid(converted)
    with torch.no_grad():
        expected = {"y": net(x).numpy()}
    oracle.assert_equivalent(original, converted, inputs={"x": x.numpy()}, expected=expected, rtol=1e-4, atol=1e-5)


UP_REFUSED = [
    "group_normalization_unknown_type_refused",
    "batchnorm_saved_mean_used_refused",
    "scan_batch_of_two_refused",
    "scan_sequence_lens_refused",
    "resize_tf_half_pixel_for_nn_refused",
    "dropout_7_mask_used_refused",
]


@pytest.mark.parametrize(
    "name",
    ["lstm_layout_batch_first_14_to_13", *LAYOUT_CASES, "gathernd_batch_dims_unknown_rank_refused", *UP_REFUSED],
)
def test_check_agrees_with_convert(name, run_cli, tmp_path):
    """`check --opset N` says convertible exactly when convert-opset=N converts."""
    pipeline, source = _case(name)
    target = pipeline.split("=", 1)[1]
    path = tmp_path / "m.onnx"
    onnx.save(osg.parse_text(source).to_proto(), path)
    try:
        osg.run(onnx.load(path), f"convert-opset={target}")
        converts = True
    except Exception:
        converts = False
    proc = run_cli("check", "--opset", target, path, expect_rc=None)
    assert proc.returncode == (0 if converts else 1), proc.stdout + proc.stderr
    assert converts == ("refused" not in name)


# ---- upgrades whose meaning moved (passes/opset/adapters_up.cc, the schema step, the
# Scatter rename): each golden case that converts runs in onnxruntime at its own opset and
# converted, on inputs where the difference would show (per-group scales that differ,
# a batch of one, a training-mode batch, indices that hit every position).


def _up_feeds(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    return {
        "split_equal_parts_13_to_18": {"X": f32(2, 6)},
        "upsample_7_scales_to_input_9": {"X": f32(1, 1, 2, 2)},
        "group_normalization_18_to_21": {"X": f32(2, 4, 3)},
        "group_normalization_18_to_21_dynamic": {
            "X": rng.standard_normal((2, 6, 5)),
            "s": np.array([1.5, -2.0]),
            "b": np.array([0.25, 3.0]),
        },
        "batchnorm_training_9_to_14": {
            "X": f32(2, 3, 4),
            "s": f32(3),
            "b": f32(3),
            "m": f32(3),
            "v": np.abs(f32(3)) + 0.5,
        },
        "scan_batch_of_one_8_to_9": {"S0": f32(1, 2), "X": f32(1, 3, 2)},
        "scatter_10_to_scatter_elements_11": {
            "X": f32(3, 3),
            "I": np.stack([rng.permutation(3), rng.permutation(3)]).astype(np.int64),
            "U": f32(2, 3),
        },
        "mvn_default_axes_9_to_13": {"X": f32(3, 3, 3, 1)},
        "dropout_7_unused_mask_to_12": {"X": f32(2, 3)},
    }[name]


UP_CASES = [
    "split_equal_parts_13_to_18",
    "upsample_7_scales_to_input_9",
    "group_normalization_18_to_21",
    "group_normalization_18_to_21_dynamic",
    "batchnorm_training_9_to_14",
    "scan_batch_of_one_8_to_9",
    "scatter_10_to_scatter_elements_11",
    "mvn_default_axes_9_to_13",
    "dropout_7_unused_mask_to_12",
]


@pytest.mark.parametrize("name", UP_CASES)
def test_upgrade_golden_cases_run_the_same(name, oracle):
    pipeline, source = _case(name)
    original = osg.parse_text(source).to_proto()
    converted = osg.run(original, pipeline)
    oracle.assert_valid(converted)
    oracle.assert_equivalent(original, converted, inputs=_up_feeds(name), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("channels, groups", [(4, 2), (6, 3), (4, 4), (5, 1)])
def test_group_normalization_upgrade_per_channel(dtype, channels, groups, oracle):
    """GroupNormalization-18 (per-group scale, statistics in X's type) against -21 after the
    upgrade, constant scale/bias (repeated at conversion) and given ones (at run time)."""
    name = {np.float32: "float", np.float64: "double", np.float16: "float16"}[dtype]
    rng = np.random.default_rng(channels * groups)
    s, b = rng.standard_normal(groups).astype(dtype), rng.standard_normal(groups).astype(dtype)
    x = rng.standard_normal((2, channels, 3, 2)).astype(dtype)
    for constant in (True, False):
        graph = helper.make_graph(
            [helper.make_node("GroupNormalization", ["X", "s", "b"], ["Y"], num_groups=groups, epsilon=1e-3)],
            "g",
            [helper.make_tensor_value_info("X", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), x.shape)]
            + (
                []
                if constant
                else [
                    helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), [groups])
                    for n in "sb"
                ]
            ),
            [helper.make_tensor_value_info("Y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), x.shape)],
            initializer=[onnx.numpy_helper.from_array(s, "s"), onnx.numpy_helper.from_array(b, "b")]
            if constant
            else [],
        )
        original = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)
        converted = osg.run(original, "upgrade-opset=21")
        oracle.assert_valid(converted)
        gn = next(n for n in converted.graph.node if n.op_type == "GroupNormalization")
        stash = {a.name: a.i for a in gn.attribute}.get("stash_type", 1)
        assert stash == helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), name
        feeds = {"X": x} if constant else {"X": x, "s": s, "b": b}
        tol = 1e-3 if dtype == np.float16 else 1e-6
        oracle.assert_equivalent(original, converted, inputs=feeds, rtol=tol, atol=tol)
