"""The CLI's user-facing behaviour: the summary, --check, the flags people bring
from onnx-simplifier, the pipeline grammar's quoting, "did you mean", passes --json."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from test_cli import small_model, write


@pytest.fixture
def check_env(monkeypatch):
    """--check finds onnxruntime through ONNXSURGEON_PYTHON: this interpreter has it."""
    monkeypatch.setenv("ONNXSURGEON_PYTHON", sys.executable)


def foldable_model() -> onnx.ModelProto:
    """Y = Relu(X @ (W + W)): fold-constants turns the Add of two initializers into one."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 4])
    w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4) / 16, "W")
    nodes = [
        helper.make_node("Add", ["W", "W"], ["W2"], name="double"),
        helper.make_node("MatMul", ["X", "W2"], ["t"], name="mm"),
        helper.make_node("Relu", ["t"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


# ------------------------------------------------------------------ the summary


def test_summary_shows_changed_ops_sizes_opset_and_passes(run_cli, tmp_path):
    src = write(foldable_model(), tmp_path / "in.onnx")
    proc = run_cli("--pass", "fold-constants,nop", src, "-o", tmp_path / "out.onnx")
    err = proc.stderr
    assert proc.stdout == ""
    assert f"{src} -> {tmp_path / 'out.onnx'} in" in err
    lines = {line.split()[0]: line for line in err.splitlines()[1:] if line.strip()}
    assert lines["Add"].split()[1:] == ["1", "->", "0"], err
    assert "MatMul" not in lines and "Relu" not in lines, "only changed op rows are listed"
    assert lines["nodes"].split()[1:] == ["3", "->", "2"]
    assert lines["initializers"].split()[1:] == ["64", "B", "->", "64", "B"]
    assert "file" in lines
    assert "ai.onnx 17 (unchanged)" in lines["opset"]
    assert lines["changed"].endswith("fold-constants"), "nop changed nothing and is not named"


def test_summary_names_an_opset_change(run_cli, tmp_path):
    src = write(small_model(opset=17), tmp_path / "in.onnx")
    err = run_cli("--pass", "downgrade-opset=13", src, "-o", tmp_path / "out.onnx").stderr
    assert "ai.onnx 17 -> ai.onnx 13" in err


def test_quiet_prints_nothing_and_json_report_keeps_stdout_clean(run_cli, tmp_path):
    src = write(foldable_model(), tmp_path / "in.onnx")
    quiet = run_cli("-q", "--pass", "fold-constants", src, "-o", tmp_path / "out.onnx")
    assert quiet.stdout == "" and quiet.stderr == ""
    proc = run_cli("--report", "json", "--pass", "fold-constants", src, "-o", tmp_path / "out2.onnx")
    assert json.loads(proc.stdout)[0]["pass"] == "fold-constants"
    assert "nodes" in proc.stderr


# ------------------------------------------------------------------ --check


def test_check_passes_on_a_real_model_with_symbolic_dims(run_cli, corpus, tmp_path, check_env):
    model = corpus.model("bert_op14")
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "simplify", "--check", model.path, "-o", out)
    assert "check: passed (onnxruntime" in proc.stderr
    assert "3 random input set(s)" in proc.stderr
    assert "symbolic dims set to 2" in proc.stderr, "the summary says which dims were defaulted"
    assert "max abs" in proc.stderr and "max rel" in proc.stderr
    assert out.exists()


@pytest.mark.parametrize(
    "name",
    [
        "gpt2_dynamo18",
        "t5_op14",
        "llama_dynamo18",
        "control_flow_op17",
        "control_flow_cond_dynamo18",
        "ln_fp16_casts_op17",
        "styletts_block_op14",
    ],
)
def test_check_passes_simplify_on_real_exports(run_cli, corpus, tmp_path, check_env, name):
    """Integer token inputs, symbolic dims, If/Loop bodies, fp16: --check runs them all."""
    model = corpus.model(name)
    proc = run_cli("--pass", "simplify", "--check", model.path, "-o", tmp_path / "out.onnx")
    assert "check: passed" in proc.stderr
    rows = [line for line in proc.stderr.splitlines() if line.startswith("  ok   ")]
    assert len(rows) == len(model.manifest["output_names"]), proc.stderr


def test_check_takes_n_and_input_shapes(run_cli, corpus, tmp_path, check_env):
    model = corpus.model("bert_op14")
    proto = onnx.load(model.path, load_external_data=False)
    inputs = [i.name for i in proto.graph.input]
    shapes = [f"{name}:1,8" for name in inputs]
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "simplify", "--check", "2", "--input-shapes", *shapes, model.path, "-o", out)
    assert "2 random input set(s)" in proc.stderr
    assert "symbolic dims set to" not in proc.stderr
    result = onnx.load(out, load_external_data=False)
    dims = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in result.graph.input]
    assert dims == [[1, 8]] * len(inputs)
    proc = run_cli("--pass", "simplify", "--check-n", "1", model.path, "-o", out)  # onnx-simplifier's spelling
    assert "1 random input set(s)" in proc.stderr


def test_check_widens_tolerance_for_an_approximating_pass(run_cli, corpus, tmp_path, check_env):
    model = corpus.model("gelu_op20")
    proc = run_cli("--pass", "rewrite-gelu(to=sigmoid)", "--check", model.path, "-o", tmp_path / "out.onnx")
    assert "tolerance: rewrite-gelu(to=sigmoid) approximates GELU within 2.1e-2" in proc.stderr
    assert "check: passed" in proc.stderr


def amplified_gelu_model() -> onnx.ModelProto:
    """Y = 1000 * Gelu(X): the sigmoid form's 2e-2 error per GELU becomes ~20 at the output,
    far outside its bound; --check must catch what the approximation does downstream."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [4, 64])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 64])
    scale = numpy_helper.from_array(np.array(1000, np.float32), "scale")
    nodes = [
        helper.make_node("Gelu", ["X"], ["g"], name="gelu"),
        helper.make_node("Mul", ["g", "scale"], ["Y"], name="mul"),
    ]
    graph = helper.make_graph(nodes, "g", [x], [y], [scale])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_check_mismatch_exits_1_and_writes_nothing(run_cli, tmp_path, check_env):
    src = write(amplified_gelu_model(), tmp_path / "in.onnx")
    out = tmp_path / "out.onnx"
    run_cli("-q", "--pass", "rewrite-gelu", "--check", src, "-o", out)  # the exact lowering passes
    out.unlink()
    proc = run_cli("--pass", "rewrite-gelu(to=sigmoid)", "--check", src, "-o", out, expect_rc=1)
    assert "check: FAILED" in proc.stderr
    assert "FAIL Y: max abs" in proc.stderr and "outside atol 0.021 + rtol 0.021" in proc.stderr
    assert "nothing written" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.onnx"]


def test_check_when_onnxruntime_cannot_run_the_original(run_cli, corpus, tmp_path, check_env):
    """A custom op onnxruntime does not know: --check cannot compare, says why, writes nothing."""
    model = corpus.model("ln_custom_domain_op17")
    out = tmp_path / "out.onnx"
    proc = run_cli("--pass", "fix-layernorm", "--check", model.path, "-o", out, expect_rc=1)
    assert "onnxruntime cannot load the original model" in proc.stderr
    assert "Custom_LayerNorm" in proc.stderr
    assert "--check: could not compare the models; nothing written" in proc.stderr
    assert not out.exists()


def test_check_without_onnxruntime_says_what_to_install(run_cli, tmp_path, monkeypatch):
    fake = tmp_path / "python-without-ort"
    fake.write_text('#!/bin/sh\nexec /usr/bin/env python3 -I -S "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("ONNXSURGEON_PYTHON", str(fake))
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--check", src, "-o", tmp_path / "out.onnx", expect_rc=1)
    assert "pip install onnxruntime numpy" in proc.stderr
    assert "ONNXSURGEON_PYTHON" in proc.stderr
    assert not (tmp_path / "out.onnx").exists()


def fake_python(path: Path, *, with_ort: bool, log: Path) -> Path:
    """An interpreter stand-in that records each call in `log`: with_ort runs this test's
    Python (which has onnxruntime), else an isolated python3 that cannot import it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    target = f'"{sys.executable}"' if with_ort else "/usr/bin/python3 -I -S"
    path.write_text(f'#!/bin/sh\necho "$0" >> "{log}"\nexec {target} "$@"\n')
    path.chmod(0o755)
    return path


def test_check_finds_onnxruntime_in_the_active_virtualenv(run_cli, tmp_path, monkeypatch):
    """No ONNXSURGEON_PYTHON, python3 on PATH without onnxruntime: the active venv's
    interpreter (VIRTUAL_ENV) is tried first and used."""
    log = tmp_path / "calls.txt"
    venv_python = fake_python(tmp_path / "venv" / "bin" / "python3", with_ort=True, log=log)
    fake_python(tmp_path / "path" / "python3", with_ort=False, log=log)
    monkeypatch.delenv("ONNXSURGEON_PYTHON", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}:/usr/bin:/bin")
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--check", src, "-o", tmp_path / "out.onnx")
    assert "check: passed" in proc.stderr
    assert log.read_text().split() == [str(venv_python)]


def test_check_tries_every_interpreter_then_the_builds_python(run_cli, tmp_path, monkeypatch):
    """The active venv's python3 has no onnxruntime: the next candidate is the Python the
    build was configured with (the clone's .venv), which has, before PATH's python3."""
    log = tmp_path / "calls.txt"
    venv_python = fake_python(tmp_path / "venv" / "bin" / "python3", with_ort=False, log=log)
    fake_python(tmp_path / "path" / "python3", with_ort=False, log=log)
    monkeypatch.delenv("ONNXSURGEON_PYTHON", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    monkeypatch.setenv("PATH", f"{tmp_path / 'path'}:/usr/bin:/bin")
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--check", src, "-o", tmp_path / "out.onnx")
    assert "check: passed" in proc.stderr
    assert log.read_text().split() == [str(venv_python)], "PATH's python3 comes after the build's"


def test_check_right_after_make_demo_finds_the_clones_venv(cli_path, tmp_path):
    """No virtualenv active, no python with onnxruntime on PATH (`make demo`, then
    `build/onnxsurgeon --check`): the configured Python, the clone's .venv, is used."""
    src = write(small_model(), tmp_path / "in.onnx")
    env = {"PATH": "/usr/bin:/bin", "HOME": os.environ.get("HOME", "/root")}
    proc = subprocess.run(
        [str(cli_path), "--check", str(src), "-o", str(tmp_path / "out.onnx")], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert "check: passed" in proc.stderr


def load_check_script(repo_root: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("ort_check", repo_root / "core" / "verify" / "ort_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_reports_changed_output_shape_and_dtype(repo_root, tmp_path):
    import onnxruntime as ort

    script = load_check_script(repo_root)
    config = {"extra_atol": 0, "extra_rtol": 0}
    a = np.ones((2, 3), np.float32)
    assert (
        script.compare(np, "y", a, a.reshape(3, 2), "tensor(float)", config)["problem"]
        == "shape changed: [2, 3] -> [3, 2]"
    )
    assert (
        "element type changed" in script.compare(np, "y", a, a.astype(np.float64), "tensor(float)", config)["problem"]
    )
    row = script.compare(np, "y", a, a + 1e-2, "tensor(float)", config)  # float32: 1e-4 + 1e-3 * |1| allowed
    assert not row["ok"] and row["max_abs"] == pytest.approx(1e-2, rel=1e-3)
    assert script.compare(np, "y", a, a + 1e-6, "tensor(float)", config)["ok"]
    ints = np.arange(4)
    assert not script.compare(np, "i", ints, ints + (ints == 3), "tensor(int64)", config)["ok"], "integers must match"
    nan = np.array([np.nan, 1.0])
    assert "NaN" in script.compare(np, "n", nan, np.array([0.0, 1.0]), "tensor(double)", config)["problem"]

    # End to end: a result whose output shape differs from the original's.
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    same = helper.make_model(
        helper.make_graph([helper.make_node("Identity", ["X"], ["Y"])], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    flat = helper.make_model(
        helper.make_graph([helper.make_node("Flatten", ["X"], ["Y"], axis=0)], "g", [x], [y]),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    write(same, tmp_path / "a.onnx")
    write(flat, tmp_path / "b.onnx")
    result = script.check(
        np,
        ort,
        {
            "original": str(tmp_path / "a.onnx"),
            "result": str(tmp_path / "b.onnx"),
            "runs": 1,
            "seed": 0,
            "input_shapes": {},
            "default_dim": 2,
            **config,
        },
    )
    assert not result["ok"] and result["outputs"][0]["problem"] == "shape changed: [2, 3] -> [1, 6]"


# ------------------------------------------------------------------ the flags people type


def test_input_shapes_bare_and_alias(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    for flag, value in (("--input-shapes", "3,4"), ("--overwrite-input-shape", "X:3,4"), ("--input-shapes", "X:3x4")):
        out = tmp_path / "out.onnx"
        run_cli(flag, value, src, "-o", out)
        dims = [d.dim_value for d in onnx.load(out).graph.input[0].type.tensor_type.shape.dim]
        assert dims == [3, 4], (flag, value)
    proc = run_cli("--input-shapes", "Y:3,4", src, "-o", tmp_path / "x.onnx", expect_rc=2)
    assert "the model has no input 'Y'" in proc.stderr and "X" in proc.stderr


def test_input_shapes_bare_needs_one_input(run_cli, tmp_path):
    model = small_model()
    model.graph.input.append(helper.make_tensor_value_info("Z", TensorProto.FLOAT, [1]))
    src = write(model, tmp_path / "in.onnx")
    proc = run_cli("--input-shapes", "1,4", src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "this one has 2 (X, Z): write NAME:DIMS" in proc.stderr


def test_set_input_shape_with_commas_parses_in_the_pipeline(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    for pipeline in ("set-input-shape=X:3,4,dce", 'set-input-shape="X:3,4"', "set-input-shape(shapes=X:3,4)"):
        out = tmp_path / "out.onnx"
        run_cli("--pass", pipeline, src, "-o", out)
        assert [d.dim_value for d in onnx.load(out).graph.input[0].type.tensor_type.shape.dim] == [3, 4], pipeline


def test_a_comma_value_that_cannot_parse_says_what_to_write(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--pass", "set-input-shape=X:3,Y:4", src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "unknown pass 'Y'" in proc.stderr
    assert 'must be quoted, e.g. name="x:1,3;y:2"' in proc.stderr
    proc = run_cli("--pass", 'set-input-shape="X:3,4', src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "unclosed quote" in proc.stderr


def conv_bn_model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 4, 8, 8])
    inits = [
        numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "W"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "scale"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "bias"),
        numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "mean"),
        numpy_helper.from_array(rng.uniform(0.5, 2, 4).astype(np.float32), "var"),
    ]
    nodes = [
        helper.make_node("Conv", ["X", "W"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["Y"], name="bn"),
    ]
    return helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)]
    )


def ops(path: Path) -> list[str]:
    return [n.op_type for n in onnx.load(path).graph.node]


def test_skip_fuse_bn_and_simplify_skip(run_cli, tmp_path):
    src = write(conv_bn_model(), tmp_path / "in.onnx")
    run_cli("--pass", "simplify", src, "-o", tmp_path / "fused.onnx")
    assert ops(tmp_path / "fused.onnx") == ["Conv"]
    run_cli("--pass", "simplify", "--skip-fuse-bn", src, "-o", tmp_path / "skip.onnx")
    assert ops(tmp_path / "skip.onnx") == ["Conv", "BatchNormalization"]
    run_cli("--pass", "simplify(skip=fuse-conv-bn;cse)", src, "-o", tmp_path / "skip2.onnx")
    assert ops(tmp_path / "skip2.onnx") == ["Conv", "BatchNormalization"]
    proc = run_cli("--pass", "simplify(skip=fuse-conv-nb)", src, "-o", tmp_path / "x.onnx", expect_rc=2)
    assert "did you mean 'fuse-conv-bn'" in proc.stderr
    proc = run_cli("--skip-fuse-bn", src, "-o", tmp_path / "x.onnx", expect_rc=2)
    assert "add --pass simplify" in proc.stderr


def big_constant_model() -> onnx.ModelProto:
    """Y = X + Tile(c, 64): folding the Tile materialises 64 KiB."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [64, 256])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [64, 256])
    inits = [
        numpy_helper.from_array(np.ones((1, 256), np.float32), "c"),
        numpy_helper.from_array(np.array([64, 1], np.int64), "reps"),
    ]
    nodes = [helper.make_node("Tile", ["c", "reps"], ["t"]), helper.make_node("Add", ["X", "t"], ["Y"])]
    return helper.make_model(
        helper.make_graph(nodes, "g", [x], [y], inits), opset_imports=[helper.make_opsetid("", 17)]
    )


@pytest.mark.parametrize("flag", ["--size-limit", "--no-large-tensor"])
def test_size_limit_reaches_fold_constants_inside_simplify(run_cli, tmp_path, flag):
    src = write(big_constant_model(), tmp_path / "in.onnx")
    run_cli("--pass", "simplify", src, "-o", tmp_path / "folded.onnx")
    assert "Tile" not in ops(tmp_path / "folded.onnx")
    run_cli("--pass", "simplify", flag, "32KB", src, "-o", tmp_path / "kept.onnx")
    assert "Tile" in ops(tmp_path / "kept.onnx")
    assert (
        "size such as"
        in run_cli("--pass", "simplify", flag, "lots", src, "-o", tmp_path / "x.onnx", expect_rc=2).stderr
    )


def test_save_as_external_data(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    run_cli("--save-as-external-data", "--external-threshold", "32", src, "-o", tmp_path / "out.onnx")
    converted = onnx.load(tmp_path / "out.onnx", load_external_data=False)
    assert [t.name for t in converted.graph.initializer if t.data_location == TensorProto.EXTERNAL] == ["W"]
    assert (tmp_path / "out.onnx.data").is_file()


@pytest.mark.parametrize(
    "args, expect",
    [
        (["--pas", "nop"], "unknown option '--pas' (did you mean '--pass'?)"),
        (["--quite"], "unknown option '--quite' (did you mean '--quiet'?)"),
        (["--input-shape=1,4"], "(did you mean '--input-shapes'?)"),
    ],
)
def test_unknown_flags_get_did_you_mean(run_cli, tmp_path, args, expect):
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli(*args, src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert expect in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, "a usage error is one line"


def test_unknown_pass_and_option_get_did_you_mean(run_cli, tmp_path):
    src = write(small_model(), tmp_path / "in.onnx")
    proc = run_cli("--pass", "fold-constant", src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "unknown pass 'fold-constant' (did you mean 'fold-constants'?)" in proc.stderr
    proc = run_cli("--pass", "fold-constants(max-sise=3)", src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "has no option 'max-sise' (did you mean 'max-size'?)" in proc.stderr
    proc = run_cli("inspect", "--jsn", src, expect_rc=2)
    assert "(did you mean '--json'?)" in proc.stderr
    proc = run_cli("inspcet", src, expect_rc=2)
    assert "unknown command 'inspcet' (did you mean 'inspect'?)" in proc.stderr
    proc = run_cli("--pass", "nop", "--print-after", "nopp", src, "-o", tmp_path / "out.onnx", expect_rc=2)
    assert "(did you mean 'nop'?)" in proc.stderr


def test_subcommand_help_and_passes_json(run_cli):
    for command in ("inspect", "check", "passes", "diff", "report"):
        proc = run_cli(command, "-h")
        assert f"onnxsurgeon {command}" in proc.stdout and "--help" in proc.stdout, command
    top = run_cli("--help").stdout
    for text in ("usage:", "--check", "--input-shapes", "--skip-fuse-bn", "diff A B", "report"):
        assert text in top, text
    passes = json.loads(run_cli("passes", "--json").stdout)
    by_name = {p["name"]: p for p in passes}
    assert {"simplify", "fold-constants", "set-input-shape"} <= by_name.keys()
    options = {o["name"]: o for o in by_name["simplify"]["options"]}
    assert options["max-rounds"]["default"] == "10" and "skip" in options and "size-limit" in options


def test_progress_on_a_terminal_names_the_step_and_nodes_visited(cli_path, tmp_path):
    """Under a pseudo-terminal, with the 1 s delay set to 0, the steps of a run on a 50,000-node
    model show a progress line (loading, the pass with the greedy driver's visited nodes,
    saving); without a TTY nothing is drawn."""
    import os
    import pty
    import subprocess

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from cli_summary_bench import chain

    src = write(chain(50_000), tmp_path / "chain.onnx")
    env = {**os.environ, "ONNXSURGEON_PROGRESS_DELAY": "0"}
    command = [str(cli_path), "--pass", "simplify", src, "-o", tmp_path / "out.onnx"]
    leader, follower = pty.openpty()
    proc = subprocess.run(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, env=env, timeout=300
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    shown = b"".join(chunks).decode(errors="replace")
    assert proc.returncode == 0, shown
    assert re.search(r"\r\x1b\[K  simplify  [0-9.]+ s  [0-9]+ nodes visited", shown), shown[:3000]
    assert "\r\x1b[K  loading " in shown and "\r\x1b[K  saving " in shown, shown[:3000]
    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert "\x1b[K" not in piped.stderr and "nodes visited" not in piped.stderr


def test_json_reports_replace_invalid_utf8(run_cli, tmp_path):
    """nlohmann_json throws on invalid UTF-8 by default; reports replace it with U+FFFD."""
    model = small_model()
    model.producer_name = "PRODUCERX"
    data = model.SerializeToString().replace(b"PRODUCERX", b"PRO\xff\xfe\xfdERX")
    src = tmp_path / "bad-utf8.onnx"
    src.write_bytes(data)
    report = json.loads(run_cli("inspect", "--json", src).stdout)
    assert report["producer"].startswith("PRO\ufffd") and report["producer"].endswith("ERX")
