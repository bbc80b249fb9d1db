"""What each `--target` does with each quantized form of tests/python/quant_models.py.

Builds the forms (torch export, then onnxruntime's quantizers), runs the CLI's
`--target NAME` on each (input shapes given), and prints a markdown table: the Q/DQ node
counts before -> after, or the first blocker the plan names. With --results, each given
harness output folder (tests/backends/quant_corpus.py's corpus run by tests/backends/harness.py
on one backend) adds that backend's table: the original and the `--target` result on the real
backend, against onnxruntime on the original. Run from the repository root after a build:

    .venv/bin/python scripts/quant-target-table.py [--results build/backends/quant-ort-1.10 ...] \
        > docs/quant-targets.md
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "python"))

import onnx  # noqa: E402
import quant_models as qm  # noqa: E402

SHAPES = {arch: "x:" + "x".join(map(str, dims)) for arch, dims in qm.SHAPES.items()}
QDQ = ("QuantizeLinear", "DequantizeLinear")


def qdq_count(path: Path) -> int:
    return sum(n.op_type in QDQ for n in onnx.load(str(path)).graph.node)


def cell(cli: Path, target: str, model: Path, arch: str, out: Path) -> str:
    proc = subprocess.run(
        [str(cli), "--target", target, "--input-shapes", SHAPES[arch], str(model), "-o", str(out)],
        capture_output=True,
        text=True,
    )
    if proc.returncode == 0:
        before, after = qdq_count(model), qdq_count(out)
        return "ok" if before == after == 0 else f"ok, Q/DQ {before}->{after}"
    text = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
    reason = text.split("): ", 1)[-1].split("; ")[0].split(" [")[0].replace(" in main graph", "")
    if "quantizes an activation" in text:
        reason += " (an activation's quantization: the float model is what this target runs right)"
    return "refused: " + reason.replace("|", "/")


NOTES = """The quantized corpus (tests/backends/quant_corpus.py: the forms above on a CNN, an encoder
block, a LLaMA-style decoder block and a keyword-spotting LSTM, their float originals, a QAT
float-weight Q->DQ form and onnxconverter-common float16 with and without keep_io_types), run
by tests/backends/harness.py on each backend, the original and the `--target` result. What the
rows show, each measured:

- onnxruntime 1.10/1.14 refuse com.microsoft Q/DQ of 16-bit types and DequantizeLinear of
  int32, and ConvInteger with int8 weights, and so do 1.15 and 1.16; 1.14 crashes on a
  float16 Relu at opsets 14-18 (Relu-14; Relu-13 runs); 1.10 has no QGemm int8 x int8
  (targets/probes/quant_kernels.txt): the profiles name them, so `--target` refuses with the
  reason instead of writing a model the runtime rejects or crashes on.
- The ort-1.15 backend is planned with its own profile, ort-1.15 (opset capped at 18:
  onnxruntime 1.15.1 has no kernel for QuantizeLinear-19, targets/probes/quant_kernels.txt);
  ort-1.16's facts were measured on onnxruntime 1.16.3 (MatMulNBits runs there, not on 1.15).
- The decoder's QOperator form is off by 0.71 on onnxruntime 1.14/1.15 as exported, not only
  after `--target`: their QOperator kernels compute it differently from the current release.
- int16 and blocked int4 QDQ need opset 21 (refused below it, named). OpenVINO's profile
  takes opset 21 (targets/probes/opset21_models.txt: int4/uint4/int16 DequantizeLinear,
  blocked and per-axis, and the ops new at 21 run and match); it computes an int16/uint16
  activation Q -> DQ without the 16-bit rounding (the int16 forms ran off by 0.012 to 0.19),
  so the profile names int16/uint16 QuantizeLinear.
- OpenVINO refused the decoder's QDQ forms and the QAT encoder and decoder: an Add or Mul of
  an activation's DequantizeLinear and a constant's Q -> DQ pair throws in its low-precision
  transformations (targets/probes/ov_qdq_binary.txt). The profile names it
  (qdq-constant-operand) and fold-qdq folds such pairs on constants (exact): the QAT encoder
  runs; the decoders' pair quantizes a Trilu of constants, which fold-qdq does not fold:
  refused with that reason.
- rknn2 (its fp16 simulator, QDQ consumed): the per-tensor CNN matches within 0.0029; the
  per-channel CNN and its QAT form are off by 0.059 (output range 0.30), and with their
  weights folded rknn refuses at build, so the profile names per-channel DequantizeLinear
  (targets/probes/quant_corpus_rknn2.txt); the encoder's per-channel form (MatMul weights,
  default axis) crashes the simulator, not isolated yet.
- nncase-k210 on the corpus: every quantized form (QDQ, QAT, QOperator, dynamic, int16,
  int4) and the float16 ones are refused by nncase as exported and named by `--target`; the
  float originals (value_info missing) and the MatMulNBits forms (lowered) run after
  `--target` and match. Two int16/int4 LSTM plans stop in convert-opset with the node named
  (rewrite failed, no output written).
- tflite on the corpus (onnx2tf 1.29.24): the float and float16 CNN run as is and match;
  every QDQ, QAT, QOperator, int16 and int4 form is named by `--target` (qdq = refuse); the
  dynamic CNN ran 0.10 off and the dynamic encoder and decoder were refused at conversion
  (tf.linalg.matmul at the MatMulInteger), so the profile now names DynamicQuantizeLinear
  (this run predates that fact: its dynamic rows are the backend's own result). onnx2tf
  refuses the float and float16 decoder, encoder and LSTM blocks after `--target` (not named:
  'Output tensors of a Functional model must be the output of a TensorFlow Layer', an LSTM
  initial_state), the float corpus's concern more than the quantized one's.
- This page's backend tables are nncase-k210 and tflite, run on this commit's profiles. The
  onnxruntime, OpenVINO and rknn2 tables of the previous run (before the ort-1.15 profile and
  OpenVINO's opset-21 and qdq-constant-operand facts) are in git history
  (docs/quant-targets.md at 202a41a); rerun them with the harness command above.
- nncase-k210 and tflite (qdq = refuse): a QDQ CNN with its weight pairs folded
  (fold-qdq weights=true) runs 0.58 off on both. Not the fold (onnxruntime runs the folded
  model within one output step, 0.0059, of the QDQ model) nor the reference: both backends
  compute an activation's Q->DQ as the identity, without its saturation, and quantize_static
  had dropped the Relu that a uint8 Q with zero point 0 stands for; the folded model with its
  activation pairs as Identity gives the same 0.582 / 0.587 in onnxruntime. As a Clip to the
  quantized range (`fold-qdq(weights=true, activations=true)`, on request: the rounding goes),
  TFLite is within 0.0071, nncase refuses Clip (targets/probes/qdq_models.txt).
- rknn2-int8: the float models built by rknn's own quantizer (RKNN_QUANTIZE=1, calibrated on
  the inputs and 7 noisy copies), judged against onnxruntime's float result: the CNN and the
  LSTM are within 0.0018 and 0.0010, the encoder and decoder blocks off by 0.040 and 0.10
  (rknn's int8 quantization of attention).
"""


def backend_cell(side: dict | None) -> str:
    if side is None:
        return "-"
    if side.get("status") != "ok":
        message = side.get("message", "").strip().rstrip(".")
        if len(message) > 90:  # onnxruntime's long refusals end with what they mean
            message = message.split(". ")[-1][-90:]
        return f"refused ({side.get('stage', '')}): {message}".replace("|", "/")
    err = side.get("max_abs_err")
    err = "?" if err is None else f"{err:.2g}"
    return f"runs, {'matches' if side.get('match') else 'OFF'} (max abs {err})"


def backend_tables(folders: list[Path]) -> None:
    """One table per backend; a later folder's row for a model replaces an earlier one's (a
    re-run of some models after a profile change)."""
    import json

    tables: dict[str, dict] = {}
    for folder in folders:
        report = json.loads((folder / "results.json").read_text())
        for name, summary in report["backends"].items():
            rows = [r for r in report["rows"] if r["backend"] == name]
            # rknn2's runner in its quantizing mode (RKNN_QUANTIZE=1) is its own table.
            int8 = any(str(r["original"].get("note", "")).startswith("int8") for r in rows)
            key = f"{name}-int8" if int8 else name
            if int8:
                summary += "; built by rknn's own quantizer (RKNN_QUANTIZE=1)"
            table = tables.setdefault(key, {"name": name, "summary": summary, "runs": [], "rows": {}})
            table["runs"].append(f"`{report['command']}` ({report['date']})")
            for r in rows:
                table["rows"][r["model"]] = (r, folder)
    for key, table in tables.items():
        name = table["name"]
        print(f"## {key} ({table['summary']})\n")
        print("Runs: " + "; ".join(table["runs"]) + ". Reference: onnxruntime (current) on the original;")
        print("tolerance: a few quantization steps of the output's range (tests/backends/quant_corpus.py).\n")
        print("| model | original | after `--target` | Q/DQ | verdict |\n|---|---|---|---|---|")
        for model in sorted(table["rows"]):
            r, folder = table["rows"][model]
            rewritten = folder / "work" / name / model / "rewritten.onnx"
            source = REPO / r["rewrite"]["command"].split(" -o ")[0].split()[-1]
            qdq = f"{qdq_count(source)}->{qdq_count(rewritten)}" if rewritten.is_file() and source.is_file() else "-"
            after = backend_cell(r.get("rewritten")) if r["rewrite"]["exit"] == 0 else "plan refuses"
            why = ""
            if r["verdict"] in ("named by --target", "rewrite failed"):
                why = ": " + r["why"].split("): ", 1)[-1][:110].replace("|", "/")
            print(f"| {model} | {backend_cell(r['original'])} | {after} | {qdq} | {r['verdict']}{why} |")
        print()


def main() -> int:
    results = [Path(a) for a in sys.argv[sys.argv.index("--results") + 1 :]] if "--results" in sys.argv else []
    cli = REPO / "build" / "onnxsurgeon"
    targets = sorted(p.stem for p in (REPO / "targets").glob("*.toml"))
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        models = []
        for arch in qm.ARCHS:
            for form in qm.FORMS:
                path = qm.build(arch, form, d)
                if path is not None:
                    models.append((arch, form, path))
        print("# What `--target` does with quantized models\n")
        print("Generated by `scripts/quant-target-table.py` (the forms of tests/python/quant_models.py;")
        print("`ok, Q/DQ a->b`: the plan ran, Q/DQ node counts before and after; `refused`: the first")
        print("blocker the plan leaves). This page:\n")
        print("    " + " ".join(["python scripts/quant-target-table.py", *sys.argv[1:]]) + " > docs/quant-targets.md\n")
        for arch, form, path in models:
            print(f"## {arch} / {form}\n")
            print("| target | result |\n|---|---|")
            for target in targets:
                print(f"| {target} | {cell(cli, target, path, arch, d / 'out.onnx')} |")
            print()
    if results:
        print("# On the real backends\n")
        print(NOTES)
        backend_tables(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
