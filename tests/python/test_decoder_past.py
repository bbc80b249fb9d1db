"""Decoders with a KV cache through every pass and every `--target` profile, at two past
lengths: 0 (the first step; in optimum's merged decoder the If's no-cache branch) and more
than 0 (a real cache; the If's cache branch).

The models: a GPT-2 with past as TorchScript exports it, and the same through onnxruntime's
transformer optimizer (com.microsoft Attention with past and present, EmbedLayerNormalization,
SkipLayerNormalization, FastGelu; tests/python/gpt2_past_models.py), and the corpus' optimum
LLaMA decoders, with past and merged (If on use_cache_branch). tests/python/test_corpus_passes.py
runs every pass on the corpus ones with all their input sets (no cache, past 3, past 7); here
every pass runs on the two GPT-2s, at past 0 and 4.

Every profile, on all four: `--target` is equivalent in onnxruntime on every input set, or
refuses naming what blocks, writes nothing, and `check --target` rejects the original too;
the refusals are pinned below, so a new one (or one that goes away) is seen. Dynamic-shape
profiles run once without --input-shapes (the dynamic axes are kept) and are checked on every
set; static-shape profiles are given each set's shapes, one `--target` per set, as an NPU
deployment fixes its past length."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxsurgeon as osg
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/python"))

import gpt2_past_models as gpt2  # noqa: E402

PASSES = [p["name"] for p in osg.passes() if p["name"] not in ("target", "convert-float16")]
PROFILES = sorted(p.stem for p in (ROOT / "targets").glob("*.toml"))
# The profiles that need static shapes ([shapes] static = true).
STATIC = {
    n for n in PROFILES if re.search(r"^\[shapes\][^\[]*^static = true", (ROOT / f"targets/{n}.toml").read_text(), re.M)
}
PAST_LENGTHS = (0, 4)
GPT2 = ("gpt2_past_raw", "gpt2_past_opt")
OPTIMUM = ("optimum_llama_decoder_with_past", "optimum_llama_merged")

# (model, profile) -> what its refusal names: the fact that blocks (the rest are equivalent).
REFUSED = {
    **{(m, "ncnn"): "lacks Cast when cast-from:int64" for m in (*GPT2, "optimum_llama_decoder_with_past")},
    ("optimum_llama_merged", "ncnn"): "If whose condition is computed at run time",
    **{
        ("optimum_llama_merged", p): "If whose condition is computed at run time"
        for p in ("nncase-k210", "nncase-k230", "rknn2", "tidl")
    },
}


def _gpt2_sets() -> list[dict[str, np.ndarray]]:
    rng = np.random.default_rng(0)
    batch, seq, sets = 1, 3, []
    for past in PAST_LENGTHS:
        feeds = {
            "input_ids": rng.integers(0, gpt2.V, (batch, seq)).astype(np.int64),
            "position_ids": np.arange(past, past + seq, dtype=np.int64)[None].repeat(batch, 0),
            "attention_mask": np.ones((batch, past + seq), np.int64),
        }
        for i in range(gpt2.L):
            feeds[f"past_{i}"] = rng.standard_normal((2, batch, gpt2.N, past, gpt2.H)).astype(np.float32)
        sets.append(feeds)
    return sets


@pytest.fixture(scope="module")
def decoders(tmp_path_factory, corpus):
    """name -> (path, input sets, rtol/atol)."""
    d = tmp_path_factory.mktemp("gpt2_past")
    opt = gpt2.export_optimized(str(d / "gpt2"))
    sets = _gpt2_sets()
    found = {"gpt2_past_raw": (d / "gpt2_raw.onnx", sets, 1e-4), "gpt2_past_opt": (Path(opt), sets, 1e-4)}
    for name in OPTIMUM:
        entry = corpus.model(name)
        found[name] = (entry.path, entry.all_inputs, max(entry.rtol, entry.atol))
    return found


@pytest.mark.parametrize("model", GPT2)
@pytest.mark.parametrize("pipeline", PASSES)
def test_every_pass_at_two_past_lengths(decoders, oracle, model, pipeline):
    path, sets, tol = decoders[model]
    original = onnx.load(path)
    rewritten = osg.run(original, pipeline, verify_each=False)
    if model == "gpt2_past_raw":  # the optimizer's output is onnxruntime's, not valid ONNX to onnx's checker
        oracle.assert_valid(rewritten)
    oracle.assert_equivalent(original, rewritten, inputs=sets, rtol=tol, atol=tol)


def _shapes(feeds: dict[str, np.ndarray]) -> str:
    return ";".join(f"{k}:{'x'.join(map(str, v.shape)) or '1'}" for k, v in feeds.items() if v.ndim)


def _cli(cli_path, *args):
    return subprocess.run([str(cli_path), *map(str, args)], capture_output=True, text=True, timeout=600)


def _dim_params(path) -> list[list[str]]:
    return [[d.dim_param for d in i.type.tensor_type.shape.dim] for i in onnx.load(path).graph.input]


@pytest.mark.parametrize("model", [*GPT2, *OPTIMUM])
@pytest.mark.parametrize("profile", PROFILES)
def test_every_target_equivalent_or_named(decoders, oracle, cli_path, tmp_path, model, profile):
    path, sets, tol = decoders[model]
    # A static profile gets each set's shapes (one --target per past length); a dynamic one
    # runs once, keeps the dynamic axes, and is checked on every set.
    runs = [(sets[i : i + 1], ["--input-shapes", _shapes(sets[i])]) for i in range(len(sets))]
    if profile not in STATIC:
        runs = [(sets, [])]
    refusals = []
    for k, (checked, shapes) in enumerate(runs):
        out = tmp_path / f"out{k}.onnx"
        proc = _cli(cli_path, "--target", profile, *shapes, path, "-o", out)
        if proc.returncode != 0:
            assert proc.returncode == 1 and "blocker(s) remain" in proc.stderr, proc.stderr
            assert not out.exists()
            check = _cli(cli_path, "check", "--target", profile, "--json", *shapes, path)
            assert check.returncode == 1, check.stdout + check.stderr
            facts = {b["fact"] for b in json.loads(check.stdout)["blockers"] if not b["fixable"]}
            assert facts, check.stdout  # named: what no step removes
            refusals.append(proc.stderr)
            continue
        assert _cli(cli_path, "check", "--target", profile, *shapes, out).returncode == 0
        if profile not in STATIC:
            assert _dim_params(out) == _dim_params(path), "dynamic axes lost"
        oracle.assert_equivalent(path, out, inputs=checked, rtol=tol, atol=tol)
    want = REFUSED.get((model, profile))
    if want is None:
        assert not refusals, f"{profile} refuses {model}: {refusals[0].strip().splitlines()[-1][:400]}"
    else:
        assert len(refusals) == len(runs), f"{profile} now accepts {model} (remove it from REFUSED)"
        assert all(want in r for r in refusals), refusals[0][-800:]
