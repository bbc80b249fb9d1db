"""`--target NAME --search`: candidate plans in a fixed order until the target's real
backend accepts the result and matches onnxruntime on the original (cli/target_search.h).

The fast tests use a fake openvino backend (a runner speaking the runners' file protocol,
test_backend_check.py's setup) that lacks one op the openvino profile says it runs: the
profile's plan is refused, a later candidate is not. The slow ones run onnxruntime 1.10
and OpenVINO from `make backends-setup` (skipped where missing): a user's profile with a
wrong opset fact is corrected by the backend, a custom-domain op fails every candidate."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/backends"))

from fake_backend import fake_backend_env  # noqa: E402
from harness import BACKENDS_DIR  # noqa: E402

PLAN_KEY = "onnxsurgeon.target_plan"

# Refuses a model holding the op named by $FAKE_REFUSE_OP; else onnxruntime runs it.
FAKE_RUNNER = """
import os, sys
import onnx
from _protocol import Refused, main

def probe():
    return "fake 1.0"

def run(model, inputs, workdir):
    import onnxruntime as ort
    lacking = os.environ.get("FAKE_REFUSE_OP", "")
    if any(n.op_type == lacking for n in onnx.load(model).graph.node):
        raise Refused("build", f"fake backend: op {lacking} is not supported")
    s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return s.run(None, {i.name: inputs[i.name] for i in s.get_inputs()}), ""

if __name__ == "__main__":
    sys.exit(main(probe, run))
"""


def save(path: Path, nodes, inputs, outputs, inits=(), opset=17, domains=()) -> Path:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    opsets = [helper.make_opsetid("", opset), *(helper.make_opsetid(d, 1) for d in domains)]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    onnx.save(model, path)
    return path


def layernorm_model(path: Path) -> Path:
    """x [2, 8] -> LayerNormalization -> Relu, opset 17."""
    rng = np.random.default_rng(0)
    g = helper.make_tensor("g", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32))
    b = helper.make_tensor("b", TensorProto.FLOAT, [8], rng.standard_normal(8).astype(np.float32))
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["n"], axis=-1, epsilon=1e-5),
        helper.make_node("Relu", ["n"], ["y"]),
    ]
    return save(
        path,
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])],
        [g, b],
    )


@pytest.fixture
def fake(tmp_path):
    """Env for a fake openvino backend: its runner and its ready 'venv' (this Python), and a
    TMPDIR of its own (the tests check that nothing is left in it)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return fake_backend_env(tmp_path, FAKE_RUNNER, TMPDIR=str(tmp))


def run(cli_path, env, *args, refuse=""):
    return subprocess.run(
        [str(cli_path), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(env, FAKE_REFUSE_OP=refuse),
    )


def plan_of(path: Path) -> str:
    [value] = [p.value for p in onnx.load(path).metadata_props if p.key == PLAN_KEY]
    return value


def leftovers(env) -> list[str]:
    return [p.name for p in Path(env["TMPDIR"]).iterdir() if p.name.startswith("onnxsurgeon")]


def test_profile_plan_accepted_first(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--search", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "search 1/" in proc.stderr and "(profile): accepted" in proc.stderr
    assert "target openvino: plan that worked: (nothing to run)" in proc.stdout
    assert plan_of(out) == ""
    assert not leftovers(fake)


def test_later_candidate_when_the_backend_lacks_an_op(cli_path, fake, tmp_path):
    """The profile keeps LayerNormalization; this backend refuses it. simplify changes
    nothing (skipped); one opset lower (16) has no LayerNormalization: accepted."""
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--search", m, "-o", out, refuse="LayerNormalization")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert any("(profile):" in l and "op LayerNormalization is not supported" in l for l in lines), proc.stderr
    assert any("(simplify first): skipped" in l for l in lines), proc.stderr
    assert any("(one opset lower): accepted" in l for l in lines), proc.stderr
    plan = plan_of(out)
    assert plan.startswith("convert-opset(opset=16)"), plan
    assert f"plan that worked: {plan}\n" in proc.stdout
    assert not any(n.op_type == "LayerNormalization" for n in onnx.load(out).graph.node)
    # The printed plan replays with --pass to the same model.
    replay = tmp_path / "replay.onnx"
    again = run(cli_path, fake, "--pass", plan, m, "-o", replay)
    assert again.returncode == 0, again.stderr
    a, b = onnx.load(out), onnx.load(replay)
    del a.metadata_props[:]
    assert a.graph == b.graph
    assert not leftovers(fake)


def test_report_json_keeps_stdout_json(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--search", "--report", "json", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert isinstance(json.loads(proc.stdout), list)
    assert "plan that worked: (nothing to run)" in proc.stderr


def test_every_candidate_fails_exit_1_nothing_written(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    before = m.read_bytes()
    proc = run(cli_path, fake, "--target", "openvino", "--search", m, "-o", out, refuse="Relu")
    assert proc.returncode == 1, proc.stderr
    assert not out.exists() and m.read_bytes() == before
    assert "--search: no candidate plan for openvino" in proc.stderr and "nothing written" in proc.stderr
    listed = [l for l in proc.stderr.splitlines() if l.startswith("  ")]
    names = [l.split(":")[0].strip() for l in listed]
    assert names == ["profile", "simplify first", "one opset lower", "lowest opset", "decompositions"], listed
    assert "op Relu is not supported" in listed[0]
    assert not leftovers(fake)


def test_static_shapes_candidate_only_with_input_shapes(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(
        cli_path, fake, "--target", "openvino", "--search", "--input-shapes", "x:2,8", m, "-o", out, refuse="Relu"
    )
    assert proc.returncode == 1 and not out.exists()
    assert "  static shapes: " in proc.stderr, proc.stderr


def test_contradicting_input_shapes_fail_once(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--search", "--input-shapes", "x:2,9", m, "-o", out)
    assert proc.returncode == 1 and not out.exists(), proc.stderr
    [line] = proc.stderr.splitlines()
    assert line.startswith("onnxsurgeon: error: --search: ") and "contradicts" in line, line


def test_budget_spent_candidates_not_tried(cli_path, fake, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, fake, "--target", "openvino", "--search", "--search-budget", "1", m, "-o", out, refuse="Relu")
    assert proc.returncode == 1 and not out.exists(), proc.stderr
    assert "not tried: the search budget (1 s) is spent" in proc.stderr


def test_no_backend_exits_2(cli_path, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    env = dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(tmp_path / "none"), ONNXSURGEON_PYTHON=sys.executable)
    proc = run(cli_path, env, "--target", "nncase-k210", "--input-shapes", "x:2x8", "--search", m, "-o", out)
    assert proc.returncode == 2 and not out.exists(), proc.stderr
    [line] = [l for l in proc.stderr.splitlines() if "error" in l]
    assert "--search: no nncase-k210 backend installed" in line and "make backends-setup" in line
    proc = run(cli_path, os.environ, "--target", "trt-10", "--search", m, "-o", out)
    assert proc.returncode == 2 and "no real backend runs target trt-10" in proc.stderr


def test_usage_errors(cli_path, tmp_path):
    m, out = layernorm_model(tmp_path / "m.onnx"), tmp_path / "o.onnx"
    proc = run(cli_path, os.environ, "--search", m, "-o", out)
    assert proc.returncode == 2 and "--search needs --target" in proc.stderr
    proc = run(cli_path, os.environ, "--target", "openvino", "--search-budget", "5", m, "-o", out)
    assert proc.returncode == 2 and "--search-budget needs --search" in proc.stderr
    assert not out.exists()


def ready(name: str) -> bool:
    return (BACKENDS_DIR / name / "ready").exists()


def real_env(tmp_path) -> dict:
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return dict(os.environ, ONNXSURGEON_BACKENDS_DIR=str(BACKENDS_DIR), TMPDIR=str(tmp))


@pytest.mark.skipif(not ready("ort-1.10"), reason="no ort-1.10 venv: make backends-setup BACKENDS=ort-1.10")
def test_ort_1_10_corrects_a_wrong_opset_fact(cli_path, tmp_path):
    """A user's ort-1.10 profile that claims opset 16: its plan leaves opset 16, which
    onnxruntime 1.10 refuses at load; the search's one-opset-lower candidate runs."""
    text = (ROOT / "targets/ort-1.10.toml").read_text()
    assert "\nmax = 15\n" in text
    profile = tmp_path / "ort-1.10.toml"
    profile.write_text(text.replace("\nmax = 15\n", "\nmax = 16\n", 1))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])
    nodes = [helper.make_node("LeakyRelu", ["x"], ["a"], alpha=0.1), helper.make_node("Softmax", ["a"], ["y"])]
    m = save(
        tmp_path / "m.onnx", nodes, [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])], opset=16
    )
    out, env = tmp_path / "o.onnx", real_env(tmp_path)
    proc = run(cli_path, env, "--target", profile, "--search", "--backend-check", "2", m, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "Opset 16" in proc.stderr and "(one opset lower): accepted" in proc.stderr, proc.stderr
    assert plan_of(out) == "convert-opset(opset=15)"
    assert onnx.load(out).opset_import[0].version == 15
    feed = {"x": np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32)}
    want = ort.InferenceSession(str(m), providers=["CPUExecutionProvider"]).run(None, feed)[0]
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, feed)[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    assert not leftovers(env)


@pytest.mark.skipif(not ready("openvino"), reason="no openvino venv: make backends-setup BACKENDS=openvino")
def test_openvino_all_candidates_refused(cli_path, tmp_path):
    """com.microsoft Inverse: onnxruntime runs it, OpenVINO has no conversion rule and no
    candidate removes it. With --allow-remaining every candidate reaches OpenVINO, which
    refuses each; exit 1, nothing written, each candidate on one line."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Inverse", ["a"], ["y"], domain="com.microsoft")]
    m = save(
        tmp_path / "m.onnx",
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 3])],
        domains=["com.microsoft"],
    )
    out, env = tmp_path / "o.onnx", real_env(tmp_path)
    proc = run(cli_path, env, "--target", "openvino", "--search", "--allow-remaining", m, "-o", out)
    assert proc.returncode == 1 and not out.exists(), proc.stderr
    listed = [l for l in proc.stderr.splitlines() if l.startswith("  ")]
    assert len(listed) == 5 and listed[0].startswith("  profile: "), proc.stderr
    assert "openvino" in listed[0] and "refused (input set 1)" in listed[0], proc.stderr
    assert not leftovers(env)


# check --target NAME --probe --allow FACT: one fact at a time.


def inverse_model(path: Path) -> Path:
    """com.microsoft Inverse: onnxruntime runs it, the openvino profile names it (no
    custom-domain ops), no step removes it."""
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Inverse", ["a"], ["y"], domain="com.microsoft")]
    return save(
        path,
        nodes,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 3])],
        domains=["com.microsoft"],
    )


def probe_fact(cli_path, env, target, model, fact, *extra):
    proc = run(cli_path, env, "check", "--target", target, "--probe", "--allow", fact, "--json", *extra, model)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert (proc.returncode == 0) == (report["verdict"] == "real"), report
    return report


def test_fact_probe_false_when_the_backend_runs_it(cli_path, fake, tmp_path):
    """The fake openvino is onnxruntime: it runs Inverse, so the fact is false for it."""
    m = inverse_model(tmp_path / "m.onnx")
    report = probe_fact(cli_path, fake, "openvino", m, "no custom-domain ops")
    assert report["verdict"] == "false" and report["places"] == 1, report
    assert "backend check on openvino (fake 1.0)" in report["why"] and ": ok," in report["why"]


def test_fact_probe_real_when_the_backend_refuses(cli_path, fake, tmp_path):
    m = inverse_model(tmp_path / "m.onnx")
    args = ("check", "--target", "openvino", "--probe", "--allow", "no custom-domain ops", m)
    proc = run(cli_path, fake, *args, refuse="Inverse")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fact 'no custom-domain ops' (probed alone): real: with only it allowed (1 place)" in proc.stdout
    assert "op Inverse is not supported" in proc.stdout


def test_fact_probe_unproven(cli_path, fake, tmp_path):
    m = inverse_model(tmp_path / "m.onnx")
    unknown = probe_fact(cli_path, fake, "openvino", m, "lacks Shape")
    assert unknown["verdict"] == "unproven" and "facts check --target finds: no custom-domain ops" in unknown["why"]
    # Two facts no step removes (a user's openvino profile that also says it lacks Relu):
    # allowing one leaves the other blocking.
    profile = tmp_path / "openvino.toml"
    profile.write_text(
        (ROOT / "targets/openvino.toml").read_text() + '\n[[missing]]\nops = ["Relu"]\nsource = "a test\'s claim"\n'
    )
    report = probe_fact(cli_path, fake, profile, m, "no custom-domain ops")
    assert report["verdict"] == "unproven", report
    assert "other facts still block, so no model isolates this one: openvino: lacks Relu (1 place)" in report["why"]


def test_fact_probe_usage(cli_path, fake, tmp_path):
    m = inverse_model(tmp_path / "m.onnx")
    proc = run(cli_path, fake, "check", "--target", "openvino", "--allow", "no custom-domain ops", m)
    assert proc.returncode == 2 and "--allow needs --target NAME and --probe" in proc.stderr


@pytest.mark.skipif(not ready("ort-1.10"), reason="no ort-1.10 venv: make backends-setup BACKENDS=ort-1.10")
def test_fact_probe_ort_1_10_opset_is_real(cli_path, tmp_path):
    """onnxruntime 1.10 refuses opset 17 at load: with only the opset fact allowed (the
    LayerNormalization decomposed as the profile asks), the fact is real."""
    m = layernorm_model(tmp_path / "m.onnx")
    report = probe_fact(cli_path, real_env(tmp_path), "ort-1.10", m, "ai.onnx opset 7..15")
    assert report["verdict"] == "real", report
    assert (
        "decompose-layernorm" in report["plan"]
        and "Current official support for domain ai.onnx is till opset 15" in (report["why"])
    )


def test_harness_probe_facts(cli_path, fake, tmp_path, monkeypatch):
    """harness.py --probe-facts: each fact check --target finds, proven alone."""
    import harness

    monkeypatch.setattr(harness, "BACKENDS_DIR", Path(fake["ONNXSURGEON_BACKENDS_DIR"]))
    monkeypatch.setenv("ONNXSURGEON_BACKEND_RUNNERS", fake["ONNXSURGEON_BACKEND_RUNNERS"])
    m = inverse_model(tmp_path / "m.onnx")
    monkeypatch.setenv("FAKE_REFUSE_OP", "")
    [fact] = harness.probe_facts(cli_path, "openvino", m, [])
    assert fact["fact"] == "no custom-domain ops" and fact["verdict"] == "probed-false", fact
    monkeypatch.setenv("FAKE_REFUSE_OP", "Inverse")
    [fact] = harness.probe_facts(cli_path, "openvino", m, [])
    assert fact["verdict"] == "probed-real" and "op Inverse is not supported" in fact["why"], fact


VAD = ROOT / "tests/models/.generated/wheel_silero_vad_v6_whisper.onnx"


@pytest.mark.skipif(not ready("nncase-k210"), reason="no nncase-k210 venv: make backends-setup BACKENDS=nncase-k210")
@pytest.mark.skipif(not VAD.is_file(), reason="no wheel_silero_vad_v6_whisper in tests/models/.generated (make models)")
def test_nncase_k210_search_accepts_the_profile_plan(cli_path, tmp_path):
    """The corpus's silero VAD (opset 18): the profile's plan converts it to opset 12, below
    Squeeze-13's axes input, which nncase 1.9 applies to every unit dim
    (targets/probes/nncase_squeeze.txt; before that fact the plan wrote opset 17 and nncase
    refused it, so the search went on to the lowest opset, 7), and nncase runs it and
    matches onnxruntime: the search stops at its first candidate."""
    feeds = dict(np.load(VAD.with_suffix("").with_suffix(".inputs.npz")))
    shapes = [f"{k}:{','.join(map(str, v.shape))}" for k, v in feeds.items()]
    out, env = tmp_path / "o.onnx", real_env(tmp_path)
    proc = run(cli_path, env, "--target", "nncase-k210", "--search", "--input-shapes", *shapes, VAD, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert "search 1/6 (profile): accepted" in proc.stderr, proc.stderr
    plan = plan_of(out)
    # (simplify first: the profile's [plan] simplify_first)
    assert plan.startswith("simplify,convert-opset=12,set-input-shape("), plan
    want = ort.InferenceSession(str(VAD), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"]).run(None, feeds)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert not leftovers(env)
