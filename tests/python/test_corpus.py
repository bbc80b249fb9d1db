"""The real-model corpus (tests/models) and the equivalence oracle (onnxsurgeon.testing).

Per corpus model:
  * the exported model is valid ONNX and onnxruntime reproduces the torch outputs,
    so the corpus itself is trustworthy ground truth for every pass test;
  * the manifest agrees with the graph (later tests rely on its counts and tags);
  * a CLI load -> save round trip without passes returns the identical protobuf.
Then the oracle is tested against models known to be wrong: an oracle that cannot fail
would make every equivalence test in the project meaningless.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from google.protobuf.message import Message
from onnx import helper, numpy_helper

# Domains onnxruntime implements without a custom-op library.
STANDARD_DOMAINS = {"ai.onnx", "ai.onnx.ml", "com.microsoft"}
CONTROL_FLOW_OPS = {"If", "Loop", "Scan"}

# Declared tag -> ops the graph must contain (subgraphs included).  Exporters change
# between versions (e.g. TorchScript CSEs a duplicated Sub away); this keeps a tag from
# silently describing a structure the model no longer has.
TAG_REQUIRES_OPS = {
    "gelu-erf": {"Erf": 1},
    "gelu-tanh": {"Tanh": 1},
    "gelu-tanh-pow": {"Pow": 1, "Tanh": 1},
    "gelu-op": {"Gelu": 1},
    "duplicated-sub": {"Sub": 2},
    "reciprocal": {"Reciprocal": 1},
    "shape-chain": {"Shape": 1, "Gather": 1, "Unsqueeze": 1, "Concat": 1, "Reshape": 1},
    "duplicated-output": {"Identity": 1},
    "index-put": {"ScatterND": 2},
    "lstm": {"LSTM": 1},
    "instancenorm": {"InstanceNormalization": 1},
    "convtranspose": {"ConvTranspose": 1},
    "control-flow": {"If": 1},
}


# ------------------------------------------------------------------ corpus models


def test_corpus_model_is_valid_and_matches_torch(corpus_model, oracle):
    oracle.assert_valid(corpus_model.path)
    if not corpus_model.runnable:
        # "runnable": false must be true: onnxruntime really refuses the model.
        with pytest.raises(RuntimeError, match="cannot load"):
            oracle.run_model(corpus_model.path, corpus_model.inputs)
        assert corpus_model.expected, "non-runnable models still carry torch reference outputs"
        return
    for input_set in corpus_model.input_sets:  # every If branch
        outputs = oracle.run_model(corpus_model.path, input_set.inputs)
        assert list(outputs) == corpus_model.manifest["output_names"]
        oracle.assert_outputs_close(
            outputs,
            input_set.expected,
            corpus_model.rtol,
            corpus_model.atol,
            actual_label="onnxruntime",
            desired_label=f"torch (input set {input_set.label})",
        )


def test_corpus_manifest_agrees_with_graph(corpus_model, oracle):
    """Pass tests will assert e.g. 'exactly modules.LayerNorm LayerNormalization after
    fix-layernorm'; these invariants make sure those numbers mean what they say."""
    model = onnx.load(corpus_model.path, load_external_data=False)
    manifest, tags = corpus_model.manifest, corpus_model.tags
    initializers = {t.name for t in model.graph.initializer}
    assert [i.name for i in model.graph.input if i.name not in initializers] == manifest["input_names"]
    assert [o.name for o in model.graph.output] == manifest["output_names"]
    assert set(corpus_model.inputs) == set(manifest["input_names"])

    histogram = oracle.op_histogram(model)
    assert dict(histogram) == manifest["op_histogram"], "generator and oracle histograms disagree"
    assert manifest["node_count"] == len(model.graph.node)
    assert manifest["opset"] == next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))

    local = {f.domain for f in model.functions}
    foreign = oracle.domains(model) - STANDARD_DOMAINS - local
    assert ("custom-domain" in tags) == bool(foreign), foreign
    assert ("local-function" in tags) == bool(model.functions)
    assert ("subgraph" in tags) == bool(CONTROL_FLOW_OPS & set(histogram))
    if foreign:
        assert not corpus_model.runnable

    for tag, ops in TAG_REQUIRES_OPS.items():
        if tag in tags:
            missing = {op: n for op, n in ops.items() if histogram[op] < n}
            assert not missing, f"tag {tag!r} needs at least {missing}; histogram {dict(histogram)}"
    if "gelu-tanh-cube" in tags:
        assert histogram["Tanh"] >= 1 and histogram["Pow"] == 0
    _check_reducemean_axes_form(model, tags)

    layernorms = manifest["modules"]["LayerNorm"]
    if "must-not-fuse-layernorm" in tags:
        assert layernorms == 0 and histogram["LayerNormalization"] == 0
    if "layernorm-op" in tags:
        assert histogram["LayerNormalization"] == layernorms > 0
    if "layernorm-decomposed" in tags:
        assert layernorms > 0 and histogram["LayerNormalization"] == 0
    if "rmsnorm" in tags:
        assert manifest["modules"].get("RMSNorm", 0) > 0


def _check_reducemean_axes_form(model: onnx.ModelProto, tags: set[str]) -> None:
    """ReduceMean takes axes as an attribute up to opset 17 and as an input from 18."""
    reduce_means = [n for n in model.graph.node if n.op_type == "ReduceMean"]
    if "reducemean-axes-attr" in tags:
        assert reduce_means and all(any(a.name == "axes" for a in n.attribute) for n in reduce_means)
    if "reducemean-axes-input" in tags:
        assert reduce_means and all(len(n.input) == 2 for n in reduce_means)


# ----------------------------------------------------------------- CLI round trip


def _first_difference(a: Message, b: Message, path: str = "model") -> str:
    """Where two protobuf messages first differ, e.g. 'model.graph.node[3].attribute[0].f'."""
    for field in a.DESCRIPTOR.fields:
        va, vb = getattr(a, field.name), getattr(b, field.name)
        where = f"{path}.{field.name}"
        is_message = field.message_type is not None
        if field.is_repeated:
            if len(va) != len(vb):
                return f"{where}: {len(va)} vs {len(vb)} entries"
            for i, (x, y) in enumerate(zip(va, vb)):
                if x != y:
                    return _first_difference(x, y, f"{where}[{i}]") if is_message else f"{where}[{i}]: {x!r} vs {y!r}"
        elif is_message:
            if a.HasField(field.name) != b.HasField(field.name):
                return f"{where}: set in only one of them"
            if va != vb:
                return _first_difference(va, vb, where)
        elif va != vb or (field.has_presence and a.HasField(field.name) != b.HasField(field.name)):
            if isinstance(va, bytes) and isinstance(vb, bytes):
                offset = next((i for i, (x, y) in enumerate(zip(va, vb)) if x != y), min(len(va), len(vb)))
                return f"{where}: {len(va)} vs {len(vb)} bytes, first difference at byte {offset}"
            return f"{where}: {va!r} vs {vb!r}"
    return f"{path}: unknown fields differ"


def test_first_difference_locates_the_change(corpus):
    """The round-trip test's diagnostics point at the changed field."""
    original = onnx.load(corpus.model("layernorm_op17").path)
    changed = onnx.ModelProto()
    changed.CopyFrom(original)
    assert _first_difference(original, changed) == "model: unknown fields differ"  # equal: no field named
    epsilon = next(a for a in changed.graph.node[2].attribute if a.name == "epsilon")
    epsilon.f = 1e-3
    assert _first_difference(original, changed).startswith("model.graph.node[2].attribute[1].f: ")
    changed.CopyFrom(original)
    data = bytearray(changed.graph.initializer[0].raw_data)
    data[5] ^= 1
    changed.graph.initializer[0].raw_data = bytes(data)
    size = len(data)
    assert _first_difference(original, changed) == (
        f"model.graph.initializer[0].raw_data: {size} vs {size} bytes, first difference at byte 5"
    )
    changed.CopyFrom(original)
    del changed.graph.node[-1]
    assert _first_difference(original, changed) == "model.graph.node: 5 vs 4 entries"


def _one_import_per_domain(model: onnx.ModelProto) -> None:
    """What the loader does with an opset import repeated with the same version (skl2onnx
    writes them): it keeps the first."""
    seen, kept = set(), []
    for imp in model.opset_import:
        domain = "" if imp.domain == "ai.onnx" else imp.domain
        if domain not in seen:
            seen.add(domain)
            kept.append(imp)
    del model.opset_import[:]
    model.opset_import.extend(kept)


def test_cli_roundtrip_unchanged(corpus_model, oracle, run_cli, tmp_path):
    """No passes: the CLI must write back exactly the model it read (one opset import per
    domain)."""
    out = tmp_path / corpus_model.path.name
    run_cli(corpus_model.path, "-o", out)
    assert out.is_file(), "the CLI exited 0 but wrote nothing"
    original = onnx.load(corpus_model.path, load_external_data=False)
    _one_import_per_domain(original)
    rewritten = onnx.load(out, load_external_data=False)
    if original != rewritten:
        pytest.fail(f"round trip changed the model: {_first_difference(original, rewritten)}", pytrace=False)
    if corpus_model.runnable:
        # Identical protobufs, single-threaded ORT: the outputs must be bit-identical.
        oracle.assert_equivalent(corpus_model.path, out, corpus_model.all_inputs, rtol=0, atol=0)
        for input_set in corpus_model.input_sets:
            outputs = oracle.run_model(out, input_set.inputs)
            oracle.assert_outputs_close(
                outputs, input_set.expected, corpus_model.rtol, corpus_model.atol, desired_label="torch"
            )


# --------------------------------------------------------------------- the oracle

MUTATION_MODELS = ["layernorm_op17", "bert_op14", "ln_fp16_casts_op17", "control_flow_op17", "styletts_block_op14"]


def _mutate_one_weight(model: onnx.ModelProto) -> str:
    """Adds 1 to the first element of the first float weight of a MatMul/Gemm/Conv/
    ConvTranspose/LSTM: element 0 feeds output element 0 whatever the inputs are."""
    consumers = {
        name
        for node in model.graph.node
        if node.op_type in ("MatMul", "Gemm", "Conv", "ConvTranspose", "LSTM")
        for name in node.input
    }
    for init in model.graph.initializer:
        if init.name in consumers and init.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16):
            weight = numpy_helper.to_array(init).copy()
            weight.reshape(-1)[0] += weight.dtype.type(1.0)
            init.CopyFrom(numpy_helper.from_array(weight, init.name))
            return init.name
    raise AssertionError("no weight to mutate")


@pytest.mark.parametrize("name", MUTATION_MODELS)
def test_oracle_catches_one_mutated_weight(name, corpus, oracle, tmp_path):
    model = corpus.model(name)
    proto = onnx.load(model.path)
    # Sanity first: an untouched copy (ModelProto, not path) passes, so a failure
    # below is caused by the mutation and not by the oracle rejecting everything.
    oracle.assert_equivalent(model.path, proto, model.inputs, model.rtol, model.atol, expected=model.expected)
    mutated = _mutate_one_weight(proto)
    with pytest.raises(AssertionError) as caught:
        oracle.assert_equivalent(model.path, proto, model.inputs, model.rtol, model.atol)
    message = str(caught.value)
    assert "worst at" in message and model.manifest["output_names"][0] in message, message
    # Random inputs (no inputs=) catch it too, and so does a path to the mutated model.
    # seq=8: with 2 tokens a random 0/1 attention mask often leaves one visible key, and
    # softmax over one key ignores the queries, i.e. the mutated weight.
    path = tmp_path / "mutated.onnx"
    onnx.save(proto, path)
    with pytest.raises(AssertionError, match="differ"):
        oracle.assert_equivalent(model.path, path, rtol=model.rtol, atol=model.atol, dim_values={"seq": 8})
    assert mutated


def _fuse_norm_naively(model: onnx.ModelProto, epsilon: float) -> onnx.ModelProto:
    """Replaces everything between the Linear layers of a corpus_norm.WithNorm model
    (from the first ReduceMean to the proj_out MatMul) by one LayerNormalization:
    what a LayerNorm fuser that matched too loosely would produce."""
    fused = onnx.ModelProto()
    fused.CopyFrom(model)
    nodes = list(fused.graph.node)
    first = next(i for i, n in enumerate(nodes) if n.op_type == "ReduceMean")
    last = max(i for i, n in enumerate(nodes) if n.op_type == "MatMul")
    initializers = {t.name for t in fused.graph.initializer}
    norm_out = next(name for name in nodes[last].input if name not in initializers)
    layer_norm = helper.make_node(
        "LayerNormalization",
        [nodes[first].input[0], "norm.weight", "norm.bias"],
        [norm_out],
        axis=-1,
        epsilon=epsilon,
    )
    del fused.graph.node[:]
    fused.graph.node.extend(nodes[:first] + [layer_norm] + nodes[last:])
    return fused


@pytest.mark.parametrize(
    "name, epsilon, equivalent",
    [
        ("ln_pow_div_op17", 1e-5, True),  # a real LayerNorm: fusing it is correct
        ("ln_std_eps_op17", 1e-2, False),  # eps outside the sqrt
        ("ln_unbiased_var_op17", 1e-5, False),  # N-1 variance
    ],
)
def test_oracle_separates_layernorm_from_lookalikes(name, epsilon, equivalent, corpus, oracle):
    """The must-not-fuse models differ from a LayerNorm by far more than the tolerance,
    so a fuser that wrongly matches them fails equivalence instead of slipping through;
    and a correct fusion of a real LayerNorm passes."""
    model = corpus.model(name)
    original = onnx.load(model.path)
    fused = _fuse_norm_naively(original, epsilon)
    oracle.assert_valid(fused)
    oracle.assert_ops(fused, absent=["ReduceMean", "Sqrt"], exactly={"LayerNormalization": 1})
    if equivalent:
        oracle.assert_equivalent(original, fused, model.inputs, expected=model.expected)
    else:
        with pytest.raises(AssertionError, match="does not match"):
            oracle.assert_equivalent(original, fused, model.inputs)


def _two_output_model(swap: bool) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])
    outs = ["a", "b"] if not swap else ["b", "a"]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])],
        "two_outputs",
        [x],
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2, 3]) for n in outs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_oracle_checks_output_names_and_order(oracle):
    oracle.assert_equivalent(_two_output_model(False), _two_output_model(False))
    with pytest.raises(AssertionError, match="output names differ"):
        oracle.assert_equivalent(_two_output_model(False), _two_output_model(True))


def test_oracle_compare_semantics(oracle):
    close = oracle.assert_outputs_close
    close({"y": np.array([1.0, np.nan], np.float32)}, {"y": np.array([1.0 + 1e-6, np.nan], np.float32)})
    close({"y": np.array([np.inf], np.float32)}, {"y": np.array([np.inf], np.float32)})
    with pytest.raises(AssertionError, match=r"worst at \[1\]"):
        close({"y": np.array([1.0, 0.0], np.float32)}, {"y": np.array([1.0, np.nan], np.float32)})
    with pytest.raises(AssertionError, match=r"worst at \[0, 1\].*abs_err=0\.5"):
        close({"y": np.array([[1.0, 2.5]])}, {"y": np.array([[1.0, 2.0]])})
    with pytest.raises(AssertionError, match="exact compare"):
        close({"i": np.array([1, 2, 3])}, {"i": np.array([1, 2, 4])})
    with pytest.raises(AssertionError, match="dtype"):
        close({"y": np.zeros(2, np.float16)}, {"y": np.zeros(2, np.float32)})
    with pytest.raises(AssertionError, match="shape"):
        close({"y": np.zeros((2, 1))}, {"y": np.zeros(2)})
    # rtol scales with the reference (desired) value
    close({"y": np.array([1000.05])}, {"y": np.array([1000.0])}, rtol=1e-4, atol=0)
    with pytest.raises(AssertionError):
        close({"y": np.array([0.05])}, {"y": np.array([0.0])}, rtol=1e-4, atol=1e-4)


def test_oracle_expected_catches_wrong_reference(corpus, oracle):
    model = corpus.model("layernorm_op17")
    wrong = {name: value + 1e-2 for name, value in model.expected.items()}
    with pytest.raises(AssertionError, match="expected"):
        oracle.assert_equivalent(model.path, model.path, model.inputs, expected=wrong)


def test_random_inputs_follow_signature(corpus, oracle):
    bert = corpus.model("bert_op14")
    feeds = oracle.random_inputs(bert.path, {"batch": 3, "seq": 5})
    assert list(feeds) == ["input_ids", "attention_mask"]
    for value in feeds.values():
        assert value.shape == (3, 5) and value.dtype == np.int64
        assert value.min() >= 0 and value.max() < 2
    assert oracle.random_inputs(bert.path)["input_ids"].shape == (2, 2)
    fp16 = oracle.random_inputs(corpus.model("ln_fp16_casts_op17").path)
    assert fp16["x"].dtype == np.float16 and fp16["x"].shape == (2, 5, 32)
    again = oracle.random_inputs(bert.path, {"batch": 3, "seq": 5})
    assert all(np.array_equal(feeds[k], again[k]) for k in feeds), "random_inputs must be seeded"
    # the dynamic model runs at the bound sizes
    assert oracle.run_model(bert.path, feeds)["last_hidden_state"].shape == (3, 5, 32)


def test_histogram_subgraphs_functions_and_domains(corpus, oracle):
    loop = corpus.model("control_flow_op17").path
    top = oracle.op_histogram(loop, include_subgraphs=False)
    full = oracle.op_histogram(loop)
    # The If condition's mean is in the main graph; the LayerNorm is in the Loop body.
    assert top["Loop"] == 1 and top["If"] == 1 and top["ReduceMean"] == 1 and top["Sqrt"] == 0
    assert full["ReduceMean"] == 3 and full["Sqrt"] == 1 and full["Mul"] == 2  # Mul: If branch + norm

    local = corpus.model("ln_local_function_op17").path
    calls = oracle.op_histogram(local)
    assert calls["local::LocalLayerNorm"] == 2 and calls["ReduceMean"] == 0
    assert oracle.op_histogram(local, include_functions=True)["ReduceMean"] == 2
    assert oracle.domains(local) == {"ai.onnx", "local"}
    assert oracle.domains(corpus.model("ln_custom_domain_op17").path) == {"ai.onnx", "custom"}
    assert oracle.op_histogram(corpus.model("ln_custom_domain_op17").path)["custom::Custom_LayerNorm"] == 1


def test_assert_ops_reports_every_violation(corpus, oracle):
    path = corpus.model("layernorm_op17").path
    histogram = oracle.assert_ops(path, absent=["ReduceMean"], exactly={"LayerNormalization": 1, "Gelu": 0})
    assert histogram["MatMul"] == 2
    with pytest.raises(AssertionError) as caught:
        oracle.assert_ops(path, absent=["LayerNormalization"], exactly={"MatMul": 3}, at_least={"Gelu": 1})
    message = str(caught.value)
    assert "LayerNormalization present 1" in message
    assert "MatMul present 2 time(s), expected exactly 3" in message
    assert "Gelu present 0 time(s), expected at least 1" in message


def test_assert_valid_rejects_broken_models(corpus, oracle, tmp_path: Path):
    model = onnx.load(corpus.model("layernorm_op17").path)
    oracle.assert_valid(model)
    dangling = onnx.ModelProto()
    dangling.CopyFrom(model)
    dangling.graph.node[0].input[0] = "no_such_value"
    with pytest.raises(AssertionError, match="not valid ONNX"):
        oracle.assert_valid(dangling)
    path = tmp_path / "dangling.onnx"
    onnx.save(dangling, path)
    with pytest.raises(AssertionError, match="not valid ONNX"):
        oracle.assert_valid(path)
    # strict shape inference: a declared output shape that contradicts inference
    wrong_shape = onnx.ModelProto()
    wrong_shape.CopyFrom(model)
    wrong_shape.graph.output[0].type.tensor_type.shape.dim[2].dim_value = 7
    with pytest.raises(AssertionError, match="not valid ONNX"):
        oracle.assert_valid(wrong_shape)
