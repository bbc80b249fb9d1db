"""The onnx.ModelProto path (Model.from_proto / to_proto, osg.run(proto, ...)): big
initializers travel apart from the serialized model (python/onnxsurgeon/_proto.py,
_core._load_parts / Model._to_parts). Every initializer kind must come back equal, the
input proto must stay unchanged, and what goes apart must not be copied more than once."""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxsurgeon import _core, _proto

BIG = 64 * 128  # elements: 32 KiB of float32, over both thresholds


def _raw(name: str, array: np.ndarray, data_type: int | None = None) -> TensorProto:
    t = numpy_helper.from_array(array, name)
    if data_type is not None:  # float16 / bfloat16 bits held in a uint16 array
        t.data_type = data_type
    assert t.HasField("raw_data")
    return t


def _rich_model(tmp_path=None) -> onnx.ModelProto:
    """Initializers of every kind: big and small raw, typed fields, float16, bfloat16,
    strings, a sparse initializer, big and small initializers inside an If's branches, and
    (with tmp_path) one in an external file."""
    rng = np.random.default_rng(0)
    big_f32 = _raw("big_f32", rng.standard_normal((64, 128)).astype(np.float32))
    small_f32 = _raw("small_f32", np.arange(128, dtype=np.float32))
    big_f16 = _raw("big_f16", rng.standard_normal((64, 128)).astype(np.float16))
    bf16_bits = (rng.standard_normal((64, 128)).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    big_bf16 = _raw("big_bf16", bf16_bits, TensorProto.BFLOAT16)
    big_i64 = _raw("big_i64", np.arange(BIG, dtype=np.int64))
    typed = helper.make_tensor("typed_f32", TensorProto.FLOAT, [BIG], rng.standard_normal(BIG).tolist())
    assert not typed.HasField("raw_data")
    strings = helper.make_tensor("strings", TensorProto.STRING, [3], [b"a", b"bc", b"\x00\xff" * 5000])
    scalar = _raw("scalar", np.array(2.5, dtype=np.float32))
    sparse = helper.make_sparse_tensor(
        helper.make_tensor("sparse", TensorProto.FLOAT, [2], [1.0, 2.0]),
        helper.make_tensor("sparse_idx", TensorProto.INT64, [2], [0, 3]),
        [8192],
    )
    branch_big = _raw("branch_big", rng.standard_normal((64, 128)).astype(np.float32))
    then_g = helper.make_graph(
        [helper.make_node("Add", ["big_f32", "branch_big"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [64, 128])],
        [branch_big],
    )
    else_g = helper.make_graph(
        [helper.make_node("Mul", ["big_f32", "scalar"], ["e"])],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [64, 128])],
        [_raw("branch_small", np.ones(4, np.float32))],
    )
    inits = [big_f32, small_f32, big_f16, big_bf16, big_i64, typed, strings, scalar]
    nodes = [
        helper.make_node("Add", ["X", "big_f32"], ["a"]),
        helper.make_node("If", ["cond"], ["b"], then_branch=then_g, else_branch=else_g),
        helper.make_node("Add", ["a", "b"], ["Y"]),
        helper.make_node("Cast", ["big_f16"], ["Y16"], to=TensorProto.FLOAT),
        helper.make_node("Identity", ["sparse"], ["S"]),
    ]
    outputs = [
        helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, 128]),
        helper.make_tensor_value_info("Y16", TensorProto.FLOAT, [64, 128]),
        helper.make_tensor_value_info("S", TensorProto.FLOAT, [8192]),
    ]
    if tmp_path is not None:
        ext = _raw("external", rng.standard_normal(BIG).astype(np.float32))
        (tmp_path / "w.bin").write_bytes(ext.raw_data)
        ext.ClearField("raw_data")
        ext.data_location = TensorProto.EXTERNAL
        for k, v in (("location", "w.bin"), ("offset", "0"), ("length", str(4 * BIG))):
            ext.external_data.add(key=k, value=v)
        inits.append(ext)
        nodes.append(helper.make_node("Identity", ["external"], ["E"]))
        outputs.append(helper.make_tensor_value_info("E", TensorProto.FLOAT, [BIG]))
    graph = helper.make_graph(
        nodes,
        "rich",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, [64, 128]),
            helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
        ],
        outputs,
        inits,
        sparse_initializer=[sparse],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], producer_name="test")
    helper.set_model_props(model, {"k": "v"})
    model.graph.doc_string = "the graph"
    return model


def _snapshot(model: onnx.ModelProto) -> bytes:
    return model.SerializeToString(deterministic=True)


def test_round_trip_keeps_every_initializer_and_the_input(monkeypatch):
    model = _rich_model()
    before = _snapshot(model)
    sent, load_parts = [], _core._load_parts

    def spy(data, parts, base_dir=""):
        sent.extend(i for i, _ in parts)
        return load_parts(data, parts, base_dir)

    monkeypatch.setattr(_proto._core, "_load_parts", spy, raising=True)
    m = osg.Model.from_proto(model)
    monkeypatch.undo()
    assert sent == [0, 2, 3, 4]  # big_f32, big_f16, big_bf16, big_i64 went apart
    assert _snapshot(model) == before  # the input was only read
    out = m.to_proto()
    assert _snapshot(model) == before
    assert out == model  # every field, every initializer, bit for bit
    # Each initializer, by name, in the main graph and in the If's branches.
    for a, b in zip(model.graph.initializer, out.graph.initializer):
        assert a == b, a.name
    for g in ("then_branch", "else_branch"):
        assert out.graph.node[1].attribute == model.graph.node[1].attribute, g
    assert out.graph.sparse_initializer == model.graph.sparse_initializer
    # And the weights as numbers (float16 and bfloat16 bits included).
    for t in out.graph.initializer:
        if t.data_type != TensorProto.STRING:
            ref = next(x for x in model.graph.initializer if x.name == t.name)
            np.testing.assert_array_equal(numpy_helper.to_array(t), numpy_helper.to_array(ref))


def test_big_initializers_go_apart_and_come_back_as_the_same_objects():
    model = _rich_model()
    big = [i for i, t in enumerate(model.graph.initializer) if _proto._is_big(t)]
    names = [model.graph.initializer[i].name for i in big]
    # raw_data at least 4096 elements; not the typed, string or small ones.
    assert names == ["big_f32", "big_f16", "big_bf16", "big_i64"]
    # The path the bindings take: a payload no pass replaced is handed back as the very
    # bytes object that went in (so to_proto's one copy is protobuf's own setter).
    parts = [(i, model.graph.initializer[i].raw_data) for i in big]
    slim = onnx.ModelProto()
    slim.CopyFrom(model)
    for i in big:
        slim.graph.initializer[i].ClearField("raw_data")
    m = _core._load_parts(slim.SerializeToString(), parts)
    got_slim, got_parts = m._to_parts(_proto.MIN_BYTES)
    # big_f16 (16 KiB) is apart too; nothing under MIN_BYTES is.
    assert [i for i, _ in got_parts] == big
    for (_, sent), (_, got) in zip(parts, got_parts):
        assert got is sent
    # The big payloads are not in the serialized model.
    assert len(memoryview(got_slim)) + sum(len(p) for _, p in parts) <= len(model.SerializeToString())


def test_a_pass_that_replaces_a_big_initializer_returns_new_bytes():
    rng = np.random.default_rng(1)
    w = rng.standard_normal((128, 64)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["W"], ["WT"], perm=[1, 0]), helper.make_node("MatMul", ["X", "WT"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 64])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 128])],
        [numpy_helper.from_array(w, "W")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    before = _snapshot(model)
    out = osg.run(model, "fold-constants")
    assert _snapshot(model) == before
    assert [n.op_type for n in out.graph.node] == ["MatMul"]
    folded = {t.name: t for t in out.graph.initializer}[out.graph.node[0].input[1]]
    np.testing.assert_array_equal(numpy_helper.to_array(folded), w.T)
    x = rng.standard_normal((2, 64)).astype(np.float32)
    from onnxsurgeon import testing

    testing.assert_equivalent(model, out, inputs={"X": x})


def test_external_data_is_read_from_base_dir(tmp_path):
    model = _rich_model(tmp_path)
    before = _snapshot(model)
    out = osg.Model.from_proto(model, str(tmp_path)).to_proto()
    assert _snapshot(model) == before
    ext = next(t for t in out.graph.initializer if t.name == "external")
    # to_proto puts every tensor inline, external ones included.
    assert ext.data_location == TensorProto.DEFAULT and not ext.external_data
    assert ext.raw_data == (tmp_path / "w.bin").read_bytes()
    rest = [t for t in out.graph.initializer if t.name != "external"]
    assert rest == [t for t in model.graph.initializer if t.name != "external"]


def test_run_on_a_proto_is_equivalent_in_onnxruntime():
    from onnxsurgeon import testing

    rng = np.random.default_rng(2)
    inits, nodes, x = [], [], "X"
    for k in range(3):  # an MLP whose weights all go apart; simplify rewrites around them
        inits += [
            numpy_helper.from_array(rng.standard_normal((96, 96)).astype(np.float32), f"W{k}"),
            numpy_helper.from_array(rng.standard_normal(96).astype(np.float32), f"B{k}"),
        ]
        nodes += [
            helper.make_node("MatMul", [x, f"W{k}"], [f"m{k}"]),
            helper.make_node("Add", [f"m{k}", f"B{k}"], [f"a{k}"]),
            helper.make_node("Identity", [f"a{k}"], [f"i{k}"]),
            helper.make_node("Relu", [f"i{k}"], [f"r{k}"]),
        ]
        x = f"r{k}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 96])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, 96])],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    before = _snapshot(model)
    out = osg.run(model, "simplify")
    assert _snapshot(model) == before
    assert "Identity" not in {n.op_type for n in out.graph.node}
    testing.assert_equivalent(model, out, inputs={"X": rng.standard_normal((4, 96)).astype(np.float32)})


def test_unknown_fields_take_the_whole_serialization_and_survive():
    model = _rich_model()
    # Field 999 (varint 7) on the ModelProto: from a newer onnx.proto.
    with_unknown = onnx.ModelProto.FromString(model.SerializeToString() + b"\xb8\x3e\x07")
    out = osg.Model.from_proto(with_unknown).to_proto()
    from google.protobuf.unknown_fields import UnknownFieldSet

    assert [(f.field_number, f.data) for f in UnknownFieldSet(out)] == [(999, 7)]
    out.DiscardUnknownFields()
    assert out == model


def test_bad_parts_are_errors_not_crashes():
    model = _rich_model()
    slim = model.SerializeToString()
    with pytest.raises(osg.OnnxSurgeonError, match="initializer #99"):
        _core._load_parts(slim, [(99, b"\0" * 16)])
    # big_f32 still has its raw_data in `slim`: a second payload for it is refused.
    with pytest.raises(osg.OnnxSurgeonError, match="big_f32"):
        _core._load_parts(slim, [(0, b"\0" * (4 * BIG))])
    with pytest.raises(TypeError):
        _core._load_parts(slim, [(0, "not bytes")])
