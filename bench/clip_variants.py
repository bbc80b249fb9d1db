"""CLIP text tower export variants, to see whether `--pass simplify` holds on them:

    PY bench/clip_variants.py OUT_DIR [--only NAME ...] [--onnxsurgeon BIN] [--list]
                                      [--full] [--size HIDDEN HEADS]

PY is any python with torch, transformers, onnx and onnxruntime: the sweep is meant to run
under several transformers versions, each in its own virtualenv, since CLIPAttention's
forward changed across them (4.30 to 4.40: `_shape()`, `.view(bsz * num_heads, -1,
head_dim)` and torch.bmm on rank-3 values, eager only; 4.45 on: "sdpa" selectable).
A cheap venv per version: `python -m venv V`, a .pth file in V's site-packages naming the
project venv's site-packages (torch, onnx, onnxruntime from there), then
`V/bin/pip install transformers==X`. Variant names carry the transformers version, so the
outputs of several venvs can share OUT_DIR.

Each variant is CLIPTextModel or CLIPTextModelWithProjection with a small random config
(--size: another hidden size and head count), exported with torch.onnx.export
(TorchScript, or dynamo where it is named) at an opset, with dynamic batch and sequence
axes, a dynamic batch only, static shapes (batch 2 or 1, 77 tokens), or as diffusers'
export script does ("sd": int32 ids, batch 1 x 77, dynamic axes on the input only), with
or without an attention_mask input, and with "eager" or "sdpa" attention where the
version lets one choose. The default sweep is 19 variants (QUICK and two dynamo ones);
--full takes every combination. It writes NAME.onnx, NAME.inputs.npz and
NAME.expected.npz (torch's outputs). With --onnxsurgeon, each is then run through
`BIN --pass simplify --check` and one line per variant says what happened (summary.tsv).
bench/clip_variants_extra.py makes optimum's exports and the whole CLIPModel.

Last run (transformers 4.30.2, 4.36.2, 4.40.2, 4.45.2, 4.57.6, 5.0.0 with torch 2.13):
93 variants exported, onnxruntime equal to torch on each, simplify --check exit 0 on each
(14 sdpa variants cannot be made before 4.45); none failed onnx's checker.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import warnings
from pathlib import Path

BATCH, VOCAB = 2, 1000
EOS = 2


# The default sweep: the forms users export (diffusers exports input_ids alone at opset 14
# with dynamic batch and sequence; others fix the sequence at 77), both model classes, both
# attention implementations. --full takes the whole product.
QUICK = (
    ("text", 14, "dyn", False, "eager"),
    ("text", 17, "dyn", True, "eager"),
    ("text", 14, "batch", False, "eager"),
    ("text", 14, "static", False, "eager"),
    ("text", 17, "static", True, "eager"),
    ("proj", 14, "dyn", True, "eager"),
    ("proj", 17, "static", False, "eager"),
    ("proj", 14, "batch", True, "eager"),
    ("text", 14, "dyn", False, "sdpa"),
    ("text", 17, "static", True, "sdpa"),
    ("proj", 17, "dyn", True, "sdpa"),
    # batch 1 and sequence 77, all static: what a single-prompt pipeline exports
    ("text", 14, "static1", False, "eager"),
    ("proj", 17, "static1", True, "eager"),
    ("text", 14, "static1", False, "sdpa"),
    # diffusers' export script: int32 input_ids of batch 1 padded to 77, dynamic axes named
    # on the input only (the outputs keep what the exporter inferred)
    ("text", 14, "sd", False, "eager"),
    ("proj", 14, "sd", False, "eager"),
    ("text", 14, "sd", False, "sdpa"),
)


def _variants(version: str, full: bool = False, size: tuple = ()) -> dict[str, tuple]:
    """name: (model class, exporter, opset, axes, mask input, attention, hidden, heads, seq)."""
    tag = "tf" + version.replace(".", "")[:3]
    found = {}
    grid = QUICK
    if full:
        grid = itertools.product(
            ("text", "proj"), (14, 17), ("dyn", "batch", "static", "static1", "sd"), (True, False), ("eager", "sdpa")
        )
    for model, opset, axes, mask, attention in grid:
        hidden, heads = size or ((32, 2) if model == "text" else (64, 4))
        seq = 77 if axes != "dyn" else 8
        name = f"clip_{model}_{attention}_{axes}_{'mask' if mask else 'ids'}_op{opset}_{tag}"
        name += f"_h{hidden}x{heads}" if size else ""
        found[name] = (model, "torchscript", opset, axes, mask, attention, hidden, heads, seq)
    for model, mask in (("text", True), ("proj", False)):
        name = f"clip_{model}_dynamo_{'mask' if mask else 'ids'}_op18_{tag}"
        found[name] = (model, "dynamo", 18, "dyn", mask, "default", 32, 2, 8)
    return found


def _inputs(batch: int, seq: int, mask: bool):
    import torch

    ids = torch.randint(3, VOCAB, (batch, seq))
    ids[0, -1] = EOS
    ids[1:, seq // 2] = EOS
    inputs = {"input_ids": ids}
    if mask:
        attention_mask = torch.ones(batch, seq, dtype=torch.long)
        attention_mask[1:, seq // 2 + 1 :] = 0
        inputs["attention_mask"] = attention_mask
    return inputs


def export(name: str, spec: tuple, out: Path) -> str:
    import numpy as np
    import torch
    import transformers
    from torch import nn

    model_kind, exporter, opset, axes, mask, attention, hidden, heads, seq = spec
    config = transformers.CLIPTextConfig(
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=2,
        num_attention_heads=heads,
        max_position_embeddings=77,
        projection_dim=16,
        eos_token_id=EOS,
    )
    cls = transformers.CLIPTextModel if model_kind == "text" else transformers.CLIPTextModelWithProjection
    try:
        if attention == "default":
            module = cls(config)
        else:
            module = cls._from_config(config, attn_implementation=attention)
    except (TypeError, ValueError) as exc:
        if attention != "eager":
            return f"skipped: {attention} not selectable ({str(exc).splitlines()[0][:80]})"
        module = cls(config)
    module.eval()

    class Wrapper(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask=None):
            kw = {} if attention_mask is None else {"attention_mask": attention_mask}
            return tuple(self.model(input_ids=input_ids, return_dict=False, **kw)[:2])

    inputs = _inputs(1 if axes in ("static1", "sd") else BATCH, seq, mask)
    if axes == "sd":
        inputs["input_ids"] = inputs["input_ids"].to(torch.int32)
    output_names = ["last_hidden_state", "pooler_output" if model_kind == "text" else "text_embeds"]
    if model_kind == "proj":
        output_names = ["text_embeds", "last_hidden_state"]
    dims = {
        "dyn": {0: "batch", 1: "seq"},
        "batch": {0: "batch"},
        "static": {},
        "static1": {},
        "sd": {0: "batch", 1: "sequence"},
    }[axes]
    dynamic_axes = None
    if dims:
        dynamic_axes = {k: dims for k in inputs}
        dynamic_axes.update({output_names[0]: {0: "batch"}, output_names[1]: {0: "batch"}})
        dynamic_axes["last_hidden_state"] = dims
        if axes == "sd":
            dynamic_axes = {k: dims for k in inputs}
    wrapper = Wrapper(module)
    with torch.no_grad():
        expected = wrapper(**inputs)
    path = out / f"{name}.onnx"
    args = tuple(inputs.values())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exporter == "dynamo":
            shapes = None
            if dims:
                batch, length = torch.export.Dim("batch"), torch.export.Dim("seq", max=77)
                shapes = {k: {0: batch, 1: length} for k in inputs}
                shapes = tuple(shapes.values())
            torch.onnx.export(
                wrapper,
                args,
                str(path),
                input_names=list(inputs),
                output_names=output_names,
                opset_version=opset,
                dynamo=True,
                dynamic_shapes=shapes,
            )
        else:
            kwargs = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
            torch.onnx.export(
                wrapper,
                args,
                str(path),
                input_names=list(inputs),
                output_names=output_names,
                opset_version=opset,
                dynamic_axes=dynamic_axes,
                **kwargs,
            )
    np.savez(out / f"{name}.inputs.npz", **{k: v.numpy() for k, v in inputs.items()})
    np.savez(out / f"{name}.expected.npz", **{n: t.numpy() for n, t in zip(output_names, expected)})
    return "exported"


def _ort_matches(path: Path, out: Path, name: str) -> str:
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = dict(np.load(out / f"{name}.inputs.npz"))
    expected = np.load(out / f"{name}.expected.npz")
    got = session.run(None, feeds)
    for output, value in zip(session.get_outputs(), got):
        if not np.allclose(value, expected[output.name], rtol=1e-3, atol=1e-4):
            return f"ort!=torch on {output.name}"
    return "ort==torch"


def main() -> int:
    import transformers

    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--onnxsurgeon", type=Path)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--size", type=int, nargs=2, default=(), metavar=("HIDDEN", "HEADS"))
    parser.add_argument("--full", action="store_true", help="every combination, not the default sweep")
    args = parser.parse_args()
    variants = _variants(transformers.__version__, args.full, tuple(args.size))
    if args.list:
        print("\n".join(variants))
        return 0
    transformers.logging.set_verbosity_error()
    args.out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, spec in variants.items():
        if args.only and name not in args.only:
            continue
        import torch

        torch.manual_seed(0)
        try:
            status = export(name, spec, args.out)
        except Exception as exc:  # an exporter that cannot take a variant is a finding too
            status = f"export failed: {type(exc).__name__}: {str(exc).splitlines()[0][:120]}"
        path = args.out / f"{name}.onnx"
        if status == "exported":
            status = _ort_matches(path, args.out, name)
            if args.onnxsurgeon:
                run = subprocess.run(
                    [
                        str(args.onnxsurgeon),
                        "--pass",
                        "simplify",
                        "--check",
                        "-q",
                        str(path),
                        "-o",
                        str(args.out / f"{name}.simplified.onnx"),
                    ],
                    capture_output=True,
                    text=True,
                )
                lines = (run.stderr.strip() or "ok").splitlines()
                status += f"\tsimplify exit {run.returncode}: {lines[0][:300]}"
                failed += run.returncode != 0
        line = f"{name}\t{transformers.__version__}\t{status}"
        print(line, flush=True)
        with open(args.out / "summary.tsv", "a") as summary:
            summary.write(line + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
