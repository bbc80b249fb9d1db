"""The CLI end to end: exit codes, atomic output, inspect, external data, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, external_data_helper, helper, numpy_helper


def small_model(opset: int = 17) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4])
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "W")
    b = numpy_helper.from_array(np.ones(4, dtype=np.float32), "B")
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["t"], name="mm"),
        helper.make_node("Add", ["t", "B"], ["u"], name="add"),
        helper.make_node("Relu", ["u"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [w, b], doc_string="graph doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="test")
    helper.set_model_props(model, {"author": "me"})
    return model


def inline_equal(a: onnx.ModelProto, b: onnx.ModelProto) -> bool:
    """Equality of two models with their weights inline. onnx.load sets data_location to
    DEFAULT explicitly when it pulls external data in; that presence bit is not content."""
    a, b = onnx.ModelProto.FromString(a.SerializeToString()), onnx.ModelProto.FromString(b.SerializeToString())
    for m in (a, b):
        for t in m.graph.initializer:
            if t.data_location == TensorProto.DEFAULT:
                t.ClearField("data_location")
    return a == b


def write(model: onnx.ModelProto, path: Path) -> Path:
    path.write_bytes(model.SerializeToString())
    return path


def test_help_and_usage_errors(run_cli):
    assert "usage:" in run_cli("--help").stdout
    assert run_cli(expect_rc=2).returncode == 2
    assert "unknown option" in run_cli("--frobnicate", "x.onnx", "-o", "y.onnx", expect_rc=2).stderr
    assert "no output" in run_cli("x.onnx", expect_rc=2).stderr
    assert "onnxsurgeon" in run_cli("--version").stdout


def test_roundtrip_is_lossless(run_cli, tmp_path):
    model = small_model()
    model.graph.value_info.append(helper.make_tensor_value_info("t", TensorProto.FLOAT, ["N", 4]))
    src = write(model, tmp_path / "in.onnx")
    run_cli(src, "-o", tmp_path / "out.onnx")
    assert onnx.load(tmp_path / "out.onnx") == model
    run_cli("--pass", "nop", src, "-o", tmp_path / "out2.onnx")
    assert onnx.load(tmp_path / "out2.onnx") == model


def test_bad_pipeline_points_at_column_and_writes_nothing(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "nop,not-a-pass", src, "-o", out, expect_rc=2)
    assert "column 5" in proc.stderr and "unknown pass 'not-a-pass'" in proc.stderr
    assert "known passes:" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "case, expect",
    [
        ("truncated", "truncated or corrupt"),
        ("garbage", "not a valid ONNX model"),
        ("empty", "empty file"),
        ("missing", "cannot open"),
        ("cycle", "cycle"),
        ("dangling", "'ghost'"),
        ("duplicate", "defined twice"),
        ("escaping-external", "'..'"),
        ("absolute-external", "absolute"),
    ],
)
def test_bad_input_fails_cleanly_and_leaves_output_untouched(run_cli, tmp_path, case, expect):
    folder = tmp_path / "models"
    folder.mkdir()
    src = folder / "bad.onnx"
    good = small_model()
    if case == "truncated":
        src.write_bytes(good.SerializeToString()[:-7])
    elif case == "garbage":
        src.write_bytes(b"\xff\xfe this is no protobuf")
    elif case == "empty":
        src.write_bytes(b"")
    elif case == "cycle":
        good.graph.node[0].input[0] = "Y"  # MatMul reads Relu's output
        write(good, src)
    elif case == "dangling":
        good.graph.node[1].input[1] = "ghost"
        write(good, src)
    elif case == "duplicate":
        good.graph.node[1].output[0] = "t"
        write(good, src)
    elif case in ("escaping-external", "absolute-external"):
        (tmp_path / "secret.bin").write_bytes(b"\0" * 64)
        w = good.graph.initializer[0]
        location = "../secret.bin" if case == "escaping-external" else str(tmp_path / "secret.bin")
        external_data_helper.set_external_data(w, location=location, offset=0, length=64)
        w.ClearField("raw_data")
        w.data_location = TensorProto.EXTERNAL
        write(good, src)
    out = tmp_path / "out.onnx"
    out.write_bytes(b"previous output")
    proc = run_cli(src, "-o", out, expect_rc=1)
    assert expect in proc.stderr, proc.stderr
    assert "bad.onnx" in proc.stderr or case == "missing"
    assert out.read_bytes() == b"previous output"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["models", "out.onnx"] + (["secret.bin"] if "external" in case else [])
    ), "no temporary files are left behind"


def test_external_data_roundtrip_and_conversions(run_cli, tmp_path):
    model = small_model()
    src_dir = tmp_path / "src"
    src_dir.mkdir()
    onnx.save_model(
        model,
        src_dir / "m.onnx",
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location="weights.bin",
        size_threshold=0,
    )
    original = onnx.load(src_dir / "m.onnx", load_external_data=False)

    out_dir = tmp_path / "out"
    out_dir.mkdir()
    run_cli(src_dir / "m.onnx", "-o", out_dir / "m.onnx")  # default: keep external
    assert onnx.load(out_dir / "m.onnx", load_external_data=False) == original
    assert (out_dir / "weights.bin").read_bytes() == (src_dir / "weights.bin").read_bytes()

    run_cli(src_dir / "m.onnx", "-o", tmp_path / "inline.onnx", "--external-data", "inline")
    assert inline_equal(onnx.load(tmp_path / "inline.onnx"), onnx.load(src_dir / "m.onnx"))

    run_cli(
        tmp_path / "inline.onnx",
        "-o",
        tmp_path / "all.onnx",
        "--external-data",
        "all",
        "--external-threshold",
        "32",
        "--external-location",
        "w.data",
    )
    converted = onnx.load(tmp_path / "all.onnx", load_external_data=False)
    external = [t.name for t in converted.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert external == ["W"], "only tensors of at least 32 bytes go external"
    assert inline_equal(onnx.load(tmp_path / "all.onnx"), onnx.load(src_dir / "m.onnx"))
    assert (tmp_path / "w.data").stat().st_size >= 64


def test_dry_run_and_json_report(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--pass", "nop", "--dry-run", "--report", "json", src)
    report = json.loads(proc.stdout)
    assert report[0]["pass"] == "nop" and report[0]["changed"] is False
    assert report[0]["histogram_before"] == {"Add": 1, "MatMul": 1, "Relu": 1}
    assert list(tmp_path.iterdir()) == [src]


def test_passes_lists_the_table(run_cli):
    assert "nop" in run_cli("passes").stdout


def test_inspect_reports_what_blocks_deployment(run_cli, tmp_path):
    model = small_model(opset=16)
    # What users hit: a custom LayerNorm, LayerNormalization below opset 17, weights as inputs.
    model.graph.node.append(helper.make_node("Custom_LayerNorm", ["Y"], ["Z"], domain="custom", epsilon=1e-5))
    model.graph.node.append(helper.make_node("LayerNormalization", ["Z", "B"], ["Z2"], name="ln"))
    model.graph.output[0].name = "Z2"
    model.graph.input.append(helper.make_tensor_value_info("W", TensorProto.FLOAT, [4, 4]))
    model.opset_import.append(helper.make_opsetid("custom", 1))
    src = write(model, tmp_path / "in.onnx")

    text = run_cli("inspect", src).stdout
    assert "custom::Custom_LayerNorm" in text
    assert "LayerNormalization: no schema at opset 16 (the op exists from opset 17)" in text
    assert "initializers also listed as graph inputs: 1 (W)" in text

    report = json.loads(run_cli("inspect", "--json", src).stdout)
    assert report["opsets"] == {"ai.onnx": 16, "custom": 1}
    assert report["node_count"] == 5
    assert report["op_histogram"]["custom::Custom_LayerNorm"] == 1
    assert report["custom_domain_ops"] == {"custom::Custom_LayerNorm": 1}
    assert report["initializers_as_inputs"] == ["W"]
    assert report["inputs"][0] == {"name": "X", "type": "float[N,4]"}
    assert report["ops_without_schema"] == [
        {"op": "LayerNormalization", "why": "no schema at opset 16 (the op exists from opset 17)", "count": 1}
    ]
    assert report["initializer_bytes"] == 80

    onnx.save_model(model, tmp_path / "ext.onnx", save_as_external_data=True, location="ext.bin", size_threshold=0)
    report = json.loads(run_cli("inspect", "--json", tmp_path / "ext.onnx").stdout)
    assert report["external_data"] == [{"location": "ext.bin", "tensors": 2, "bytes": 80}]


def test_inspect_lists_local_functions(run_cli, tmp_path):
    fn = helper.make_function(
        "local", "Twice", ["x"], ["y"], [helper.make_node("Add", ["x", "x"], ["y"])], [helper.make_opsetid("", 17)]
    )
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])
    graph = helper.make_graph([helper.make_node("Twice", ["X"], ["Y"], domain="local")], "g", [x], [y])
    model = helper.make_model(
        graph, functions=[fn], opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("local", 1)]
    )
    src = write(model, tmp_path / "f.onnx")
    report = json.loads(run_cli("inspect", "--json", src).stdout)
    assert report["functions"] == ["local::Twice (1 nodes)"]
    assert report["custom_domain_ops"] == {}, "a call of a local function is not a custom op"
    assert report["total_node_count"] == 2
    run_cli(src, "-o", tmp_path / "f2.onnx")
    assert onnx.load(tmp_path / "f2.onnx") == model
