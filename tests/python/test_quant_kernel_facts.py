"""The profile facts the quantized corpus's backend runs found (targets/probes/quant_kernels.txt,
targets/probes/quant_corpus_rknn2.txt), checked on the probes' one-node forms: `check --target`
names the form the runtime refuses or crashes on, and accepts its neighbour that runs. The
types are read from the weights too (an initializer has no value_info)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "targets" / "probes"))

import quant_kernels  # noqa: E402

# (case name, target, what check says: "named" with no remedy, "remedied" (named, and
# --target removes it), "accepted")
CASES = [
    ("ConvInteger uint8 x int8", "ort-1.10", "named"),
    ("ConvInteger uint8 x int8", "ort-1.14", "named"),
    ("ConvInteger uint8 x uint8", "ort-1.14", "accepted"),
    ("com.microsoft DequantizeLinear int32", "ort-1.14", "named"),
    ("com.microsoft DequantizeLinear int16", "ort-1.10", "named"),
    ("com.microsoft DequantizeLinear uint8", "ort-1.10", "accepted"),
    ("com.microsoft QuantizeLinear uint16", "ort-1.14", "named"),
    ("Relu float16 at opset 14", "ort-1.14", "remedied"),
    ("Relu float16 at opset 13", "ort-1.14", "accepted"),
    ("Relu float16 at opset 14", "ort-1.10", "accepted"),
]


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("quant_kernels")
    quant_kernels.write(folder)
    return {name: folder / f"{case}.onnx" for case, name in quant_kernels.NAMES.items()}


@pytest.mark.parametrize("case,target,verdict", CASES, ids=[f"{t}-{c}" for c, t, _ in CASES])
def test_check_target_names_the_measured_form(case, target, verdict, probe_dir, run_cli):
    proc = run_cli("check", "--target", target, probe_dir[case], expect_rc=None)
    if verdict == "named":
        assert proc.returncode == 1, proc.stdout
        assert "0 removed" in proc.stdout and "no onnxsurgeon pass removes this" in proc.stdout, proc.stdout
    elif verdict == "remedied":
        assert proc.returncode == 1 and f"1 removed by --target {target}" in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 0 and "accepted" in proc.stdout, proc.stdout


@pytest.mark.parametrize("form,named", [("qdq-per-channel", "named"), ("qat", "named"), ("qdq-per-tensor", False)])
def test_rknn2_names_per_channel_dequantize(form, named, tmp_path, run_cli):
    """rknn2's simulator runs the per-channel CNN 0.059 off and refuses it with the weights
    folded: named, with no remedy; the per-tensor form matches and is accepted."""
    pytest.importorskip("onnxruntime.quantization")
    pytest.importorskip("torch")
    import quant_models as qm

    proc = run_cli("check", "--target", "rknn2", qm.build("cnn", form, tmp_path), expect_rc=None)
    if named:
        assert proc.returncode == 1 and "lacks DequantizeLinear when attribute:axis" in proc.stdout, proc.stdout
    else:
        assert proc.returncode == 0 and "accepted" in proc.stdout, proc.stdout
