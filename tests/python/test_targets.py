"""`--target`, `check --target` and `targets`, and the pipeline-level forbidden
ops.

The corpus test runs every profile on every corpus model: when `--target` succeeds, its
output passes onnx's full checker, its own `check --target`, a second `--target` finds
nothing to do, and onnxruntime computes what the original computed. When it refuses, it
names the blockers that remain, writes nothing, and `check --target` rejects the original
too (the planner never gives up on something check would accept)."""

from __future__ import annotations

import json
import re

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper

PROFILES = [
    "coreml",
    "ncnn",
    "nncase-k210",
    "nncase-k230",
    "openvino",
    "ort",
    "ort-1.10",
    "ort-1.14",
    "ort-1.15",
    "ort-1.16",
    "ort-mobile",
    "rknn2",
    "tflite",
    "tidl",
    "trt-10",
    "trt-8.6",
]


def _shapes_arg(inputs: dict[str, np.ndarray]) -> str:
    return ";".join(f"{name}:{'x'.join(str(d) for d in a.shape) or '1'}" for name, a in inputs.items() if a.ndim > 0)


# ---------------------------------------------------------------------------- listing


def test_targets_lists_every_profile(run_cli):
    out = run_cli("targets").stdout
    names = [line.split()[0] for line in out.splitlines() if line and not line.startswith(" ")]
    assert names == sorted(PROFILES)


def test_sources_and_markdown_print_the_same_facts(run_cli):
    """`targets --sources NAME` and the profile's part of `targets --markdown` (docs/profiles.md)
    come from one list of facts, each with a source."""
    markdown = run_cli("targets", "--markdown").stdout
    for name in PROFILES:
        out = run_cli("targets", "--sources", name).stdout
        facts = [line[2:] for line in out.splitlines() if line.startswith("  ")]
        assert facts, out
        for fact in facts:
            assert fact.partition(": ")[2].strip(), f"{name}: fact without source: {fact!r}"
        part = markdown.split(f"\n### `{name}`: ", 1)[1].split("\n### ", 1)[0]
        assert facts == [line[2:] for line in part.splitlines() if line.startswith("- ")], name


def test_docs_condition_list_is_generated_from_the_registry(run_cli, repo_root, generated_docs):
    """The `when` vocabulary is written once, in passes/targeting/conditions; the docs print it."""
    text = (repo_root / "docs" / "targets.md").read_text()
    generated = generated_docs.section(text, "onnxsurgeon targets --conditions --markdown")
    assert generated is not None, "docs/targets.md lacks the markers of its condition list"
    assert generated == run_cli("targets", "--conditions", "--markdown").stdout, (
        "docs/targets.md's condition list is stale: run scripts/update-docs.py"
    )


def test_unknown_condition_in_a_profile_file_names_file_and_entry(run_cli, tmp_path):
    profile = tmp_path / "mine.toml"
    profile.write_text(
        'name = "mine"\ntitle = "t"\nversions = "v"\n[opset]\nmin = 7\nmax = 17\nsource = "s"\n'
        '[custom]\ndomains = false\nfunctions = false\nsource = "s"\n'
        '[[missing]]\nops = ["TopK"]\nwhen = "sometimes"\nsource = "s"\n'
    )
    proc = run_cli("targets", "--sources", str(profile), expect_rc=1)
    assert f"{profile}: missing[0].when: 'sometimes' is no condition" in proc.stderr, proc.stderr


def test_unknown_target_and_bad_profile_file(run_cli, tmp_path):
    m = tmp_path / "m.onnx"
    onnx.save(_relu_model(18), m)
    proc = run_cli("--target", "nosuch", m, "-o", tmp_path / "o.onnx", expect_rc=2)
    assert "unknown target 'nosuch'" in proc.stderr and "rknn2" in proc.stderr
    assert not (tmp_path / "o.onnx").exists()
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ntitle = "t"\nversions = "v"\n[opset]\nmin = 7\nmax = 13\nsorce = "typo"\n')
    proc = run_cli("--target", bad, m, "-o", tmp_path / "o.onnx", expect_rc=2)
    assert "opset.source: missing" in proc.stderr or "opset.sorce: unknown key" in proc.stderr


def test_user_profile_file(run_cli, tmp_path, repo_root):
    """A profile outside the built-in set loads from its file, with the same parser."""
    text = (repo_root / "targets" / "ort-1.10.toml").read_text().replace('name = "ort-1.10"', 'name = "my-board"')
    (tmp_path / "my.toml").write_text(text)
    m = tmp_path / "m.onnx"
    onnx.save(_relu_model(18), m)
    proc = run_cli("--target", tmp_path / "my.toml", m, "-o", tmp_path / "o.onnx")
    assert "target my-board: ran convert-opset=15" in proc.stderr
    assert onnx.load(tmp_path / "o.onnx").opset_import[0].version == 15


# ---------------------------------------------------------------------------- small models


def _relu_model(opset: int, ir: int | None = None) -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir if ir is not None else 10
    return m


def _gelu_model() -> onnx.ModelProto:
    g = helper.make_graph(
        [helper.make_node("Gelu", ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 10
    return m


def test_check_target_python_matches_cli_json(run_cli, tmp_path):
    """onnxsurgeon.check_target returns what `check --target --json` prints, for a path, a
    ModelProto and a Model; input_shapes (text or dict) count as --input-shapes."""
    m = tmp_path / "m.onnx"
    onnx.save(_gelu_model(), m)
    cli = json.loads(run_cli("check", "--target", "trt-8.6", "--json", m, expect_rc=1).stdout)
    assert osg.check_target(m, "trt-8.6") == cli
    assert not cli["accepted"]
    ops = {b["op"] for b in cli["blockers"]}
    assert "Gelu" in ops, cli
    gelu = next(b for b in cli["blockers"] if b["op"] == "Gelu")
    assert gelu["fixable"] and gelu["source"] and gelu["fact"]
    from_proto = osg.check_target(_gelu_model(), "trt-8.6")
    assert from_proto["blockers"] == cli["blockers"] and from_proto["model"] == "<model>"
    assert osg.check_target(osg.load(m), "ort")["accepted"]

    dyn = _gelu_model()
    dyn.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    onnx.save(dyn, tmp_path / "dyn.onnx")
    static = osg.check_target(dyn, "nncase-k210")
    shape_blocker = next(b for b in static["blockers"] if b["where"] == "graph input")
    assert not shape_blocker["fixable"], shape_blocker
    for shapes in ("x:2x8", {"x": [2, 8]}):
        given = osg.check_target(dyn, "nncase-k210", input_shapes=shapes)
        blocker = next(b for b in given["blockers"] if b["where"] == "graph input")
        assert blocker["fixable"] and "set-input-shape" in blocker["fix"], blocker
        cli = json.loads(
            run_cli(
                "check",
                "--target",
                "nncase-k210",
                "--json",
                "--input-shapes",
                "x:2x8",
                tmp_path / "dyn.onnx",
                expect_rc=1,
            ).stdout
        )
        assert given["blockers"] == cli["blockers"]


def test_check_target_python_unknown_target_is_an_error(tmp_path):
    with pytest.raises(osg.OnnxSurgeonError, match="no-such-target"):
        osg.check_target(_gelu_model(), "no-such-target")


def test_ir_version_lowered_for_old_onnxruntime(run_cli, tmp_path):
    m = tmp_path / "m.onnx"
    onnx.save(_relu_model(18, ir=10), m)
    run_cli("check", "--target", "ort-1.14", m, expect_rc=1)
    proc = run_cli("--target", "ort-1.14", m, "-o", tmp_path / "o.onnx")
    assert "lower-ir-version(max=8)" in proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    assert out.ir_version == 8 and out.opset_import[0].version == 18
    run_cli("check", "--target", "ort-1.14", tmp_path / "o.onnx")


def test_ir_version_refusal_names_the_feature(run_cli, tmp_path):
    m = _relu_model(18, ir=10)
    m.graph.initializer.append(helper.make_tensor("f8", TensorProto.FLOAT8E4M3FN, [1], [1.0]))
    m.graph.node.append(helper.make_node("Cast", ["f8"], ["f8c"], to=TensorProto.FLOAT))
    m.graph.output.append(helper.make_tensor_value_info("f8c", TensorProto.FLOAT, [1]))
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("--target", "ort-1.14", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "FLOAT8E4M3FN" in proc.stderr and "IR version <= 8" in proc.stderr
    assert not (tmp_path / "o.onnx").exists()


def test_gelu_rknn2_decomposed_and_equivalent(run_cli, tmp_path, oracle):
    onnx.save(_gelu_model(), tmp_path / "m.onnx")
    proc = run_cli("--target", "rknn2", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert "convert-opset=19" in proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    hist = oracle.op_histogram(out)
    assert "Gelu" not in hist and "Erf" in hist and out.ir_version == 9
    oracle.assert_equivalent(
        tmp_path / "m.onnx", out, inputs={"x": np.linspace(-5, 5, 16, dtype=np.float32).reshape(2, 8)}
    )


def test_plan_is_printed_and_second_run_is_a_no_op(run_cli, tmp_path):
    onnx.save(_gelu_model(), tmp_path / "m.onnx")
    proc = run_cli("--target", "trt-8.6", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert re.search(r"target trt-8\.6: ran convert-opset=17", proc.stderr)
    again = run_cli("--target", "trt-8.6", tmp_path / "o.onnx", "-o", tmp_path / "o2.onnx")
    assert "nothing to do" in again.stderr


def test_target_composes_with_pass(run_cli, tmp_path, oracle):
    """User passes run first, in the same pipeline (their forbidden ops hold for the plan)."""
    onnx.save(_gelu_model(), tmp_path / "m.onnx")
    proc = run_cli("--pass", "rewrite-gelu", "--target", "openvino", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    hist = oracle.op_histogram(onnx.load(tmp_path / "o.onnx"))
    assert "Gelu" not in hist, proc.stderr


def test_check_target_json(run_cli, tmp_path):
    onnx.save(_gelu_model(), tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "trt-8.6", "--json", tmp_path / "m.onnx", expect_rc=1)
    report = json.loads(proc.stdout)
    assert report["target"] == "trt-8.6" and not report["accepted"]
    blockers = {(b["op"], b["fix"]) for b in report["blockers"]}
    assert ("Gelu", "rewrite-gelu") in blockers
    assert ("", "convert-opset=17") in blockers
    for b in report["blockers"]:
        assert b["source"] and b["fact"].startswith("trt-8.6: ")


def test_static_shape_target_needs_input_shapes(run_cli, tmp_path):
    onnx.save(_relu_model(13, ir=7), tmp_path / "m.onnx")
    proc = run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "give --input-shapes x:DIMS" in proc.stderr and not (tmp_path / "o.onnx").exists()
    proc = run_cli("--target", "nncase-k210", "--input-shapes", "x:2x4", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    out = onnx.load(tmp_path / "o.onnx")
    dims = [d.dim_value for d in out.graph.input[0].type.tensor_type.shape.dim]
    assert dims == [2, 4]
    run_cli("check", "--target", "nncase-k210", tmp_path / "o.onnx")


def test_paddle_minus_one_dims_made_static(run_cli, tmp_path):
    """paddle2onnx writes dynamic dims as dim_value -1; set-input-shape takes them."""
    m = _relu_model(13, ir=7)
    for vi in (m.graph.input[0], m.graph.output[0]):
        vi.type.tensor_type.shape.dim[0].Clear()
        vi.type.tensor_type.shape.dim[0].dim_value = -1
    onnx.save(m, tmp_path / "m.onnx")
    run_cli("--pass", "set-input-shape=x:3x4", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert [d.dim_value for d in onnx.load(tmp_path / "o.onnx").graph.input[0].type.tensor_type.shape.dim] == [3, 4]


def test_external_data_inlined_for_nncase(run_cli, tmp_path, oracle):
    w = np.arange(16, dtype=np.float32).reshape(4, 4)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [onnx.numpy_helper.from_array(w, "w")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(
        m,
        tmp_path / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="m.data",
        size_threshold=0,
    )
    run_cli("check", "--target", "nncase-k210", tmp_path / "m.onnx", expect_rc=1)
    (tmp_path / "out").mkdir()
    run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "out" / "o.onnx")
    out = onnx.load(tmp_path / "out" / "o.onnx", load_external_data=False)
    assert not any(t.data_location == TensorProto.EXTERNAL for t in out.graph.initializer)
    assert all(vi.type.tensor_type.HasField("shape") for vi in out.graph.value_info) or not out.graph.value_info
    proc = run_cli(
        "--target", "nncase-k210", "--external-data", "all", tmp_path / "m.onnx", "-o", tmp_path / "x.onnx", expect_rc=1
    )
    assert "inline" in proc.stderr


def test_local_function_and_stray_import_for_openvino(run_cli, tmp_path, oracle):
    body = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 18)]
    )
    g = helper.make_graph(
        [helper.make_node("Twice", ["x"], ["y"], domain="local")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        g, functions=[body], opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("local", 1)]
    )
    m.ir_version = 10
    onnx.save(m, tmp_path / "m.onnx")
    run_cli("--target", "openvino", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    out = onnx.load(tmp_path / "o.onnx")
    assert [i.domain for i in out.opset_import] == [""] and not out.functions
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs={"x": np.array([1, 2], np.float32)})


def test_rknn2_keeps_scatternd_add_trt_lowers_it(run_cli, tmp_path, oracle):
    """rknn-toolkit2 2.5 computes ScatterND add correctly (measured): rknn2 accepts it as is
    and never lowers it (the lowered form breaks its build); TensorRT 8.6 lowers it."""
    g = helper.make_graph(
        [helper.make_node("ScatterND", ["d", "i", "u"], ["y"], reduction="add")],
        "g",
        [
            helper.make_tensor_value_info("d", TensorProto.FLOAT, [4]),
            helper.make_tensor_value_info("u", TensorProto.FLOAT, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [onnx.numpy_helper.from_array(np.array([[1], [1]], np.int64), "i")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "m.onnx")
    run_cli("check", "--target", "rknn2", tmp_path / "m.onnx")
    proc = run_cli("--target", "rknn2", tmp_path / "m.onnx", "-o", tmp_path / "r.onnx")
    assert "nothing to do" in proc.stderr and "lower-scatternd-reduction" not in proc.stderr
    proc = run_cli("--target", "trt-8.6", tmp_path / "m.onnx", "-o", tmp_path / "t.onnx")
    assert "lower-scatternd-reduction" in proc.stderr
    out = onnx.load(tmp_path / "t.onnx")
    assert not any(a.name == "reduction" and a.s != b"none" for n in out.graph.node for a in n.attribute)
    feeds = {"d": np.zeros(4, np.float32), "u": np.array([1, 2], np.float32)}
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs=feeds)


def _scatter_after(op: str, indices: np.ndarray | None) -> onnx.ModelProto:
    """x[rows] = v after a Linear (index_put's first half): Gemm or MatMul, then ScatterND
    with constant rows (or rows as an input when indices is None)."""
    rng = np.random.default_rng(0)
    inits = [onnx.numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "w")]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 8]),
        helper.make_tensor_value_info("v", TensorProto.FLOAT, [3, 8]),
    ]
    if indices is None:
        inputs.append(helper.make_tensor_value_info("rows", TensorProto.INT64, [3, 1]))
    else:
        inits.append(onnx.numpy_helper.from_array(indices, "rows"))
    g = helper.make_graph(
        [helper.make_node(op, ["x", "w"], ["h"]), helper.make_node("ScatterND", ["h", "rows", "v"], ["y"])],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 8])],
        inits,
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 16)])
    m.ir_version = 8
    return m


def test_rknn2_constant_scatter_after_gemm_becomes_where(run_cli, tmp_path, oracle):
    """rknn-toolkit2 2.5's build crashes on a constant-index ScatterND after a Gemm
    (measured, targets/probes/edge_models.py); --target rknn2 writes it as Where(mask,
    Gather(v, map), h), exactly. After a MatMul, or with runtime rows, it is left alone."""
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((6, 8)).astype(np.float32), "v": rng.standard_normal((3, 8)).astype(np.float32)}
    onnx.save(_scatter_after("Gemm", np.array([[0], [2], [-1]], np.int64)), tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "rknn2", tmp_path / "m.onnx", expect_rc=1)
    assert "constant-scatter-after-gemm" in proc.stdout and "IndexError" in proc.stdout, proc.stdout
    proc = run_cli("--target", "rknn2", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert "rewrite-constant-scatternd" in proc.stderr, proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    hist = oracle.op_histogram(out)
    assert "ScatterND" not in hist and hist.get("Where") == 1 and hist.get("Gather") == 1, hist
    run_cli("check", "--target", "rknn2", tmp_path / "o.onnx")
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs=feeds, rtol=0, atol=0)

    onnx.save(_scatter_after("MatMul", np.array([[0], [2], [5]], np.int64)), tmp_path / "mm.onnx")
    run_cli("check", "--target", "rknn2", tmp_path / "mm.onnx")
    onnx.save(_scatter_after("Gemm", None), tmp_path / "rt.onnx")
    run_cli("check", "--target", "rknn2", tmp_path / "rt.onnx")


def test_nncase_constant_scatternd_becomes_where(run_cli, tmp_path, oracle):
    """nncase 1.9 has no ScatterND (measured) but compiles the selection (measured on the
    same model): a constant-index ScatterND is rewritten, one with runtime rows stays named."""
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((6, 8)).astype(np.float32), "v": rng.standard_normal((3, 8)).astype(np.float32)}
    onnx.save(_scatter_after("MatMul", np.array([[0], [2], [5]], np.int64)), tmp_path / "m.onnx")
    proc = run_cli(
        "--target", "nncase-k210", "--input-shapes", "x:6x8;v:3x8", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx"
    )
    assert "rewrite-constant-scatternd" in proc.stderr, proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    assert "ScatterND" not in oracle.op_histogram(out)
    run_cli("check", "--target", "nncase-k210", tmp_path / "o.onnx")
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs=feeds, rtol=0, atol=0)
    onnx.save(_scatter_after("MatMul", None), tmp_path / "rt.onnx")
    report = json.loads(run_cli("check", "--target", "nncase-k210", "--json", tmp_path / "rt.onnx", expect_rc=1).stdout)
    assert [b["fixable"] for b in report["blockers"] if b["op"] == "ScatterND"] == [False], report


def test_rknn2_names_dropped_outputs(run_cli, tmp_path):
    """rknn-toolkit2 2.5 drops a graph output that copies another output, and a constant
    output (measured): check --target names them, --target writes nothing; a copy of an
    input is kept (measured), so it does not block."""

    def model(nodes, outputs):
        g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])], outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m

    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])
    relu = helper.make_node("Relu", ["x"], ["y"])
    onnx.save(model([relu, helper.make_node("Identity", ["y"], ["z"])], [y, z]), tmp_path / "copy.onnx")
    proc = run_cli("check", "--target", "rknn2", tmp_path / "copy.onnx", expect_rc=1)
    assert "graph output 'z' is a copy of graph output 'y'" in proc.stdout, proc.stdout
    proc = run_cli("--target", "rknn2", tmp_path / "copy.onnx", "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "blocker(s) remain" in proc.stderr and not (tmp_path / "o.onnx").exists()
    const = helper.make_node("Constant", [], ["z"], value=onnx.numpy_helper.from_array(np.ones((1, 4), np.float32)))
    onnx.save(model([relu, const], [y, z]), tmp_path / "const.onnx")
    proc = run_cli("check", "--target", "rknn2", tmp_path / "const.onnx", expect_rc=1)
    assert "graph output 'z' is a constant" in proc.stdout, proc.stdout
    onnx.save(model([relu, helper.make_node("Identity", ["x"], ["z"])], [y, z]), tmp_path / "input.onnx")
    run_cli("check", "--target", "rknn2", tmp_path / "input.onnx")


def test_ncnn_takes_any_batch(run_cli, tmp_path):
    """ncnn's Mat has no batch dimension, but pnnx decides per model whether dim 0 is a batch
    (its generated script then runs one item at a time) or not (the whole tensor is one Mat):
    a static batch of 2 ran and matched in every form probed (targets/probes/ncnn_models.txt),
    so no batch is a blocker, static or given by --input-shapes."""

    def model(dims):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
        g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m

    for name, dims in (("b2", [2, 5, 32]), ("b1", [1, 5, 32]), ("dyn", ["batch", 5, 32]), ("scalar", [])):
        onnx.save(model(dims), tmp_path / f"{name}.onnx")
        proc = run_cli("check", "--target", "ncnn", tmp_path / f"{name}.onnx")
        assert "batch" not in proc.stdout.split("accepted")[-1], proc.stdout
    run_cli("check", "--target", "ncnn", "--input-shapes", "x:2x5x32", tmp_path / "dyn.onnx")


def test_ncnn_names_what_pnnx_cannot_lower(run_cli, tmp_path):
    """Measured with pnnx 20261020 + ncnn 1.0.20261020 (targets/ncnn.toml): a strided or
    reversed Slice, a rank-6 Reshape/Transpose, a Cast from int64, and a graph output that
    copies a graph input are named; their near neighbours (step 1, rank 5, int64 -> int64,
    a copy of an intermediate value) are not."""

    def check(nodes, inits=(), x_type=TensorProto.FLOAT, dims=(1, 4, 8, 8), out_dims=None, out_type=None):
        x = helper.make_tensor_value_info("x", x_type, list(dims))
        y = helper.make_tensor_value_info("y", out_type or x_type, out_dims)
        g = helper.make_graph(nodes, "g", [x], [y], list(inits))
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, tmp_path / "m.onnx")
        proc = run_cli("check", "--target", "ncnn", tmp_path / "m.onnx", expect_rc=None)
        return proc.stdout

    def ints(name, values):
        return onnx.numpy_helper.from_array(np.array(values, np.int64), name)

    def sliced(step):
        inits = [ints("s", [0]), ints("e", [8]), ints("a", [3]), ints("st", [step])]
        return check([helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])], inits)

    assert "steps 'st' = [2]" in sliced(2) and "lacks Slice when step-not-one" in sliced(2)
    assert "step-not-one" in sliced(-1)
    assert "accepted" in sliced(1)

    def transposed(rank):
        dims = [1] + [2] * (rank - 1)
        perm = [0, *range(rank - 1, 0, -1)]
        return check([helper.make_node("Transpose", ["x"], ["y"], perm=perm)], dims=dims, out_dims=dims)

    assert "lacks Transpose when rank>5" in transposed(6)
    assert "accepted" in transposed(5)

    def cast(x_type, to):
        return check([helper.make_node("Cast", ["x"], ["y"], to=to)], x_type=x_type, out_type=to)

    out = cast(TensorProto.INT64, TensorProto.FLOAT)
    assert "Cast ('x' int64 -> float)" in out and "lacks Cast when cast-from:int64" in out, out
    assert "cast-from" not in cast(TensorProto.INT64, TensorProto.INT64)
    assert "cast-from" not in cast(TensorProto.FLOAT, TensorProto.FLOAT16)
    # An element count computed from the shape (an unbiased variance's n) is folded by pnnx.
    count = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("ReduceProd", ["s"], ["n"], keepdims=0),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Div", ["x", "nf"], ["y"]),
    ]
    assert "cast-from" not in check(count), check(count)
    # Shape arithmetic that reuses each value twice, 60 levels deep: 2**60 paths, each value
    # judged once (a walk per path would never finish).
    deep = [helper.make_node("Shape", ["x"], ["d0"])]
    deep += [helper.make_node("Add", [f"d{i}", f"d{i}"], [f"d{i + 1}"]) for i in range(60)]
    deep += [
        helper.make_node("Cast", ["d60"], ["df"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "df"], ["y"]),
    ]
    out = check(deep, dims=(1, 4, 8, 4))
    assert "cast-from" not in out, out

    copy_of_input = check([helper.make_node("Identity", ["x"], ["y"])])
    assert "graph output 'y' is a copy of graph input 'x'" in copy_of_input, copy_of_input
    relu_copy = check([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Identity", ["r"], ["y"])])
    assert "accepted" in relu_copy, relu_copy


def test_nncase_lstm_output_transpose_becomes_reshape_and_gru_is_unrolled(run_cli, tmp_path, oracle):
    """nncase 1.9 computes Transpose(Squeeze(Y)) after an LSTM wrong (measured: torch's
    batch_first export) and the same move as a Reshape right: --target nncase-k210 writes a
    Transpose that only moves unit dims as a Reshape; a GRU whose output is used (measured
    wrong in every consumed form) is unrolled (unroll-rnn)."""
    rng = np.random.default_rng(0)

    def const(name, a):
        return onnx.numpy_helper.from_array(np.asarray(a), name)

    def model(cell, gates):
        inits = [
            const("W", rng.standard_normal((1, gates * 16, 32)).astype(np.float32) * 0.3),
            const("R", rng.standard_normal((1, gates * 16, 16)).astype(np.float32) * 0.3),
            const("B", rng.standard_normal((1, 2 * gates * 16)).astype(np.float32) * 0.1),
            const("axis1", np.array([1], np.int64)),
            const("fc", rng.standard_normal((16, 12)).astype(np.float32)),
        ]
        nodes = [
            helper.make_node(cell, ["x", "W", "R", "B"], ["Y"], hidden_size=16),
            helper.make_node("Squeeze", ["Y", "axis1"], ["s"]),
            helper.make_node("Transpose", ["s"], ["t"], perm=[1, 0, 2]),
            helper.make_node("MatMul", ["t", "fc"], ["y"]),
        ]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [24, 1, 32])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 12])
        m = helper.make_model(
            helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)]
        )
        m.ir_version = 7
        return onnx.shape_inference.infer_shapes(m)  # check judges shape facts on annotations

    onnx.save(model("LSTM", 4), tmp_path / "lstm.onnx")
    proc = run_cli("check", "--target", "nncase-k210", tmp_path / "lstm.onnx", expect_rc=1)
    assert "Transpose (moves only dims of size 1)" in proc.stdout and "transpose-to-reshape" in proc.stdout, proc.stdout
    # nncase-k210 simplifies first ([plan] simplify_first), whose own size-one-transpose rule
    # writes the Reshape; the named step is then left with nothing to do.
    proc = run_cli("--target", "nncase-k210", tmp_path / "lstm.onnx", "-o", tmp_path / "out.onnx")
    assert "transpose-to-reshape" in proc.stderr or "ran simplify" in proc.stderr, proc.stderr
    out = onnx.load(tmp_path / "out.onnx")
    assert "Transpose" not in [n.op_type for n in out.graph.node]
    run_cli("check", "--target", "nncase-k210", tmp_path / "out.onnx")
    oracle.assert_equivalent(tmp_path / "lstm.onnx", tmp_path / "out.onnx", rtol=0, atol=0)

    onnx.save(model("GRU", 3), tmp_path / "gru.onnx")
    proc = run_cli("check", "--target", "nncase-k210", tmp_path / "gru.onnx", expect_rc=1)
    assert "lacks GRU" in proc.stdout and "-> unroll-rnn" in proc.stdout, proc.stdout
    proc = run_cli("--target", "nncase-k210", tmp_path / "gru.onnx", "-o", tmp_path / "gru_out.onnx")
    assert "unroll-rnn" in proc.stderr, proc.stderr
    assert "GRU" not in [n.op_type for n in onnx.load(tmp_path / "gru_out.onnx").graph.node]
    oracle.assert_equivalent(tmp_path / "gru.onnx", tmp_path / "gru_out.onnx", rtol=1e-5, atol=1e-5)


def test_static_model_folds_shape_arithmetic_without_input_shapes(run_cli, tmp_path):
    """A model whose inputs are already static needs no --input-shapes for simplify to fold
    its Shape arithmetic (nncase-k210 has no Shape): the plan runs simplify."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 24, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [24, 32])
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Slice", ["s", "one", "three"], ["hw"]),
        helper.make_node("Reshape", ["x", "hw"], ["y"]),
    ]
    inits = [onnx.numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("one", 1), ("three", 3))]
    m = helper.make_model(helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "nncase-k210", tmp_path / "m.onnx", expect_rc=1)
    assert "Shape" in proc.stdout and "give --input-shapes" not in proc.stdout, proc.stdout
    run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert "Shape" not in [n.op_type for n in onnx.load(tmp_path / "out.onnx").graph.node]


def test_nncase_reducesum_axes_input_goes_to_opset_12(run_cli, tmp_path, oracle):
    """nncase 1.9 reads ReduceSum-13's axes input as 'every axis' (measured): --target
    nncase-k210 converts the model to opset 12, where axes is an attribute."""
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=1)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1])],
        [onnx.numpy_helper.from_array(np.array([-1], np.int64), "a")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "nncase-k210", tmp_path / "m.onnx", expect_rc=1)
    assert "ReduceSum (input 1 'a' is given)" in proc.stdout and "convert-opset=12" in proc.stdout, proc.stdout
    proc = run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    out = onnx.load(tmp_path / "o.onnx")
    assert out.opset_import[0].version == 12
    (rs,) = [n for n in out.graph.node if n.op_type == "ReduceSum"]
    assert len(rs.input) == 1 and [a.ints for a in rs.attribute if a.name == "axes"] == [[-1]]
    run_cli("check", "--target", "nncase-k210", tmp_path / "o.onnx")
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 4, 8)).astype(np.float32)}
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs=feeds)


def test_nncase_opset17_reducesum_converted_once(run_cli, tmp_path, oracle):
    """An opset-17, IR-10 model with ReduceSum-13's axes input: nncase-k210's opset range
    (<= 13) and the ReduceSum fact (below 13) make one conversion, straight to 12, which
    lowers the IR version too (was convert-opset=13,convert-opset=12 and a no-op
    lower-ir-version); then the value_info nncase needs."""
    g = helper.make_graph(
        [helper.make_node("ReduceSum", ["x", "a"], ["s"], keepdims=1), helper.make_node("Relu", ["s"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1])],
        [onnx.numpy_helper.from_array(np.array([-1], np.int64), "a")],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert re.search(r"target nncase-k210: ran convert-opset=12,infer-shapes\(reset=true\)\n", proc.stderr), proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    assert out.opset_import[0].version == 12 and out.ir_version <= 8
    run_cli("check", "--target", "nncase-k210", tmp_path / "o.onnx")
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 4, 8)).astype(np.float32)}
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs=feeds)
    # A profile whose range holds opset 17 and has no such fact converts nothing.
    proc = run_cli("--target", "trt-8.6", tmp_path / "m.onnx", "-o", tmp_path / "t.onnx")
    assert "convert-opset" not in proc.stderr, proc.stderr


def test_static_target_simplifies_once_to_the_fixed_point(corpus, run_cli, tmp_path):
    """swin_op17 made static for nncase-k210 and tflite: simplify's folds make declared
    shapes decidable round after round (the planner used to rerun infer-shapes(reset=true),
    simplify four times); one simplify now reaches the fixed point, so re-inferring and
    simplifying the result again changes nothing."""
    model = corpus.model("swin_op17")
    shapes = _shapes_arg(model.inputs)
    for profile in ("nncase-k210", "tflite"):
        out = tmp_path / f"{profile}.onnx"
        proc = run_cli("--target", profile, "--input-shapes", shapes, model.path, "-o", out)
        (plan,) = re.findall(r"ran (\S+)", proc.stderr)
        # nncase-k210 simplifies first ([plan] simplify_first) and once more after the steps
        assert plan.split(",").count("simplify") == (2 if profile == "nncase-k210" else 1), plan
        again = run_cli(
            # (the plan forbids LayerNormalization once it decomposes one: outside it, simplify
            # would fuse tflite's decomposed LayerNorms back at opset 17)
            "--pass",
            "infer-shapes(reset=true),simplify(skip=fix-layernorm)",
            "--report",
            "json",
            out,
            "-o",
            tmp_path / "again.onnx",
        )
        (simplify,) = [r for r in json.loads(again.stdout) if r["pass"] == "simplify"]
        assert not simplify["changed"], (profile, simplify["counts"])


def test_nncase_names_float16_compute(run_cli, tmp_path):
    """nncase 1.9 has no float16 compute (measured: 'type mismatch: [f32]->[f16]'): every op
    computing in float16 is named, the Casts around them are not, and nothing fixes it."""
    g = helper.make_graph(
        [
            helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16),
            helper.make_node("Relu", ["h"], ["r"]),
            helper.make_node("Cast", ["r"], ["y"], to=TensorProto.FLOAT),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    report = json.loads(run_cli("check", "--target", "nncase-k210", "--json", tmp_path / "m.onnx", expect_rc=1).stdout)
    nodes = [b for b in report["blockers"] if b["op"]]  # (and the model-level value_info one, fixable)
    assert [(b["op"], b["fixable"]) for b in nodes] == [("Relu", False)], report
    assert "compute-dtype:float16" in nodes[0]["fact"]
    proc = run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "blocker(s) remain" in proc.stderr and not (tmp_path / "o.onnx").exists()


def test_if_on_runtime_condition_blocks_rknn2(run_cli, tmp_path):
    # The else branch indexes x at a run-time position: computing both branches (if-to-where)
    # could raise where the If would not, so nothing removes this If.
    then_g = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"])],
        "then",
        [],
        [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])],
    )
    else_g = helper.make_graph(
        [helper.make_node("Gather", ["x", "k"], ["e"], axis=0)],
        "else",
        [],
        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])],
    )
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
            helper.make_tensor_value_info("c", TensorProto.BOOL, []),
            helper.make_tensor_value_info("k", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "rknn2", tmp_path / "m.onnx", expect_rc=1)
    assert "If whose condition is computed at run time" in proc.stdout
    assert "rknn2: no If" in proc.stdout
    assert "if-to-where refuses it" in proc.stdout
    proc = run_cli("--target", "rknn2", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx", expect_rc=1)
    assert "blocker(s) remain" in proc.stderr and not (tmp_path / "o.onnx").exists()


# ---------------------------------------------------------------------------- defect 4: pipelines that undo themselves


def _ln_model_opset17() -> onnx.ModelProto:
    """A decomposed LayerNorm at opset 17 (simplify's fusion fuses it there)."""
    return onnx.parser.parse_model("""
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,8] x) => (float[2,8] y) {
      m = ReduceMean<axes=[-1]>(x)
      d = Sub(x, m)
      two = Constant<value=float {2.0}>()
      p = Pow(d, two)
      v = ReduceMean<axes=[-1]>(p)
      eps = Constant<value=float {1e-5}>()
      ve = Add(v, eps)
      s = Sqrt(ve)
      y = Div(d, s)
    }""")


def test_readme_example_does_not_end_with_layernorm(tmp_path, oracle):
    model = _ln_model_opset17()
    out = osg.run(model, "fix-layernorm,decompose-layernorm,simplify")
    assert "LayerNormalization" not in oracle.op_histogram(out)
    oracle.assert_equivalent(model, out, inputs={"x": np.random.default_rng(0).standard_normal((2, 8), np.float32)})


def test_decompose_then_fix_layernorm_op_is_an_error():
    with pytest.raises(Exception, match="removed by 'decompose-layernorm'"):
        osg.run(_ln_model_opset17(), "decompose-layernorm,fix-layernorm(to=op)")


def test_rewrite_erf_then_downgrade_reintroducing_erf_is_an_error():
    """convert-opset decomposes Gelu into the Erf form: after rewrite-erf that is caught."""
    with pytest.raises(Exception, match="reintroduced Erf, which 'rewrite-erf' removed"):
        osg.run(_gelu_model(), "rewrite-erf,downgrade-opset=17")


def test_net_change_reported_when_passes_cancel_out(run_cli, tmp_path):
    """fix-layernorm fuses at 17, downgrade-opset=15 decomposes again: each pass did change
    the model, and the report says the op set ended where it began."""
    onnx.save(_ln_model_opset17(), tmp_path / "m.onnx")
    proc = run_cli(
        "--pass",
        "fix-layernorm,simplify,downgrade-opset=15",
        "--report",
        "text",
        tmp_path / "m.onnx",
        "-o",
        tmp_path / "o.onnx",
    )
    assert "fix-layernorm: changed" in proc.stderr
    assert "net: " in proc.stderr
    net = [line for line in proc.stderr.splitlines() if line.startswith("net: ")][0]
    assert "LayerNormalization" not in net


# ---------------------------------------------------------------------------- corpus


@pytest.mark.parametrize("profile", PROFILES)
def test_target_on_corpus_model(profile, corpus_model, run_cli, oracle, tmp_path):
    src = corpus_model.path
    out = tmp_path / "out.onnx"
    shapes = _shapes_arg(corpus_model.inputs)
    proc = run_cli("--target", profile, "--input-shapes", shapes, src, "-o", out, expect_rc=None)
    if proc.returncode != 0:
        assert proc.returncode == 1, proc.stderr
        assert "blocker(s) remain" in proc.stderr, proc.stderr  # a planned refusal, not a failure of a step
        assert not out.exists()
        run_cli("check", "--target", profile, "--input-shapes", shapes, src, expect_rc=1)
        pytest.xfail(f"{profile} refuses {corpus_model.name}: {proc.stderr.strip().splitlines()[-1][:300]}")
    oracle.assert_valid(out)
    run_cli("check", "--target", profile, out)
    again = run_cli("--target", profile, out, "-o", tmp_path / "again.onnx")
    assert "nothing to do" in again.stderr, again.stderr
    if corpus_model.runnable:
        oracle.assert_equivalent(src, out, inputs=corpus_model.inputs, rtol=corpus_model.rtol, atol=corpus_model.atol)


def test_erf_free_profile_lowers_gelu_then_erf(run_cli, tmp_path, repo_root, oracle):
    """A profile without Erf (a user's own file): Gelu is lowered to its Erf form and the
    Erf then rewritten, in one command; rewrite-erf's stated bound holds."""
    text = (repo_root / "targets" / "ort.toml").read_text()
    text = (
        text.replace('name = "ort"', 'name = "no-erf"')
        .replace("[erf]\nsupported = true", "[erf]\nsupported = false")
        .replace('[gelu]\nform = "op"', '[gelu]\nform = "decomposed"')
    )
    (tmp_path / "no-erf.toml").write_text(text)
    onnx.save(_gelu_model(), tmp_path / "m.onnx")
    proc = run_cli("--target", tmp_path / "no-erf.toml", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert "rewrite-gelu" in proc.stderr and "rewrite-erf" in proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    hist = oracle.op_histogram(out)
    assert "Gelu" not in hist and "Erf" not in hist
    x = np.linspace(-6, 6, 16, dtype=np.float32).reshape(2, 8)
    oracle.assert_equivalent(tmp_path / "m.onnx", out, inputs={"x": x}, rtol=0, atol=2e-6)


def test_target_pass_from_python(oracle):
    out = osg.run(_gelu_model(), "target=trt-8.6")
    hist = oracle.op_histogram(out)
    assert "Gelu" not in hist and out.opset_import[0].version == 17 and out.ir_version == 8


# ------------------------------------------------- defects the real backends found


def _ops(path) -> list[onnx.NodeProto]:
    m = onnx.load(path)
    return list(m.graph.node)


@pytest.mark.parametrize("name", ["gpt2_dynamo18", "ln_dup_sub_dynamo18"])
def test_ort110_no_allowzero_reshape_or_value_ints_constant(name, corpus, run_cli, oracle, tmp_path):
    """onnxruntime 1.10 fails Reshape(allowzero=1) with a -1 and loses value_ints Constants'
    dimension (measured): the plan leaves neither, and the result computes the same."""
    model = corpus.model(name)
    out = tmp_path / "o.onnx"
    run_cli("--target", "ort-1.10", model.path, "-o", out)
    nodes = _ops(out)
    assert not [
        n.name for n in nodes if n.op_type == "Reshape" and any(a.name == "allowzero" and a.i for a in n.attribute)
    ]
    assert not [
        n.name
        for n in nodes
        if n.op_type == "Constant" and any(a.name in ("value_ints", "value_floats") for a in n.attribute)
    ]
    run_cli("check", "--target", "ort-1.10", out)
    oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


@pytest.mark.parametrize("profile", ["ort", "ort-1.10", "ort-1.14", "ort-1.15", "ort-1.16"])
def test_custom_domain_layernorm_blocks_and_is_fixed_for_onnxruntime(profile, corpus, run_cli, oracle, tmp_path):
    model = corpus.model("ln_custom_domain_op17")
    proc = run_cli("check", "--target", profile, model.path, expect_rc=1)
    assert "custom-domain op custom::Custom_LayerNorm" in proc.stdout + proc.stderr
    out = tmp_path / "o.onnx"
    run_cli("--target", profile, model.path, "-o", out)
    assert not any(n.domain == "custom" for n in _ops(out))
    # onnxruntime cannot run the original: compare with the exporter's own outputs (torch).
    oracle.assert_outputs_close(oracle.run_model(out, model.inputs), model.expected, rtol=model.rtol, atol=model.atol)


@pytest.mark.parametrize("profile", ["ort-1.14", "ort-1.15", "ort-1.16"])
def test_fp16_hand_layernorm_fused_for_old_onnxruntime(profile, corpus, run_cli, oracle, tmp_path):
    """onnxruntime 1.14/1.15/1.16 mistype their own fusion of ln_fp16_casts_op17 (measured)."""
    model = corpus.model("ln_fp16_casts_op17")
    out = tmp_path / "o.onnx"
    proc = run_cli("--target", profile, model.path, "-o", out)
    assert "fix-layernorm" in proc.stderr
    assert any(n.op_type == "LayerNormalization" for n in _ops(out))
    oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)
    again = run_cli("--target", "ort-1.14", corpus.model("layernorm_op17").path, "-o", tmp_path / "f.onnx")
    assert "fix-layernorm" not in again.stderr  # float models are left to onnxruntime's own fusion


@pytest.mark.parametrize("profile", ["tflite", "nncase-k210"])
def test_channels_first_layernorm_canonicalised(profile, corpus, run_cli, oracle, tmp_path):
    """onnx2tf refuses and nncase 1.9 crashes on a LayerNorm over NCHW channels as written
    (measured); the hand pipeline's form (Transpose, last-axis LayerNorm, decomposed) ran."""
    model = corpus.model("ln2d_channels_first_op17")
    out = tmp_path / "o.onnx"
    run_cli("--target", profile, "--input-shapes", _shapes_arg(model.inputs), model.path, "-o", out)
    nodes = _ops(out)
    assert any(n.op_type == "Transpose" for n in nodes)
    for n in nodes:
        if n.op_type == "ReduceMean":
            axes = [list(a.ints) for a in n.attribute if a.name == "axes"]
            assert axes in ([[-1]], [[3]]), (n.name, axes)
    oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


def test_tflite_plan_writes_no_castlike(corpus, run_cli, oracle, tmp_path):
    """onnx2tf has no CastLike (measured on layernorm_op17 after --target tflite)."""
    for name in ("layernorm_op17", "ln_local_function_op17"):
        model = corpus.model(name)
        out = tmp_path / f"{name}.onnx"
        run_cli("--target", "tflite", "--input-shapes", _shapes_arg(model.inputs), model.path, "-o", out)
        assert not any(n.op_type == "CastLike" for n in _ops(out)), name
        oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


def test_openvino_accepts_if_with_known_rank_branches(corpus, run_cli):
    """OpenVINO 2026.4.1 ran control_flow_op17 as exported and matched (measured)."""
    proc = run_cli("check", "--target", "openvino", corpus.model("control_flow_op17").path)
    assert "unknown-rank" not in proc.stdout + proc.stderr


def test_global_pool_below_rank_4_rewritten_for_nncase(run_cli, tmp_path, oracle):
    """tf2onnx takes a LayerNorm's mean with GlobalAveragePool of a rank-3 tensor; nncase 1.9
    refuses pooling below 4-D (measured), so --target writes it as ReduceMean; a 4-D pool
    alone is not a blocker."""
    g = helper.make_graph(
        [helper.make_node("GlobalAveragePool", ["x"], ["m"]), helper.make_node("Sub", ["x", "m"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 32])],
    )
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("check", "--target", "nncase-k210", tmp_path / "m.onnx", expect_rc=1)
    assert "GlobalAveragePool" in proc.stdout + proc.stderr and "rank 3" in proc.stdout + proc.stderr
    proc = run_cli("--target", "nncase-k210", tmp_path / "m.onnx", "-o", tmp_path / "o.onnx")
    assert "rewrite-global-pool" in proc.stderr
    out = onnx.load(tmp_path / "o.onnx")
    hist = oracle.op_histogram(out)
    assert "GlobalAveragePool" not in hist and hist.get("ReduceMean") == 1
    run_cli("check", "--target", "nncase-k210", tmp_path / "o.onnx")
    oracle.assert_equivalent(
        tmp_path / "m.onnx", out, inputs={"x": np.random.default_rng(0).standard_normal((2, 5, 32)).astype(np.float32)}
    )

    image = helper.make_model(
        helper.make_graph(
            [helper.make_node("GlobalAveragePool", ["x"], ["y"])],
            "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 1, 1])],
        ),
        opset_imports=[helper.make_opsetid("", 13)],
    )
    image.ir_version = 7
    onnx.save(image, tmp_path / "image.onnx")
    run_cli("check", "--target", "nncase-k210", tmp_path / "image.onnx")


def test_tflite_rank4_mask_reshape_becomes_unsqueeze(corpus, run_cli, oracle, tmp_path):
    """onnx2tf mistranslates a rank-4 Reshape that only inserts unit dims (gpt2_dynamo18's
    mask [2,8,8] -> [2,1,8,8], measured): --target tflite writes it as Unsqueeze, and
    check --target tflite names it in the original."""
    model = corpus.model("gpt2_dynamo18")
    out = tmp_path / "o.onnx"
    shapes = _shapes_arg(model.inputs)
    run_cli("--target", "tflite", "--input-shapes", shapes, model.path, "-o", out)
    unsqueezes = sum(n.op_type == "Unsqueeze" for n in _ops(model.path))
    assert sum(n.op_type == "Unsqueeze" for n in _ops(out)) > unsqueezes
    annotated = tmp_path / "annotated.onnx"
    run_cli("--input-shapes", shapes, "--pass", "infer-shapes", model.path, "-o", annotated)
    proc = run_cli("check", "--target", "tflite", annotated, expect_rc=None)
    assert "inserts-unit-dims:4" in proc.stdout and "reshape-to-unsqueeze(min-rank=4)" in proc.stdout, proc.stdout
    oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


def _concat_model(path, hw):
    # The Concat's first input is an Add of two computed values: the form onnx2tf got wrong.
    g = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Concat", ["s", "b"], ["y"], axis=1)],
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 8, *hw]) for n in ("a", "b")],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, *hw])],
        value_info=[helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 8, *hw])],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def test_tflite_names_concat_over_channels_the_size_of_a_spatial_axis(run_cli, tmp_path):
    """onnx2tf concatenated an Add's [2,8,8,12] result on axis 1 wrongly (channels = height,
    measured on fpn_dynamic_hw_op13): check --target names it, --target refuses it and
    writes nothing; with height 10 nothing blocks."""
    same, other = tmp_path / "same.onnx", tmp_path / "other.onnx"
    _concat_model(same, [8, 12])
    _concat_model(other, [10, 12])
    proc = run_cli("check", "--target", "tflite", same, expect_rc=None)
    assert proc.returncode != 0 and "channel-axis-equals-spatial" in proc.stdout, proc.stdout
    assert "has the size of its axis 2" in proc.stdout
    out = tmp_path / "o.onnx"
    proc = run_cli("--target", "tflite", same, "-o", out, expect_rc=None)
    assert proc.returncode != 0 and not out.exists()
    assert run_cli("check", "--target", "tflite", other).returncode == 0


def test_tflite_static_shape_arithmetic_folded_and_typed(corpus, run_cli, oracle, tmp_path):
    """A CRNN's reshape(b, c * h, w)[:, :c] on static inputs: the planner folds the shape
    arithmetic onnx2tf mistranslates, and every value is typed (the local shape rules take
    the Reshape onnx leaves shapeless)."""
    model = corpus.model("crnn_dynamic_w_op13")
    out = tmp_path / "o.onnx"
    run_cli("--target", "tflite", "--input-shapes", _shapes_arg(model.inputs), model.path, "-o", out)
    assert not any(n.op_type in ("Shape", "Size") for n in _ops(out))
    assert run_cli("check", "--target", "tflite", out).returncode == 0
    oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


def test_tflite_square_ncw_reshape_and_tf_moments_layernorm(corpus, run_cli, oracle, tmp_path):
    """flax_mixer_op17's Reshapes of square [2,32,32] tensors (onnx2tf cannot tell NCW from
    NWC, measured wrong) are removed by simplify's fuse-reshapes; tf.nn.moments LayerNorms
    (Sub([32], [2,5,32]) refused by onnx2tf, measured) are rewritten by fix-layernorm."""
    for name, step in (("flax_mixer_op17", "simplify"), ("tf_moments_layernorm_op13", "fix-layernorm(to=decomposed)")):
        model = corpus.model(name)
        out = tmp_path / f"{name}.onnx"
        shapes = _shapes_arg(model.inputs)
        assert run_cli("check", "--target", "tflite", "--input-shapes", shapes, model.path, expect_rc=None).returncode
        proc = run_cli("--target", "tflite", "--input-shapes", shapes, model.path, "-o", out)
        assert step in proc.stdout + proc.stderr, name
        assert run_cli("check", "--target", "tflite", out).returncode == 0
        oracle.assert_equivalent(model.path, out, inputs=model.inputs, rtol=model.rtol, atol=model.atol)


def test_tflite_grouped_convtranspose_split_per_group(run_cli, oracle, tmp_path):
    """onnx2tf splits a grouped ConvTranspose's input on its last TensorFlow axis and refuses
    it when the input arrives channels-first (Kokoro's depthwise upsampling, measured):
    check --target tflite names it, --target writes one ConvTranspose per group (depthwise
    1-D and grouped 2-D, torch exports), which onnxruntime computes bit for bit as the
    original; a group-1 ConvTranspose is no blocker."""
    import io

    import torch
    from torch import nn

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    cases = {
        "dw1d": (nn.ConvTranspose1d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=8), (1, 8, 5)),
        "g2d": (nn.ConvTranspose2d(8, 6, (3, 2), stride=(2, 1), padding=(1, 0), groups=2), (1, 8, 4, 6)),
        "g1": (nn.ConvTranspose1d(8, 8, 3, stride=2), (1, 8, 5)),
    }
    for name, (module, shape) in cases.items():
        buffer = io.BytesIO()
        torch.onnx.export(
            module.eval(),
            (torch.randn(*shape),),
            buffer,
            dynamo=False,
            opset_version=17,
            input_names=["x"],
            output_names=["y"],
        )
        path, out = tmp_path / f"{name}.onnx", tmp_path / f"{name}.out.onnx"
        path.write_bytes(buffer.getvalue())
        proc = run_cli("check", "--target", "tflite", path, expect_rc=None)
        if name == "g1":
            assert proc.returncode == 0, proc.stdout
            continue
        assert proc.returncode != 0 and "ConvTranspose when attribute:group" in proc.stdout, proc.stdout
        assert "split-grouped-convtranspose" in proc.stdout, proc.stdout
        proc = run_cli("--target", "tflite", path, "-o", out)
        assert "split-grouped-convtranspose" in proc.stdout + proc.stderr
        groups = module.groups
        cts = [n for n in _ops(out) if n.op_type == "ConvTranspose"]
        assert len(cts) == groups and all(a.name != "group" or a.i == 1 for n in cts for a in n.attribute)
        assert run_cli("check", "--target", "tflite", out).returncode == 0
        x = rng.standard_normal(shape).astype(np.float32)
        oracle.assert_equivalent(path, out, inputs={"x": x}, rtol=0, atol=0)


def _loop_model(path, reads_outer: bool):
    """h = tanh(h) + (x if reads_outer else 1), three times, as a Loop (trip count constant)."""
    addend = "x" if reads_outer else "one"
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Tanh", ["h_in"], ["t"]),
            helper.make_node("Add", ["t", addend], ["h_out"]),
        ],
        "body",
        [
            helper.make_tensor_value_info("i", TensorProto.INT64, []),
            helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [2, 16]),
        ],
        [
            helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
            helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [2, 16]),
        ],
    )
    g = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["y"], body=body)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 16])],
        initializer=[
            helper.make_tensor("trips", TensorProto.INT64, [], [3]),
            helper.make_tensor("cond", TensorProto.BOOL, [], [True]),
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
        ],
    )
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path)


def test_tflite_loop_reading_the_main_graph_gets_its_values_carried(run_cli, oracle, tmp_path):
    """onnx2tf converts a Loop body inside tf.while_loop and refuses one that reads a value of
    the main graph (measured: control_flow_op17 and three probes): check --target names it,
    --target makes the body read it as a loop-carried value, which onnxruntime computes as
    the original; a body that reads only its own values and constants is no blocker."""
    outer, own = tmp_path / "outer.onnx", tmp_path / "own.onnx"
    _loop_model(outer, reads_outer=True)
    _loop_model(own, reads_outer=False)
    proc = run_cli("check", "--target", "tflite", outer, expect_rc=None)
    assert proc.returncode != 0 and "Loop when outer-scope-input" in proc.stdout, proc.stdout
    assert "its body reads 'x' of the enclosing graph" in proc.stdout and "loop-carry-outer-values" in proc.stdout
    x = np.random.default_rng(0).standard_normal((2, 16)).astype(np.float32)
    out = tmp_path / "outer.out.onnx"
    proc = run_cli("--target", "tflite", outer, "-o", out)
    assert "loop-carry-outer-values" in proc.stdout + proc.stderr
    (loop,) = [n for n in _ops(out) if n.op_type == "Loop"]
    assert list(loop.input) == ["trips", "cond", "x", "x"] and len(loop.output) == 2
    assert run_cli("check", "--target", "tflite", out).returncode == 0
    oracle.assert_equivalent(outer, out, inputs={"x": x}, rtol=0, atol=0)
    report = json.loads(run_cli("check", "--target", "tflite", "--json", own, expect_rc=None).stdout)
    assert not [b for b in report["blockers"] if b["op"] in ("Loop", "Scan")], report
    out = tmp_path / "own.out.onnx"
    run_cli("--target", "tflite", own, "-o", out)
    assert [n.op_type for n in _ops(out)] == ["Loop"]
    oracle.assert_equivalent(own, out, inputs={"x": x})
