"""Classical-ML models (ai.onnx.ml): label and one-hot encoders over string
tensors, a tree ensemble, ZipMap's seq(map) output, through every pass and opset conversion;
--check feeds strings and compares seq(map) outputs; every profile states what it does with
ai.onnx.ml, strings and sequences, and check --target refuses with that reason.

The skl2onnx/onnxmltools models themselves are in the corpus (tag "ml": tree ensembles,
linear models, scalers, OneHotEncoder, ZipMap) and go through every pass in
test_corpus_passes.py; the models here are written by hand to hold what those lack
(LabelEncoder both ways, string outputs, ai.onnx.ml opset 3)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper

ML_DOMAIN = "ai.onnx.ml"


def encoders_model(ml_opset: int = 2) -> onnx.ModelProto:
    """S: string[N] -> LabelEncoder -> int64 id, OneHotEncoder -> float[N,3]; the id back
    to a string (LabelEncoder int64 -> string); a tree ensemble on the one-hot rows;
    a LinearClassifier whose scores ZipMap turns into seq(map(int64, float))."""
    cats = ["a", "b", "c"]
    nodes = [
        helper.make_node(
            "LabelEncoder",
            ["S"],
            ["ids"],
            domain=ML_DOMAIN,
            keys_strings=cats,
            values_int64s=[0, 1, 2],
            default_int64=-1,
        ),
        helper.make_node(
            "LabelEncoder",
            ["ids"],
            ["names"],
            domain=ML_DOMAIN,
            keys_int64s=[0, 1, 2],
            values_strings=["A", "B", "C"],
            default_string="?",
        ),
        helper.make_node("OneHotEncoder", ["S"], ["onehot"], domain=ML_DOMAIN, cats_strings=cats, zeros=1),
        helper.make_node("Reshape", ["onehot", "rows3"], ["features"]),
        helper.make_node(
            "TreeEnsembleRegressor",
            ["features"],
            ["tree"],
            domain=ML_DOMAIN,
            n_targets=1,
            nodes_treeids=[0, 0, 0],
            nodes_nodeids=[0, 1, 2],
            nodes_featureids=[0, 0, 0],
            nodes_values=[0.5, 0.0, 0.0],
            nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
            nodes_truenodeids=[1, 0, 0],
            nodes_falsenodeids=[2, 0, 0],
            target_treeids=[0, 0],
            target_nodeids=[1, 2],
            target_ids=[0, 0],
            target_weights=[-1.0, 2.5],
        ),
        helper.make_node(
            "LinearClassifier",
            ["features"],
            ["label", "scores"],
            domain=ML_DOMAIN,
            coefficients=[1.0, 0.0, -1.0, 0.5, 2.0, 0.0],
            intercepts=[0.1, -0.2],
            classlabels_ints=[0, 1],
            post_transform="LOGISTIC",
        ),
        helper.make_node("ZipMap", ["scores"], ["probabilities"], domain=ML_DOMAIN, classlabels_int64s=[0, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "encoders",
        [helper.make_tensor_value_info("S", TensorProto.STRING, ["N"])],
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, ["N"]),
            helper.make_tensor_value_info("names", TensorProto.STRING, ["N"]),
            helper.make_tensor_value_info("tree", TensorProto.FLOAT, ["N", 1]),
            helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
            helper.make_value_info(
                "probabilities",
                helper.make_sequence_type_proto(
                    helper.make_map_type_proto(TensorProto.INT64, helper.make_tensor_type_proto(TensorProto.FLOAT, []))
                ),
            ),
        ],
        [onnx.numpy_helper.from_array(np.array([-1, 3], np.int64), "rows3")],
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML_DOMAIN, ml_opset)]
    )
    model.ir_version = 8
    return model


FEEDS = {"S": np.array(["a", "c", "zz", "b", "a", ""], dtype=object)}


def run_ort(model: onnx.ModelProto) -> list:
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, FEEDS)


def assert_same_outputs(got: list, want: list) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list):  # seq(map)
            assert [sorted(m) for m in g] == [sorted(m) for m in w]
            np.testing.assert_allclose(
                [[m[k] for k in sorted(m)] for m in g], [[m[k] for k in sorted(m)] for m in w], rtol=1e-5, atol=1e-6
            )
        elif w.dtype == object:
            assert list(g) == list(w)
        else:
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


PASSES = [p["name"] for p in osg.passes() if p["name"] not in ("target",)]


@pytest.mark.parametrize(
    "pipeline", PASSES + ["convert-opset(opset=13)", "convert-opset(opset=21)", "simplify,convert-opset(opset=11)"]
)
def test_every_pass_keeps_an_ml_model(pipeline, oracle):
    model = encoders_model()
    want = run_ort(model)
    try:
        out = osg.run(model, pipeline)
    except osg.OnnxSurgeonError as e:  # passes that need an option refuse without one
        assert "option" in str(e) or "needs" in str(e), e
        return
    oracle.assert_valid(out)
    assert [o.name for o in out.graph.output] == [o.name for o in model.graph.output]
    assert_same_outputs(run_ort(out), want)


def test_cli_check_feeds_strings_and_compares_seq_map(tmp_path, run_cli):
    path = tmp_path / "ml.onnx"
    onnx.save(encoders_model(), path)
    proc = run_cli("--pass", "simplify", path, "-o", tmp_path / "out.onnx", "--check")
    text = proc.stdout + proc.stderr
    assert "check: passed" in text, text
    assert "probabilities" in text and "names" in text, text


NO_ML = ["trt-8.6", "trt-10", "rknn2", "ncnn", "nncase-k210", "nncase-k230", "openvino", "tflite", "ort-mobile"]


@pytest.mark.parametrize("target", NO_ML)
def test_targets_without_ml_refuse_with_the_reason(target, tmp_path, run_cli):
    path = tmp_path / "ml.onnx"
    onnx.save(encoders_model(), path)
    proc = run_cli("check", "--target", target, "--json", path, expect_rc=None)
    report = json.loads(proc.stdout)
    reasons = json.dumps(report)
    assert "ai.onnx.ml op LabelEncoder" in reasons, reasons[:2000]
    assert "no ai.onnx.ml operators" in reasons
    assert "sequences or maps" in reasons


def test_onnxruntime_accepts_and_older_ones_lower_the_ml_opset(tmp_path, run_cli):
    path = tmp_path / "ml.onnx"
    onnx.save(encoders_model(ml_opset=3), path)
    proc = run_cli("check", "--target", "ort", path, expect_rc=None)
    assert "accepted" in proc.stdout, proc.stdout
    out = tmp_path / "old.onnx"
    proc = run_cli("--target", "ort-1.10", path, "-o", out)
    assert "ml-opset=2" in proc.stdout + proc.stderr
    lowered = onnx.load(out)
    assert {o.domain: o.version for o in lowered.opset_import}[ML_DOMAIN] == 2
    assert_same_outputs(run_ort(lowered), run_ort(encoders_model(ml_opset=3)))


def test_every_profile_states_ml_strings_and_sequences(run_cli, repo_root):
    names = sorted(p.stem for p in (repo_root / "targets").glob("*.toml"))
    assert len(names) >= 15
    for name in names:
        text = run_cli("targets", "--sources", name).stdout
        assert "ai.onnx.ml ops: " in text and "string tensors: " in text and "sequences/maps: " in text, name


def classifier_with_label_cast() -> onnx.ModelProto:
    """skl2onnx's classifier form: TreeEnsembleClassifier's label (typed int64 with no shape:
    onnx infers none through ai.onnx.ml) goes through an identity Cast to the graph output,
    which declares int64[N]."""
    nodes = [
        helper.make_node(
            "TreeEnsembleClassifier",
            ["X"],
            ["label", "scores"],
            domain=ML_DOMAIN,
            classlabels_int64s=[0, 1],
            nodes_treeids=[0, 0, 0],
            nodes_nodeids=[0, 1, 2],
            nodes_featureids=[0, 0, 0],
            nodes_values=[0.0, 0.0, 0.0],
            nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
            nodes_truenodeids=[1, 0, 0],
            nodes_falsenodeids=[2, 0, 0],
            class_treeids=[0, 0],
            class_nodeids=[1, 2],
            class_ids=[0, 1],
            class_weights=[1.0, 1.0],
        ),
        helper.make_node("Cast", ["label"], ["output_label"], to=TensorProto.INT64),
    ]
    graph = helper.make_graph(
        nodes,
        "classifier",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 2])],
        [
            helper.make_tensor_value_info("output_label", TensorProto.INT64, [None]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["N", 2]),
        ],
        value_info=[helper.make_tensor_value_info("label", TensorProto.INT64, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(ML_DOMAIN, 1)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize("pipeline", ["strip-identity-cast", "set-input-shape(shapes=X:3x2),strip-identity-cast"])
def test_a_replaced_graph_output_keeps_its_declared_shape(pipeline, oracle):
    """Removing the Cast makes the less-typed `label` the graph output; the output keeps the
    shape it declared (onnx's checker requires one on a graph output)."""
    import onnxruntime as ort

    model = classifier_with_label_cast()
    out = osg.run(model, pipeline)
    oracle.assert_valid(out)
    assert "Cast" not in [n.op_type for n in out.graph.node]
    assert out.graph.output[0].type.tensor_type.HasField("shape")
    x = {"X": np.array([[-1.0, 0.5], [2.0, 0.0], [0.0, 1.0]], dtype=np.float32)}
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, x)
    got = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
