"""The file side end to end: two-file outputs stay consistent under kill -9,
temporaries of killed runs are removed, a path-in `run()` never writes over its input, and
`inspect --json` parses whatever bytes the model's names hold."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import onnxsurgeon as osg
import pytest
from onnx import TensorProto, helper, numpy_helper

TENSOR_ELEMENTS = 4 << 20  # 16 MiB per tensor, two tensors: a write takes a while


def two_weight_model(value: float) -> onnx.ModelProto:
    """Y = X * A + B, with A and B filled with `value`: a torn pair shows as mixed values."""
    a = numpy_helper.from_array(np.full(TENSOR_ELEMENTS, value, dtype=np.float32), "A")
    b = numpy_helper.from_array(np.full(TENSOR_ELEMENTS, value, dtype=np.float32), "B")
    graph = helper.make_graph(
        [helper.make_node("Mul", ["X", "A"], ["t"]), helper.make_node("Add", ["t", "B"], ["Y"])],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [TENSOR_ELEMENTS])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [TENSOR_ELEMENTS])],
        [a, b],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    return m


def weights_of(path: Path) -> set[float]:
    """The distinct weight values of the model at `path` (raises if it or its data is torn)."""
    m = onnx.load(str(path))
    return {float(v) for t in m.graph.initializer for v in np.unique(numpy_helper.to_array(t))}


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".tmp." in p.name)


def test_kill_minus_9_never_tears_model_and_data(cli_path: Path, tmp_path: Path) -> None:
    sources = {}
    for name, value in (("a", 1.0), ("b", 2.0)):
        onnx.save_model(
            two_weight_model(value),
            str(tmp_path / f"{name}.onnx"),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=f"{name}.bin",
            size_threshold=0,
        )
        sources[name] = value
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "m.onnx"

    def command(name: str) -> list[str]:
        return [str(cli_path), str(tmp_path / f"{name}.onnx"), "-o", str(out), "--external-data", "all"]

    # How long one save takes here, to aim the kills inside it.
    start = time.monotonic()
    subprocess.run(command("a"), check=True, capture_output=True)
    duration = time.monotonic() - start
    assert weights_of(out) == {1.0}

    rng = random.Random(12)
    torn_runs = 0
    for trial in range(24):
        name = "b" if trial % 2 == 0 else "a"
        before = weights_of(out)
        proc = subprocess.Popen(command(name), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, duration * 1.2))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        torn_runs += bool(temporaries(out_dir))
        after = weights_of(out)  # loads model + data: both from one save, whichever
        assert after in ({1.0}, {2.0}), f"trial {trial}: mixed weights {after}"
        assert after in (before, {sources[name]})
    print(f"{torn_runs} of 24 kills landed inside a save ({duration * 1e3:.0f} ms each)")
    # The loop must have hit saves in the middle, or it tested nothing.
    assert torn_runs >= 3, f"only {torn_runs} of 24 kills landed inside a save"

    # The next run removes what the killed ones left; one data file remains.
    subprocess.run(command("b"), check=True, capture_output=True)
    assert temporaries(out_dir) == []
    assert sorted(p.name for p in out_dir.iterdir()) in (["m.onnx", "m.onnx.data"], ["m.onnx", "m.onnx.1.data"])
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    x = np.ones(TENSOR_ELEMENTS, dtype=np.float32)
    np.testing.assert_array_equal(session.run(None, {"X": x})[0], np.full(TENSOR_ELEMENTS, 4.0, dtype=np.float32))


def test_rerunning_into_the_same_output_replaces_the_pair(run_cli, tmp_path: Path) -> None:
    src = tmp_path / "src.onnx"
    onnx.save_model(two_weight_model(3.0), str(src))
    out = tmp_path / "out.onnx"
    for expected_data in ("out.onnx.data", "out.onnx.1.data", "out.onnx.data"):
        run_cli(src, "-o", out, "--external-data", "all")
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["src.onnx", "out.onnx", expected_data])
        assert weights_of(out) == {3.0}


def test_path_in_run_returns_a_model_and_writes_nothing(tmp_path: Path) -> None:
    src = tmp_path / "m.onnx"
    onnx.save_model(two_weight_model(1.0), str(src))
    before = src.read_bytes()
    result = osg.run(src, "nop")
    assert isinstance(result, osg.Model)
    assert src.read_bytes() == before and sorted(os.listdir(tmp_path)) == ["m.onnx"]
    for spelling in (src, str(src), tmp_path / "." / "m.onnx"):
        with pytest.raises(osg.OnnxSurgeonError, match="is the input model"):
            osg.run(spelling, "nop", output=spelling)
    os.symlink(src, tmp_path / "alias.onnx")
    with pytest.raises(osg.OnnxSurgeonError, match="is the input model"):
        osg.run(src, "nop", output=tmp_path / "alias.onnx")
    assert src.read_bytes() == before
    assert osg.run(src, "nop", output=tmp_path / "o.onnx") == str(tmp_path / "o.onnx")
    assert weights_of(tmp_path / "o.onnx") == {1.0}


def test_a_loaded_model_protects_its_files_from_other_saves(tmp_path: Path) -> None:
    onnx.save_model(
        two_weight_model(1.0), str(tmp_path / "a.onnx"), save_as_external_data=True, location="a.bin", size_threshold=0
    )
    a = osg.load(tmp_path / "a.onnx")
    other = osg.parse_text('<ir_version: 10, opset_import: ["" : 18]> g (float[2] X) => (float[2] Y) { Y = Relu(X) }')
    for target in ("a.onnx", "a.bin"):
        with pytest.raises(osg.OnnxSurgeonError, match="refusing"):
            other.save(str(tmp_path / target))
    del a
    assert weights_of(tmp_path / "a.onnx") == {1.0}


def invalid_utf8_model() -> bytes:
    """Node, value and graph names holding bytes that are not UTF-8 (protobuf's proto2
    strings do not check), spliced into the serialized model at placeholders."""
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["X"], ["VALUE_PLACEHOLDER"], name="NODE_PLACEHOLDER"),
            helper.make_node("Custom_Op", ["VALUE_PLACEHOLDER"], ["Y"], domain="DOMAIN_PLACEHOLD"),
        ],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    )
    m = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("DOMAIN_PLACEHOLD", 1)]
    )
    m.ir_version = 10
    data = m.SerializeToString()
    for placeholder, bad in (
        (b"VALUE_PLACEHOLDER", b"v\xff\xfe\x80\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80!!!!"),
        (b"NODE_PLACEHOLDER", b"n\xe2\x82\xac\xe2\x82\xff\xf0\x9f\x98\x80\xc3nnnn"),
        (b"DOMAIN_PLACEHOLD", b'd\xc3\xa9\xff"\\\n\x01\x7fxxxxxxx'),
    ):
        assert len(placeholder) == len(bad)
        data = data.replace(placeholder, bad)
    return data


def test_inspect_json_is_valid_utf8_whatever_the_names_hold(run_cli, tmp_path: Path) -> None:
    path = tmp_path / "m.onnx"
    path.write_bytes(invalid_utf8_model())
    out = run_cli("inspect", "--json", path).stdout.encode("utf-8", "surrogateescape")
    report = json.loads(out.decode("utf-8"))  # strict: raises on any invalid byte

    def strings(node) -> set[str]:
        if isinstance(node, dict):
            return set(node) | {s for v in node.values() for s in strings(v)}
        if isinstance(node, list):
            return {s for v in node for s in strings(v)}
        return {node} if isinstance(node, str) else set()

    # Valid sequences (é) and escapes (", \, newline, control bytes) kept; each invalid byte
    # becomes U+FFFD.
    assert 'd\u00e9\ufffd"\\\n\x01\x7fxxxxxxx' in strings(report), sorted(strings(report))
    # The same through Python (which parses the same JSON).
    assert osg.inspect(osg.load(path))["op_histogram"]
