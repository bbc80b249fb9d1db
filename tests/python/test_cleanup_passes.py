"""The cleanup passes beyond the golden text tests: the CLI, onnxruntime runs
after set-input-shape, torch exports with initializers as inputs, and `simplify`."""

from __future__ import annotations

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper


def dynamic_model() -> onnx.ModelProto:
    """Y = Reshape(X * W + B, [batch, -1]) with X : float[batch, seq, 4], plus noise for
    every cleanup pass: Identity, a float->double->float round trip, an initializer listed
    as an input, a duplicate initializer, a Constant node."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", "seq", 4])
    w_in = helper.make_tensor_value_info("W", TensorProto.FLOAT, [4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", None])
    w = numpy_helper.from_array(np.arange(4, dtype=np.float32), "W")
    w_copy = numpy_helper.from_array(np.arange(4, dtype=np.float32), "W_copy")
    nodes = [
        helper.make_node("Identity", ["X"], ["x"]),
        helper.make_node("Mul", ["x", "W"], ["t"]),
        helper.make_node("Cast", ["t"], ["t64"], to=TensorProto.DOUBLE),
        helper.make_node("Cast", ["t64"], ["t32"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["t32", "W_copy"], ["u"]),
        helper.make_node("Constant", [], ["shape"], value_ints=[0, -1]),
        helper.make_node("Reshape", ["u", "shape"], ["Y"]),
    ]
    graph = helper.make_graph(nodes, "g", [x, w_in], [y], [w, w_copy])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def test_cli_runs_the_cleanup_passes(tmp_path, run_cli, oracle):
    source = tmp_path / "in.onnx"
    source.write_bytes(dynamic_model().SerializeToString())
    out = tmp_path / "out.onnx"
    proc = run_cli(
        "--pass",
        "remove-initializer-inputs,strip-identity-cast,dedupe-initializers,extract-constants,dce",
        source,
        "-o",
        out,
    )
    del proc
    result = onnx.load(out)
    oracle.assert_valid(result)
    assert [i.name for i in result.graph.input] == ["X"]
    assert oracle.op_histogram(result) == {"Mul": 1, "Add": 1, "Reshape": 1}
    assert sorted(t.name for t in result.graph.initializer) == ["W", "shape"]
    assert [o.name for o in result.graph.output] == ["Y"]
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    oracle.assert_equivalent(dynamic_model(), result, inputs={"X": x})


def test_cli_lists_the_new_passes_and_rejects_bad_options(tmp_path, run_cli):
    listing = run_cli("passes").stdout
    for name in (
        "strip-identity-cast",
        "remove-initializer-inputs",
        "dedupe-initializers",
        "extract-constants",
        "set-input-shape",
        "simplify",
    ):
        assert name in listing
    source = tmp_path / "in.onnx"
    source.write_bytes(dynamic_model().SerializeToString())
    bad = run_cli("--pass", "set-input-shape=nosuch:1x2", source, "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "no graph input named 'nosuch'" in bad.stderr
    assert not (tmp_path / "o.onnx").exists()


def test_set_input_shape_then_onnxruntime_runs_the_fixed_shape(oracle):
    model = osg.run(dynamic_model(), "remove-initializer-inputs,set-input-shape(shapes=X:2x?x4, dims=seq:3)")
    oracle.assert_valid(model)
    dims = [
        d.dim_value if d.HasField("dim_value") else d.dim_param for d in model.graph.input[0].type.tensor_type.shape.dim
    ]
    assert dims == [2, 3, 4]
    out_dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert out_dims == [2, 12], "shape inference carried the new shape to the output"
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    outputs = oracle.run_model(model, {"X": x})
    expected = (x * np.arange(4, dtype=np.float32) + np.arange(4, dtype=np.float32)).reshape(2, -1)
    np.testing.assert_allclose(outputs["Y"], expected, rtol=1e-6)


def test_set_input_shape_errors_leave_the_model_alone():
    model = dynamic_model()
    for pipeline, message in [
        ("set-input-shape=X:2x3", "has rank 3"),
        ("set-input-shape=X:1x1x5", "is static 4; 5 contradicts it"),
        ("set-input-shape(dims=length:2)", "no graph input has a dim named 'length'"),
        ("set-input-shape=X", "is not NAME:DIMS"),
    ]:
        with pytest.raises(Exception, match=message):
            osg.run(model, pipeline)


def test_remove_initializer_inputs_on_a_torch_export_with_initializers_as_inputs(tmp_path, oracle):
    torch = pytest.importorskip("torch")
    module = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2)).eval()
    path = tmp_path / "m.onnx"
    x = torch.randn(3, 4)
    torch.onnx.export(
        module, (x,), str(path), keep_initializers_as_inputs=True, dynamo=False, input_names=["x"], output_names=["y"]
    )
    original = onnx.load(path)
    assert len(original.graph.input) > 1, "the export lists its weights as inputs"
    report: list = []
    rewritten = osg.run(original, "remove-initializer-inputs", report=report)
    assert [i.name for i in rewritten.graph.input] == ["x"]
    assert report[0]["counts"]["inputs-removed"] == len(original.graph.input) - 1
    oracle.assert_valid(rewritten)
    oracle.assert_equivalent(original, rewritten, inputs={"x": x.numpy()})


def test_remove_initializer_inputs_skips_ir3_with_a_report():
    model = dynamic_model()
    model.ir_version = 3
    report: list = []
    result = osg.run(model, "remove-initializer-inputs", report=report)
    assert [i.name for i in result.graph.input] == ["X", "W"]
    assert any("ir_version < 4" in k for k in report[0]["counts"])


def test_dedupe_initializers_compares_in_full_what_the_sampled_hash_cannot_tell_apart():
    """Large weights are told apart by a hash of their first, middle and last 4 KiB; two
    that agree there but differ elsewhere must still not merge, and identical ones must."""
    base = np.random.default_rng(5).standard_normal(16384).astype(np.float32)  # 64 KiB
    differs = base.copy()
    differs[5000] += 1.0  # byte 20000: outside the three sampled windows
    tensors = {"A": base, "B": differs, "C": base.copy()}
    nodes = [helper.make_node("Add", ["X", name], [f"y{name}"]) for name in tensors]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [16384])],
        [helper.make_tensor_value_info(f"y{n}", TensorProto.FLOAT, [16384]) for n in tensors],
        [numpy_helper.from_array(a, n) for n, a in tensors.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    report: list = []
    result = osg.run(model, "dedupe-initializers", report=report)
    assert report[0]["counts"] == {"initializers-merged": 1}
    assert {t.name for t in result.graph.initializer} == {"A", "B"}  # C merged into A, B kept
    assert [n.input[1] for n in result.graph.node] == ["A", "B", "A"]


def test_dedupe_initializers_reads_external_data_in_place(tmp_path, oracle):
    model = dynamic_model()
    big = np.random.default_rng(2).standard_normal(4096).astype(np.float32)
    for name in ("E1", "E2"):
        model.graph.initializer.append(numpy_helper.from_array(big, name))
    model.graph.node.insert(0, helper.make_node("Add", ["E1", "E2"], ["e"]))
    model.graph.output.append(helper.make_tensor_value_info("e", TensorProto.FLOAT, [4096]))
    path = tmp_path / "ext.onnx"
    onnx.save(
        model, path, save_as_external_data=True, all_tensors_to_one_file=True, location="w.bin", size_threshold=1024
    )
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "dedup.onnx"  # its own folder: its w.bin must not replace the source's
    report: list = []
    osg.run(str(path), "dedupe-initializers", output=out, report=report)
    assert report[0]["counts"]["initializers-merged"] == 1  # E2 into E1; W is an input, so W_copy stays
    result = onnx.load(out)
    names = {t.name for t in result.graph.initializer}
    assert "E2" not in names and "E1" in names
    oracle.assert_equivalent(path, out, inputs={"X": np.ones((1, 2, 4), np.float32)})


def test_extract_constants_round_trip_is_equivalent(oracle):
    model = dynamic_model()
    to_init = osg.run(model, "extract-constants")
    assert "Constant" not in oracle.op_histogram(to_init)
    back = osg.run(to_init, "extract-constants=constant")
    assert not [t for t in back.graph.initializer if t.name not in {"W"}], "only the input-listed W stays"
    x = np.random.default_rng(3).standard_normal((1, 2, 4)).astype(np.float32)
    feeds = {"X": x}
    oracle.assert_equivalent(model, to_init, inputs=feeds)
    oracle.assert_equivalent(model, back, inputs=feeds)


def test_simplify_reaches_a_fixed_point(oracle):
    model = dynamic_model()
    report: list = []
    result = osg.run(model, "remove-initializer-inputs,simplify", report=report)
    oracle.assert_valid(result)
    assert "Identity" not in oracle.op_histogram(result)
    assert "Cast" not in oracle.op_histogram(result)
    assert report[1]["counts"]["rounds"] >= 2, "the last round is the one that changed nothing"
    again = osg.run(result, "simplify", report=(second := []))
    assert second[0]["counts"]["rounds"] == 1
    assert onnx.helper.printable_graph(again.graph) == onnx.helper.printable_graph(result.graph)
    x = np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32)
    oracle.assert_equivalent(model, result, inputs={"X": x})


def identities_not_naming_an_output(graph: onnx.GraphProto):
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        if node.op_type == "Identity" and node.output[0] not in outputs:
            yield node.name
        for attribute in node.attribute:
            for sub in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                yield from identities_not_naming_an_output(sub)


def test_simplify_on_the_corpus_removes_every_identity(corpus_model, oracle):
    original = onnx.load(corpus_model.path)
    result = osg.run(original, "simplify", report=(report := []))
    oracle.assert_valid(result)
    # Every step reports a change only when it made one, so the rounds end at a fixed point.
    assert "stopped-at-max-rounds" not in report[0]["counts"], report[0]["counts"]
    assert report[0]["counts"]["rounds"] <= 4, report[0]["counts"]
    # An Identity may only remain where it carries a graph (or body) output's name for a
    # value that cannot take it: a graph input, an outer-scope value, another output.
    assert not list(identities_not_naming_an_output(result.graph))
    if corpus_model.runnable:
        oracle.assert_equivalent(
            original, result, inputs=corpus_model.all_inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
        )


def test_set_input_shape_on_the_corpus_keeps_models_equivalent(corpus_model, oracle):
    """Fixes every input of a real export to the shape of the corpus's test inputs: the
    re-inferred model is valid, and onnxruntime computes the same outputs with it."""
    original = onnx.load(corpus_model.path)
    inputs = {i.name: i for i in original.graph.input}
    shapes = ";".join(
        f"{name}:{'x'.join(map(str, array.shape))}"
        for name, array in corpus_model.inputs.items()
        if name in inputs and array.ndim > 0
    )
    if not shapes:
        pytest.skip("no non-scalar inputs")
    result = osg.run(original, f"set-input-shape={shapes}")
    oracle.assert_valid(result)
    for value in result.graph.input:
        if value.name in corpus_model.inputs:
            dims = [d.dim_value if d.HasField("dim_value") else None for d in value.type.tensor_type.shape.dim]
            assert dims == list(corpus_model.inputs[value.name].shape)
    if corpus_model.runnable:
        oracle.assert_equivalent(
            original, result, inputs=corpus_model.inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
        )


def test_extract_constants_both_ways_on_the_corpus(corpus_model, oracle):
    """Initializers to Constant nodes and back again, on real exports: valid and equivalent
    each way; only overridable (graph input) initializers stay initializers."""
    original = onnx.load(corpus_model.path)
    as_constants = osg.run(original, "extract-constants=constant")
    oracle.assert_valid(as_constants)
    overridable = {i.name for i in original.graph.input}
    assert not [t.name for t in as_constants.graph.initializer if t.name not in overridable]
    back = osg.run(as_constants, "extract-constants")
    oracle.assert_valid(back)
    if corpus_model.runnable:
        for model in (as_constants, back):
            oracle.assert_equivalent(
                original, model, inputs=corpus_model.all_inputs, rtol=corpus_model.rtol, atol=corpus_model.atol
            )


def test_fuse_conv_bn_matches_torch_conv_bn(oracle):
    """A torch Conv2d + BatchNorm2d (eval, random statistics), exported without torch's
    own folding: after fuse-conv-bn one Conv remains and the outputs agree."""
    torch = pytest.importorskip("torch")
    import io

    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1, groups=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, groups=4, bias=False),
        torch.nn.BatchNorm2d(8),
    ).eval()
    for bn in (net[1], net[4]):
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        bn.weight.data.uniform_(0.5, 2)
        bn.bias.data.uniform_(-1, 1)
    x = torch.randn(2, 3, 10, 10)
    buffer = io.BytesIO()
    torch.onnx.export(
        net,
        (x,),
        buffer,
        opset_version=17,
        dynamo=False,
        training=torch.onnx.TrainingMode.PRESERVE,
        do_constant_folding=False,
    )
    model = onnx.load_from_string(buffer.getvalue())
    assert oracle.op_histogram(model).get("BatchNormalization") == 2
    fused = osg.run(model, "fuse-conv-bn")
    assert "BatchNormalization" not in oracle.op_histogram(fused)
    (y,) = oracle.run_model(fused, {model.graph.input[0].name: x.numpy()}).values()
    np.testing.assert_allclose(y, net(x).detach().numpy(), rtol=1e-4, atol=1e-5)
