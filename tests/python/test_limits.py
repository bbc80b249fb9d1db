"""Resource limits and output validation (docs/reliability.md).

Hostile sizes must end quickly within bounded memory (never bad_alloc, a hang or a
crash), allowed-but-odd input (NaN/Inf weights) must pass through, and a run whose
output onnx's checker refuses while the input passed must fail and write nothing.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OPSET = [h.make_opsetid("", 18)]
HUGE = 10**12
MEMORY_LIMIT = 2 << 30  # address space for the CLI: far above what these models need
PEAK_LIMIT = 256 << 20  # resident memory these tiny models may take


def _ints(name, values):
    return nh.from_array(np.array(values, np.int64), name)


def _run(cli: Path, *args, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float]:
    proc, seconds, _ = _run_measured(cli, *args, timeout=timeout)
    return proc, seconds


# Runs the CLI and reports its own peak memory. The CLI is forked from this small process,
# not from pytest: a fork's peak counts the parent's pages it held before exec (pytest's
# hundreds of MB), and under a cap alone a runaway allocation fails and the run goes on.
_PEAK_LAUNCHER = """
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:])
sys.stderr.write("\\npeak-rss-kib %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)
"""


def _run_measured(cli: Path, *args, timeout: float = 60) -> tuple[subprocess.CompletedProcess, float, int]:
    """The run, its wall time and the CLI's peak resident memory in bytes."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", _PEAK_LAUNCHER, str(cli), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit,
    )
    seconds = time.monotonic() - start
    stderr, _, peak = proc.stderr.rpartition("\npeak-rss-kib ")
    proc.stderr = stderr
    return proc, seconds, int(peak) * 1024


def _huge_models() -> dict[str, onnx.ModelProto]:
    x = h.make_tensor_value_info("x", T.FLOAT, [HUGE])
    cases = {
        "size-unsqueeze-constantofshape": (
            [
                h.make_node("Size", ["x"], ["s"]),
                h.make_node("Unsqueeze", ["s", "a"], ["u"]),
                h.make_node("ConstantOfShape", ["u"], ["y"]),
            ],
            [x],
            [h.make_tensor_value_info("y", T.FLOAT, ["q"])],
            [_ints("a", [0])],
        ),
        "shape-constantofshape": (
            [h.make_node("Shape", ["x"], ["s"]), h.make_node("ConstantOfShape", ["s"], ["y"])],
            [x],
            [h.make_tensor_value_info("y", T.FLOAT, [HUGE])],
            [],
        ),
        "range-of-a-dim": (
            [
                h.make_node("Shape", ["x"], ["s"]),
                h.make_node("Squeeze", ["s"], ["n"]),
                h.make_node("Range", ["z", "n", "o"], ["y"]),
            ],
            [x],
            [h.make_tensor_value_info("y", T.INT64, [HUGE])],
            [_ints("z", 0), _ints("o", 1)],
        ),
        "constant-expand": (
            [h.make_node("Expand", ["c", "s"], ["y"])],
            [],
            [h.make_tensor_value_info("y", T.FLOAT, [HUGE, HUGE])],
            [nh.from_array(np.ones(1, np.float32), "c"), _ints("s", [HUGE, HUGE])],
        ),
        "constant-range": (
            [h.make_node("Range", ["z", "n", "o"], ["y"])],
            [],
            [h.make_tensor_value_info("y", T.INT64, [HUGE])],
            [_ints("z", 0), _ints("n", HUGE), _ints("o", 1)],
        ),
        # onnx's data propagation reads any 1-D input of known length N as N entries
        # (23 GB for a Cast of a float[2^31] input, before it was bounded).
        "cast-of-a-long-vector": (
            [h.make_node("Cast", ["x"], ["y"], to=T.INT64)],
            [x],
            [h.make_tensor_value_info("y", T.INT64, [HUGE])],
            [],
        ),
        "tile-by-a-shape": (
            [h.make_node("Shape", ["x"], ["s"]), h.make_node("Tile", ["c", "s"], ["y"])],
            [x],
            [h.make_tensor_value_info("y", T.FLOAT, [HUGE])],
            [nh.from_array(np.ones(1, np.float32), "c")],
        ),
    }
    return {
        name: h.make_model(h.make_graph(n, "g", i, o, inits), opset_imports=OPSET)
        for name, (n, i, o, inits) in cases.items()
    }


HUGE_MODELS = _huge_models()


@pytest.mark.parametrize("pipeline", ["simplify", "fold-constants", "resolve-shapes", "downgrade-opset=13"])
@pytest.mark.parametrize("name", sorted(HUGE_MODELS))
def test_huge_dims_end_quickly_in_bounded_memory(name, pipeline, cli_path, tmp_path):
    src = tmp_path / "m.onnx"
    onnx.save(HUGE_MODELS[name], src)
    proc, seconds, peak = _run_measured(cli_path, "--pass", pipeline, src, "-o", tmp_path / "out.onnx")
    assert proc.returncode in (0, 1), proc.stderr
    assert "internal error" not in proc.stderr and "bad_alloc" not in proc.stderr, proc.stderr
    assert seconds < 20, f"{seconds:.1f} s"
    assert peak < PEAK_LIMIT, f"peak resident memory {peak >> 20} MiB"
    if proc.returncode == 0:
        onnx.checker.check_model(str(tmp_path / "out.onnx"), full_check=True)


def test_nan_and_inf_weights_are_allowed_input(cli_path, tmp_path):
    w = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    model = h.make_model(
        h.make_graph(
            [h.make_node("Add", ["x", "w"], ["y"])],
            "g",
            [h.make_tensor_value_info("x", T.FLOAT, [4])],
            [h.make_tensor_value_info("y", T.FLOAT, [4])],
            [nh.from_array(w, "w")],
        ),
        opset_imports=OPSET,
    )
    onnx.save(model, tmp_path / "m.onnx")
    proc, _ = _run(cli_path, "--pass", "simplify", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 0, proc.stderr
    out = onnx.load(tmp_path / "out.onnx")
    np.testing.assert_array_equal(nh.to_array(out.graph.initializer[0]), w)


def test_deepest_nesting_protobuf_parses_still_loads(cli_path, tmp_path):
    """31 levels of If load and run (32 are refused with the parse limit named:
    bad_inputs/structural.py)."""
    from bad_inputs.structural import _nest_bytes

    (tmp_path / "m.onnx").write_bytes(_nest_bytes(31))
    proc, _ = _run(cli_path, "--pass", "simplify", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 0, proc.stderr
    onnx.checker.check_model(onnx.load(tmp_path / "out.onnx"))


def test_100k_outputs_mission_pipeline_in_time(cli_path, tmp_path):
    n = 100_000
    nodes = [h.make_node("Identity", ["x"], [f"o{i}"]) for i in range(n)]
    model = h.make_model(
        h.make_graph(
            nodes,
            "g",
            [h.make_tensor_value_info("x", T.FLOAT, [1])],
            [h.make_tensor_value_info(f"o{i}", T.FLOAT, [1]) for i in range(n)],
        ),
        opset_imports=OPSET,
    )
    onnx.save(model, tmp_path / "m.onnx")
    proc, seconds = _run(
        cli_path,
        "--pass",
        "fix-layernorm,decompose-layernorm,simplify",
        "--report",
        "text",
        tmp_path / "m.onnx",
        "-o",
        tmp_path / "out.onnx",
    )
    assert proc.returncode == 0, proc.stderr
    assert "stopped-at-max-rounds" not in proc.stderr, proc.stderr  # rounds end at a fixed point
    assert seconds < 20, f"{seconds:.1f} s"
    assert len(onnx.load(tmp_path / "out.onnx").graph.output) == n


def _layernorm_stash0() -> onnx.ModelProto:
    node = h.make_node("LayerNormalization", ["x", "s", "b"], ["y"], axis=-1, stash_type=0)
    return h.make_model(
        h.make_graph(
            [node],
            "g",
            [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
            [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
            [nh.from_array(np.ones(4, np.float32), "s"), nh.from_array(np.zeros(4, np.float32), "b")],
        ),
        opset_imports=OPSET,
    )


@pytest.mark.parametrize("pipeline", ["decompose-layernorm", "downgrade-opset=16", "convert-opset=16"])
def test_stash_type_0_is_refused_not_emitted_as_undefined(pipeline, cli_path, tmp_path):
    onnx.save(_layernorm_stash0(), tmp_path / "m.onnx")
    proc, _ = _run(cli_path, "--pass", pipeline, tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 1, proc.stderr
    assert "stash_type 0" in proc.stderr
    assert not (tmp_path / "out.onnx").exists()


def _reshape_from_concat() -> onnx.ModelProto:
    const = lambda name, v: h.make_node("Constant", [], [name], value=nh.from_array(np.array(v, np.int64)))  # noqa: E731
    nodes = [
        const("a", [2**63 - 1]),
        const("b", [-(2**63)]),
        h.make_node("Concat", ["a", "b"], ["s"], axis=0),
        h.make_node("Reshape", ["x", "s"], ["y"]),
    ]
    return h.make_model(
        h.make_graph(
            nodes,
            "g",
            [h.make_tensor_value_info("x", T.FLOAT, [2, 4])],
            [h.make_tensor_value_info("y", T.FLOAT, ["p", "q"])],
        ),
        opset_imports=OPSET,
    )


def test_output_onnx_refuses_fails_the_run_and_no_full_check_skips_it(cli_path, tmp_path):
    onnx.save(_reshape_from_concat(), tmp_path / "m.onnx")
    onnx.checker.check_model(str(tmp_path / "m.onnx"), full_check=True)  # the input passes
    proc, _ = _run(cli_path, "--pass", "simplify", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 1 and "the input passes" in proc.stderr, proc.stderr
    assert not (tmp_path / "out.onnx").exists()
    proc, _ = _run(cli_path, "--pass", "simplify", "--no-full-check", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 0, proc.stderr


def test_python_run_validates_too(tmp_path):
    osg = pytest.importorskip("onnxsurgeon")
    with pytest.raises(Exception, match="the input passes"):
        osg.run(_reshape_from_concat(), "simplify")


def test_an_input_that_fails_the_checker_may_still_pass_through(cli_path, tmp_path):
    """Only checks the pipeline broke fail a run: an input onnx already refuses (here an
    output without a shape field) is rewritten as before."""
    model = h.make_model(
        h.make_graph(
            [h.make_node("Relu", ["x"], ["y"])],
            "g",
            [h.make_tensor_value_info("x", T.FLOAT, [2])],
            [h.make_tensor_value_info("y", T.FLOAT, None)],
        ),
        opset_imports=OPSET,
    )
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(Exception):
        onnx.checker.check_model(str(tmp_path / "m.onnx"), full_check=True)
    proc, _ = _run(cli_path, "--pass", "simplify", tmp_path / "m.onnx", "-o", tmp_path / "out.onnx")
    assert proc.returncode == 0, proc.stderr
