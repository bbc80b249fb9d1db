"""rewrite-index-put and lower-scatternd-reduction on index_put as torch exports it.

torch (2.x) no longer emits ATen index_put even with OperatorExportTypes.ONNX_ATEN /
ONNX_ATEN_FALLBACK: its symbolic (ScatterND, or ConstantOfShape + ScatterND + Add for
accumulate) always applies. The ATen nodes come from older exporters, whose fallback was
g.at("index_put", self, *indices, values, accumulate): op ATen in domain
org.pytorch.aten, attribute operator="index_put", inputs self, the index tensors, values
and a constant bool. Those graphs are written here by hand in that form, and the result
is checked with onnxruntime against numpy's index_put semantics (np.add.at for
accumulate), repeated indices included. The ScatterND forms real exports contain are
covered on the corpus models index_put_op16 / index_put_dynamo18.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper

ATEN = "org.pytorch.aten"


def aten_index_put(
    self_shape,
    index_shapes,
    values_shape,
    accumulate,
    opset,
    index_type=TensorProto.INT64,
    domain=ATEN,
    op="ATen",
    accumulate_as="input",
):
    index_names = [f"i{k}" for k in range(len(index_shapes))]
    inputs = ["x", *index_names, "v"]
    attrs = {"operator": "index_put", "overload_name": ""} if op == "ATen" else {}
    nodes = []
    initializers = []
    if accumulate_as == "input":
        initializers.append(numpy_helper.from_array(np.array(accumulate), "accumulate"))
        inputs.append("accumulate")
    else:
        attrs["accumulate"] = int(accumulate)
    nodes.append(helper.make_node(op, inputs, ["y"], domain=domain, **attrs))
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, list(self_shape)),
            *[helper.make_tensor_value_info(n, index_type, list(s)) for n, s in zip(index_names, index_shapes)],
            helper.make_tensor_value_info("v", TensorProto.FLOAT, list(values_shape)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(self_shape))],
        initializers,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(domain, 1)], ir_version=8
    )


def reference(x, indices, v, accumulate):
    y = x.copy()
    key = tuple(indices)
    if accumulate:
        np.add.at(y, key, np.broadcast_to(v, y[key].shape))
    else:
        y[key] = v
    return y


def run(model, feeds):
    from onnxsurgeon import testing

    return testing.run_model(model, feeds)["y"]


@pytest.mark.parametrize("opset", [14, 16, 18])
def test_accumulate_with_repeated_broadcast_indices(opset, oracle):
    model = aten_index_put((5, 4, 3), [(6,), (1,)], (6, 3), True, opset)
    rewritten = osg.run(model, "rewrite-index-put")
    histogram = oracle.op_histogram(rewritten)
    assert "ATen" not in str(histogram) and histogram["ScatterND"] == 1
    reductions = [a.s for n in rewritten.graph.node if n.op_type == "ScatterND" for a in n.attribute]
    assert reductions == ([b"add"] if opset >= 16 else [])
    oracle.assert_valid(rewritten)
    rng = np.random.default_rng(opset)
    x = rng.standard_normal((5, 4, 3)).astype(np.float32)
    i0 = np.array([0, 2, 2, -1, 4, 2], np.int64)  # 2 three times, -1 is row 4
    i1 = np.array([3], np.int64)
    v = rng.standard_normal((6, 3)).astype(np.float32)
    got = run(rewritten, {"x": x, "i0": i0, "i1": i1, "v": v})
    np.testing.assert_allclose(got, reference(x, [i0, i1], v, True), rtol=1e-6, atol=1e-6)


def test_assignment_int32_negative_indices_and_scalar_values(oracle):
    model = aten_index_put((6, 8), [(3,)], (), False, 13, index_type=TensorProto.INT32)
    rewritten = osg.run(model, "rewrite-index-put")
    oracle.assert_valid(rewritten)
    x = np.arange(48, dtype=np.float32).reshape(6, 8)
    i0 = np.array([0, -2, 3], np.int32)
    v = np.array(7.5, np.float32)
    got = run(rewritten, {"x": x, "i0": i0, "v": v})
    np.testing.assert_array_equal(got, reference(x, [i0], v, False))


def test_bool_mask_index(oracle):
    model = aten_index_put((4, 3, 2), [(4, 3)], (2,), False, 17, index_type=TensorProto.BOOL)
    rewritten = osg.run(model, "rewrite-index-put")
    assert oracle.op_histogram(rewritten)["NonZero"] == 1
    x = np.zeros((4, 3, 2), np.float32)
    mask = np.random.default_rng(1).random((4, 3)) > 0.5
    v = np.array([1.0, -1.0], np.float32)
    got = run(rewritten, {"x": x, "i0": mask, "v": v})
    np.testing.assert_array_equal(got, reference(x, [mask], v, False))


def test_custom_domain_in_place_op_with_accumulate_attribute(oracle):
    model = aten_index_put((5,), [(4,)], (4,), True, 16, domain="custom", op="index_put_", accumulate_as="attribute")
    rewritten = osg.run(model, "rewrite-index-put")
    oracle.assert_valid(rewritten)
    x = np.ones(5, np.float32)
    i0 = np.array([1, 1, 1, 4], np.int64)
    v = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(run(rewritten, {"x": x, "i0": i0, "v": v}), [1, 7, 1, 1, 5])


def test_tensorrt_pipeline_removes_the_reduction_too(oracle):
    """rewrite-index-put,lower-scatternd-reduction: standard ops and no reduction attribute."""
    model = aten_index_put((5, 4), [(6,)], (6, 4), True, 17)
    rewritten = osg.run(model, "rewrite-index-put,lower-scatternd-reduction")
    assert all(not n.attribute or n.op_type != "ScatterND" for n in rewritten.graph.node)
    oracle.assert_valid(rewritten)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    i0 = np.array([4, 0, 4, 4, 1, 0], np.int64)
    v = rng.standard_normal((6, 4)).astype(np.float32)
    np.testing.assert_allclose(
        run(rewritten, {"x": x, "i0": i0, "v": v}), reference(x, [i0], v, True), rtol=1e-6, atol=1e-6
    )


def test_errors_name_the_node():
    model = aten_index_put((5, 4), [(2,), (2,)], (2,), False, 17)
    model.graph.node[0].input[1] = ""  # x[:, j] = v: a None index
    model.graph.node[0].name = "put"
    with pytest.raises(Exception, match=r"index_put node 'put'.*index 0 is None"):
        osg.run(model, "rewrite-index-put")
    model = aten_index_put((5, 4), [(3,)], (3, 4), True, 12)
    with pytest.raises(Exception, match=r"accumulate=true needs opset >= 13"):
        osg.run(model, "rewrite-index-put")


# ------------------------------------------------------------------- corpus


@pytest.mark.parametrize("name", ["index_put_op16", "index_put_dynamo18"])
def test_lower_scatternd_reduction_on_corpus(name, corpus, oracle):
    model = corpus.model(name)
    original = onnx.load(model.path)
    lowered = osg.run(original, "lower-scatternd-reduction")
    for node in lowered.graph.node:
        assert not (node.op_type == "ScatterND" and any(a.name == "reduction" for a in node.attribute))
    oracle.assert_valid(lowered)
    oracle.assert_equivalent(original, lowered, inputs=model.inputs, rtol=1e-5, atol=1e-5)
    # the torch reference, which sums the repeated accumulate index of the dynamo model
    oracle.assert_outputs_close(
        oracle.run_model(lowered, model.inputs), model.expected, rtol=model.rtol, atol=model.atol
    )


# ------------------------------------------- lower-scatternd-reduction vs onnxruntime


def scatter_model(reduction, opset, elem_type, data_shape, idx_shape, upd_shape):
    node = helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"], reduction=reduction)
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("data", elem_type, list(data_shape)),
            helper.make_tensor_value_info("idx", TensorProto.INT64, list(idx_shape)),
            helper.make_tensor_value_info("upd", elem_type, list(upd_shape)),
        ],
        [helper.make_tensor_value_info("y", elem_type, list(data_shape))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


@pytest.mark.parametrize(
    "reduction, opset", [("add", 16), ("mul", 16), ("add", 18), ("mul", 18), ("max", 18), ("min", 18)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_lowered_reduction_matches_onnxruntime_with_repeats(reduction, opset, dtype, oracle):
    elem_type = TensorProto.FLOAT if dtype == np.float32 else TensorProto.INT64
    model = scatter_model(reduction, opset, elem_type, (4, 5, 3), ("A", "B", 2), ("A", "B", 3))
    lowered = osg.run(model, "lower-scatternd-reduction")
    assert all(not n.attribute for n in lowered.graph.node if n.op_type == "ScatterND")
    oracle.assert_valid(lowered)
    rng = np.random.default_rng(opset)
    for trial in range(6):
        idx = rng.integers(-2, 3, size=(2, 3, 2)).astype(np.int64)  # repeats and negatives
        data = (rng.standard_normal((4, 5, 3)) * 3).astype(dtype)
        upd = (rng.standard_normal((2, 3, 3)) * 3).astype(dtype)
        if dtype == np.float32 and trial == 5:
            upd[0, 0, 0], upd[1, 1, 1] = np.inf, np.nan  # must not leak into other elements
        feeds = {"data": data, "idx": idx, "upd": upd}
        want = oracle.run_model(model, feeds)["y"]
        got = oracle.run_model(lowered, feeds)["y"]
        if reduction in ("max", "min") or dtype == np.int64:
            np.testing.assert_array_equal(got, want)
        else:  # the same terms combined in another order
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("reduction", ["add", "mul"])
@pytest.mark.parametrize("target", [15, 13, 11])
def test_opset_downgrade_of_scatternd16_reduction_matches_onnxruntime(reduction, target, oracle):
    """convert-opset takes ScatterND-16's add/mul below 16 with the same exact lowering:
    repeated and negative indices combine, an inf or NaN update stays in its own element
    (a one-hot MatMul spread 0 * inf = NaN over every row), untouched elements keep their bits."""
    model = scatter_model(reduction, 16, TensorProto.FLOAT, (4, 5, 3), ("A", "B", 2), ("A", "B", 3))
    down = osg.run(model, f"downgrade-opset={target}")
    assert {o.version for o in down.opset_import if o.domain in ("", "ai.onnx")} == {target}
    assert all(not n.attribute for n in down.graph.node if n.op_type == "ScatterND")
    oracle.assert_valid(down)
    rng = np.random.default_rng(target)
    for trial in range(6):
        idx = rng.integers(-2, 3, size=(2, 3, 2)).astype(np.int64)
        data = (rng.standard_normal((4, 5, 3)) * 3).astype(np.float32)
        data[3] = -0.0  # never indexed below: must stay -0.0
        upd = (rng.standard_normal((2, 3, 3)) * 3).astype(np.float32)
        if trial == 5:
            upd[0, 0, 0], upd[1, 1, 1] = np.inf, np.nan
        feeds = {"data": data, "idx": idx, "upd": upd}
        want = oracle.run_model(model, feeds)["y"]
        got = oracle.run_model(down, feeds)["y"]
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
        untouched = np.ones(4, bool)
        untouched[np.where(idx[..., 0] < 0, idx[..., 0] + 4, idx[..., 0]).ravel()] = False
        assert got[untouched].tobytes() == want[untouched].tobytes()


# -------------------------------------- the corpus export, as an ATen fallback would be


def as_aten_fallback(model: onnx.ModelProto, opset: int) -> onnx.ModelProto:
    """index_put_dynamo18 (h[rows] = v; h.index_put((acc_idx,), acc_v, accumulate=True))
    with both ScatterNDs written as the old exporters' ATen fallback would have: the
    index tensors as torch had them (1-D), values, and the accumulate flag."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    graph = out.graph
    rows = next(numpy_helper.to_array(t) for t in graph.initializer if t.name == "val_7")
    graph.initializer.append(numpy_helper.from_array(rows.reshape(-1), "rows"))
    graph.initializer.append(numpy_helper.from_array(np.array(False), "false"))
    graph.initializer.append(numpy_helper.from_array(np.array(True), "true"))
    kept = [n for n in graph.node if n.op_type not in ("ScatterND", "Unsqueeze")]
    linear = kept[0].output[0]
    aten = dict(domain=ATEN, operator="index_put", overload_name="")
    kept.append(helper.make_node("ATen", [linear, "rows", "v", "false"], ["h"], **aten))
    kept.append(helper.make_node("ATen", ["h", "acc_idx", "acc_v", "true"], ["y"], **aten))
    del graph.node[:]
    graph.node.extend(kept)
    del out.opset_import[:]
    out.opset_import.extend([helper.make_opsetid("", opset), helper.make_opsetid(ATEN, 1)])
    return out


@pytest.mark.parametrize("opset", [15, 18])
def test_aten_fallback_of_the_corpus_export_matches_torch(opset, corpus, oracle):
    model = corpus.model("index_put_dynamo18")
    aten = as_aten_fallback(onnx.load(model.path), opset)
    rewritten = osg.run(aten, "rewrite-index-put")
    assert "ATen" not in {n.op_type for n in rewritten.graph.node}
    oracle.assert_valid(rewritten)
    # torch's own outputs: acc_idx repeats 3, and torch sums both updates
    assert len(set(model.inputs["acc_idx"].tolist())) < 3
    oracle.assert_outputs_close(
        oracle.run_model(rewritten, model.inputs), model.expected, rtol=model.rtol, atol=model.atol
    )


@pytest.mark.parametrize(
    "data_shape, indices",
    [
        ((6, 8), [[0], [2], [-1]]),  # rows (k = 1), a negative index
        ((3, 2), [[[2, 1]], [[0, 0]]]),  # elements (k = rank), two levels of tuples: GatherND
        ((2, 3, 4), [[1, 2], [0, 0], [1, 0]]),  # slices of the last axis (k = 2)
        ((4, 5), [[3, 4], [0, 1], [2, 2], [1, 0]]),  # elements, one level: Gather
    ],
)
def test_rewrite_constant_scatternd_is_bit_exact(data_shape, indices, oracle):
    """rewrite-constant-scatternd selects, it computes nothing: onnxruntime gives the same
    bits for ScatterND and for Where(mask, Gather(updates, map), data), NaN and inf
    included."""
    idx = np.array(indices, np.int64)
    updates_shape = idx.shape[:-1] + data_shape[idx.shape[-1] :]
    g = helper.make_graph(
        [helper.make_node("ScatterND", ["d", "i", "u"], ["y"])],
        "g",
        [
            helper.make_tensor_value_info("d", TensorProto.FLOAT, list(data_shape)),
            helper.make_tensor_value_info("u", TensorProto.FLOAT, list(updates_shape)),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(data_shape))],
        [numpy_helper.from_array(idx, "i")],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    model.ir_version = 8
    rewritten = osg.run(model, "rewrite-constant-scatternd")
    assert "ScatterND" not in oracle.op_histogram(rewritten) and "Where" in oracle.op_histogram(rewritten)
    rng = np.random.default_rng(0)
    d = rng.standard_normal(data_shape).astype(np.float32)
    u = rng.standard_normal(updates_shape).astype(np.float32)
    d.flat[0], u.flat[-1] = np.nan, np.inf
    want = oracle.run_model(model, {"d": d, "u": u})
    got = oracle.run_model(rewritten, {"d": d, "u": u})
    np.testing.assert_array_equal(got["y"], want["y"])
    assert np.isinf(got["y"]).any() and np.isnan(got["y"]).any() == np.isnan(want["y"]).any()
