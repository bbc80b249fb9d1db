"""extract on the real-model corpus: a model cut in two at an intermediate value, head then
tail, computes what the whole model computes (onnxruntime), and the head matches
onnx.utils.extract_model's cut of the same value."""

from __future__ import annotations

import onnx
import onnxsurgeon as osg
import pytest


def cut_point(model: onnx.ModelProto) -> str | None:
    """A float value near the middle of the main graph, computed from a graph input by a
    single-output node."""
    inferred = onnx.shape_inference.infer_shapes(model)
    # Of known rank: a graph input or output needs one, and extract refuses a cut without.
    float_values = {
        vi.name
        for vi in inferred.graph.value_info
        if vi.type.HasField("tensor_type")
        and vi.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
        and vi.type.tensor_type.HasField("shape")
    }
    outputs = {o.name for o in model.graph.output}
    nodes = list(model.graph.node)
    # Values that depend on a graph input (a cut of constants alone has no inputs).
    live = {i.name for i in model.graph.input}
    for n in nodes:
        if any(x in live for x in n.input):
            live.update(n.output)
    float_values &= live
    order = sorted(range(len(nodes)), key=lambda i: abs(i - len(nodes) // 2))
    for i in order:
        n = nodes[i]
        if (
            len(n.output) == 1
            and n.op_type != "Constant"
            and n.output[0] in float_values
            and n.output[0] not in outputs
        ):
            return n.output[0]
    return None


def test_head_then_tail_computes_the_whole_model(corpus_model, oracle, tmp_path):
    if not corpus_model.runnable:
        pytest.skip("custom-domain model: onnxruntime cannot run it")
    original = onnx.load(corpus_model.path)
    mid = cut_point(original)
    if mid is None:  # a main graph of one If (merged decoders, Silero VAD), or ai.onnx.ml ops onnx gives no shapes
        pytest.skip("no float value of known rank in the main graph to cut at")
    inputs = [i.name for i in original.graph.input if i.name not in {t.name for t in original.graph.initializer}]
    outputs = [o.name for o in original.graph.output]

    head = osg.run(original, f"extract(outputs={mid})")
    tail = osg.run(original, f"extract(inputs={';'.join(inputs + [mid])}, outputs={';'.join(outputs)})")
    for part in (head, tail):
        oracle.assert_valid(part)
    assert [o.name for o in head.graph.output] == [mid]
    assert [i.name for i in tail.graph.input][-1] == mid and [o.name for o in tail.graph.output] == outputs
    assert len(head.graph.node) < len(original.graph.node) and len(tail.graph.node) < len(original.graph.node)

    # tf2onnx's IR 4 models list initializers among the graph inputs too: they are not fed.
    head_feeds = {i.name: corpus_model.inputs[i.name] for i in head.graph.input if i.name in corpus_model.inputs}
    mid_value = oracle.run_model(head, head_feeds)[mid]
    got = oracle.run_model(tail, {**corpus_model.inputs, mid: mid_value})
    want = oracle.run_model(original, corpus_model.inputs)
    oracle.assert_outputs_close(got, want, rtol=corpus_model.rtol, atol=corpus_model.atol)

    # onnx's own extractor cuts the same head; it does not follow a body's outer-scope
    # references (tf2onnx's Scans read outer initializers), so its head is no reference there.
    if any(n.op_type in ("If", "Loop", "Scan") for n in head.graph.node):
        return
    onnx.save(original, tmp_path / "m.onnx")
    onnx.utils.extract_model(
        str(tmp_path / "m.onnx"),
        str(tmp_path / "head.onnx"),
        [i.name for i in head.graph.input],
        [mid],
        check_model=False,
    )
    reference = onnx.load(tmp_path / "head.onnx")
    oracle.assert_outputs_close(
        oracle.run_model(reference, head_feeds), {mid: mid_value}, rtol=corpus_model.rtol, atol=corpus_model.atol
    )
    assert len(head.graph.node) <= len(reference.graph.node)


def test_extract_errors_leave_the_file_alone(tmp_path, cli_path):
    """Through the CLI: a bad cut exits 1 with one line naming the value, and writes nothing."""
    import subprocess

    model = onnx.parser.parse_model("""<ir_version: 10, opset_import: ["" : 18]>
g (float[2] X) => (float[2] Y) { h = Relu(X)  Y = Add(h, X) }""")
    src, out = tmp_path / "m.onnx", tmp_path / "o.onnx"
    onnx.save(model, src)
    proc = subprocess.run(
        [str(cli_path), "--pass", "extract(inputs=h)", str(src), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and not out.exists()
    assert "graph input 'X'" in proc.stderr and "inputs= does not list" in proc.stderr
