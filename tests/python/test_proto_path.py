"""The onnx.ModelProto path (Model.from_proto / to_proto, osg.run(proto, ...)): big
initializers travel apart from the serialized model (python/onnxsurgeon/_proto.py,
_core._load_parts / Model._to_parts). Every initializer kind must come back equal, the
input proto must stay unchanged, and what goes apart must not be copied more than once.
osg.run(proto, ...) defers them: a big weight's raw_data is read only when a pass needs
its bytes, and an untouched one is copied once, into the result."""

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

    def spy(data, parts, base_dir="", deferred=()):
        assert not deferred  # Model.from_proto reads: the caller keeps the Model
        sent.extend(i for i, _ in parts)
        return load_parts(data, parts, base_dir, deferred)

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
    model = _mlp([(96, 96)] * 3, seed=2)  # weights that all go apart; simplify rewrites around them
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


# ---- the deferred path: osg.run(proto, ...) --------------------------------------------


class _CountingSource:
    """A deferred source (what _load_parts reads `raw_data` from) that counts the reads."""

    def __init__(self, tensor: TensorProto, raw: bytes | None = None):
        self.tensor = tensor
        self.raw = tensor.raw_data if raw is None else raw
        self.reads = 0

    @property
    def raw_data(self) -> bytes:
        self.reads += 1
        return self.raw


def _load_deferred(model: onnx.ModelProto, sources: dict | None = None) -> tuple[_core.Model, dict]:
    """The model loaded as run(proto) loads it, every big initializer deferred to a
    _CountingSource (or the one given in `sources`, by name)."""
    sources = dict(sources or {})
    big = [i for i, t in enumerate(model.graph.initializer) if _proto._is_big(t)]
    slim = onnx.ModelProto()
    slim.CopyFrom(model)
    deferred = []
    for i in big:
        t = model.graph.initializer[i]
        src = sources.setdefault(t.name, _CountingSource(t))
        deferred.append((i, src))
        slim.graph.initializer[i].ClearField("raw_data")
    return _core._load_parts(slim.SerializeToString(), [], "", deferred), sources


def _mlp(shapes: list[tuple[int, int]], seed: int = 3, same: dict | None = None) -> onnx.ModelProto:
    """MatMul+Add+Identity+Relu layers, one weight per (n_in, n_out) in `shapes`; `same`
    maps a layer to an earlier one whose weight it repeats byte for byte."""
    rng = np.random.default_rng(seed)
    inits, nodes, x = [], [], "X"
    weights = []
    for k, (n_in, n_out) in enumerate(shapes):
        w = rng.standard_normal((n_in, n_out)).astype(np.float32)
        if same and k in same:
            w = weights[same[k]]
        weights.append(w)
        inits += [
            numpy_helper.from_array(w, f"W{k}"),
            numpy_helper.from_array(rng.standard_normal(n_out).astype(np.float32), f"B{k}"),
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
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, shapes[0][0]])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [4, shapes[-1][1]])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_run_defers_big_initializers_and_reads_none_it_does_not_need(monkeypatch):
    model = _rich_model()
    before = _snapshot(model)
    seen, load_parts = {}, _core._load_parts

    def spy(data, parts, base_dir="", deferred=()):
        seen["parts"], seen["deferred"] = [i for i, _ in parts], [i for i, _ in deferred]
        return load_parts(data, parts, base_dir, deferred)

    monkeypatch.setattr(_proto._core, "_load_parts", spy, raising=True)
    out = osg.run(model, "simplify(skip=fold-constants)")
    monkeypatch.undo()
    assert seen == {"parts": [], "deferred": [0, 2, 3, 4]}  # big_f32, big_f16, big_bf16, big_i64
    assert _snapshot(model) == before  # the input was only read
    # Nothing to simplify but the If's constant condition is not known: every initializer
    # (the deferred ones by CopyFrom of their source), If branches included, comes back.
    got = {t.name: t for t in out.graph.initializer}
    for t in model.graph.initializer:
        if t.name in got:
            assert got[t.name] == t, t.name

    # The same load with counting sources, full simplify: big_bf16 and big_i64 (unused)
    # are removed unread; big_f16 is read once (Cast(big_f16) folds into new bytes);
    # big_f32 is read once (its uses are looked at) and kept, and still goes out as its
    # source, since no pass replaced its bytes.
    m, sources = _load_deferred(model)
    m.run("simplify")
    assert {n: s.reads for n, s in sources.items()} == {"big_f32": 1, "big_f16": 1, "big_bf16": 0, "big_i64": 0}
    _, parts = m._to_parts(_proto.MIN_BYTES)
    kinds = {i: p.tensor.name if isinstance(p, _CountingSource) else type(p).__name__ for i, p in parts}
    assert sorted(kinds.values()) == ["big_f32", "bytes"]
    assert sources["big_f32"].reads == 1  # saving read nothing


def test_dedupe_reads_same_shape_candidates_once_and_keeps_none():
    # Four weights: two of one shape (distinct), one of another shape, one repeating W0.
    model = _mlp([(64, 64), (64, 64), (64, 96), (96, 96), (96, 64), (64, 64)], same={5: 0})
    m, sources = _load_deferred(model)
    m.run("dedupe-initializers")
    reads = {n: s.reads for n, s in sources.items()}
    # W2 (64x96), W3 (96x96), W4 (96x64): a shape no other weight has, never read.
    assert reads["W2"] == reads["W3"] == reads["W4"] == 0
    # W1 differs from W0 in its sampled hash: read once for the hash, not kept.
    assert reads["W1"] == 1
    # W5 repeats W0: both hashed, then compared in full (fetched and kept: one more read each).
    assert reads["W0"] == 2 and reads["W5"] == 2
    names = [t.name for t in onnx.ModelProto.FromString(memoryview(m._to_parts(_proto.MIN_BYTES)[0])).graph.initializer]
    assert "W5" not in names and "W0" in names
    # Every surviving deferred weight still goes out as its source (one copy in to_proto),
    # read or not: its bytes are the input's.
    _, parts = m._to_parts(_proto.MIN_BYTES)
    assert sorted(p.tensor.name for _, p in parts) == ["W0", "W1", "W2", "W3", "W4"]


def test_run_on_a_proto_matches_the_cli_and_onnxruntime(tmp_path, run_cli):
    from onnxsurgeon import testing

    # Shapes repeat (dedupe hashes them), W4 repeats W1 (merged), W2 is transposed by a
    # Transpose the fold pass folds (its bytes read and replaced).
    model = _mlp([(64, 64), (64, 64), (64, 64), (64, 64), (64, 64)], same={4: 1})
    n = model.graph.node
    tr = helper.make_node("Transpose", ["W2"], ["W2T"], perm=[1, 0])
    for node in n:
        if node.op_type == "MatMul" and node.input[1] == "W2":
            node.input[1] = "W2T"
    n.insert(0, tr)
    before = _snapshot(model)
    out = osg.run(model, "simplify")
    assert _snapshot(model) == before
    ops = [x.op_type for x in out.graph.node]
    assert "Identity" not in ops and "Transpose" not in ops
    assert "W4" not in {t.name for t in out.graph.initializer}
    src = tmp_path / "in.onnx"
    onnx.save(model, src)
    run_cli("--quiet", "--pass", "simplify", src, "-o", tmp_path / "cli.onnx")
    cli = onnx.load(tmp_path / "cli.onnx")
    assert out.SerializeToString(deterministic=True) == cli.SerializeToString(deterministic=True)
    x = np.random.default_rng(4).standard_normal((4, 64)).astype(np.float32)
    testing.assert_equivalent(model, out, inputs={"X": x})


def test_rich_model_through_run_matches_the_cli(tmp_path, run_cli):
    model = _rich_model(tmp_path)
    src = tmp_path / "rich.onnx"
    onnx.save(model, src)  # its external tensor stays in w.bin
    before = _snapshot(model)
    m = _proto.from_proto(model, str(tmp_path), defer=True)  # as run(proto) does, with a base_dir
    m.run("simplify")
    out = _proto.to_proto(m)
    assert _snapshot(model) == before
    run_cli("--quiet", "--pass", "simplify", src, "-o", tmp_path / "cli.onnx")
    cli = onnx.load(tmp_path / "cli.onnx")  # external data loaded inline
    assert out.SerializeToString(deterministic=True) == cli.SerializeToString(deterministic=True)
    # Subgraph initializers (If branches, folded there) went the ordinary way: same bytes.
    assert "If" in [x.op_type for x in out.graph.node]


def test_a_deferred_tensor_keeps_its_new_metadata_and_the_input_bytes():
    model = _rich_model()
    model.graph.initializer[0].doc_string = "the big one"
    before = _snapshot(model)
    m = _proto.from_proto(model, defer=True)
    v = next(v for v in m.graph.initializers if v.name == "big_f32")
    v.set_name("renamed")
    out = _proto.to_proto(m)
    assert _snapshot(model) == before
    t = next(t for t in out.graph.initializer if t.name == "renamed")
    ref = model.graph.initializer[0]
    assert t.doc_string == "the big one" and list(t.dims) == list(ref.dims) and t.raw_data == ref.raw_data
    assert not any(x.name == "big_f32" for x in out.graph.initializer)


def test_a_deferred_payload_of_the_wrong_size_is_refused_when_read():
    model = _mlp([(64, 64), (64, 64)])
    w0 = model.graph.initializer[0]
    short = _CountingSource(w0, w0.raw_data[:-4])
    m, _ = _load_deferred(model, {"W0": short})
    with pytest.raises(Exception, match="holds 16380 bytes, but its dims and type need 16384"):
        m.run("dedupe-initializers")
    assert short.reads == 1


def test_bad_deferred_parts_are_errors_not_crashes():
    model = _rich_model()
    slim = model.SerializeToString()
    t = model.graph.initializer[0]
    # big_f32 still has its raw_data in `slim`: deferring it too is refused.
    with pytest.raises(osg.OnnxSurgeonError, match="big_f32"):
        _core._load_parts(slim, [], "", [(0, t)])
    with pytest.raises(osg.OnnxSurgeonError, match="initializer #99"):
        _core._load_parts(slim, [], "", [(99, t)])
    # A source whose raw_data is not bytes: a TypeError when a pass reads it.
    stripped = onnx.ModelProto()
    stripped.CopyFrom(model)
    stripped.graph.initializer[0].ClearField("raw_data")
    m = _core._load_parts(stripped.SerializeToString(), [], "", [(0, object())])
    with pytest.raises(Exception):
        m.to_bytes()
