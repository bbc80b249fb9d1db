#!/usr/bin/env python3
"""Generates the ~500 MB models used by bench/roundtrip.py.

A stack of LAYERS x (MatMul + Add + Relu) with DIM x DIM fp32 weights from a fixed seed,
built directly with onnx.helper / numpy_helper (no torch). Saved twice under bench/.data/:

  large_inline.onnx                          weights inline (raw_data)
  large_external/large.onnx + large.onnx.data  all tensors >= 1024 bytes in one data file

Regeneration is skipped when both exist and bench/.data/large.stamp.json matches the
parameters (and the sizes recorded there still match the files). --force regenerates.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, ".data")
INLINE = os.path.join(DATA, "large_inline.onnx")
EXT_DIR = os.path.join(DATA, "large_external")
EXT_MODEL = os.path.join(EXT_DIR, "large.onnx")
EXT_LOCATION = "large.onnx.data"
STAMP = os.path.join(DATA, "large.stamp.json")
FORMAT = 1  # bump when the graph construction below changes


def build(layers: int, dim: int, seed: int) -> onnx.ModelProto:
    rng = np.random.default_rng(seed)
    inits, nodes = [], []
    x = "X"
    for i in range(layers):
        w = rng.standard_normal((dim, dim), dtype=np.float32)
        w *= np.float32(1.0 / np.sqrt(dim))
        b = rng.standard_normal((dim,), dtype=np.float32)
        inits.append(numpy_helper.from_array(w, f"w{i}"))
        inits.append(numpy_helper.from_array(b, f"b{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"mm{i}"], name=f"MatMul_{i}"))
        nodes.append(helper.make_node("Add", [f"mm{i}", f"b{i}"], [f"add{i}"], name=f"Add_{i}"))
        out = "Y" if i == layers - 1 else f"relu{i}"
        nodes.append(helper.make_node("Relu", [f"add{i}"], [out], name=f"Relu_{i}"))
        x = out
    graph = helper.make_graph(
        nodes,
        "large_mlp",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", dim])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", dim])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="onnxsurgeon-bench")
    model.ir_version = 8
    return model


def files_ok(stamp: dict) -> bool:
    for path, size in stamp.get("sizes", {}).items():
        full = os.path.join(DATA, path)
        if not os.path.isfile(full) or os.path.getsize(full) != size:
            return False
    return bool(stamp.get("sizes"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=30)
    ap.add_argument("--dim", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args()

    params = {"format": FORMAT, "layers": args.layers, "dim": args.dim, "seed": args.seed, "onnx": onnx.__version__}
    if not args.force and os.path.exists(STAMP):
        with open(STAMP) as f:
            stamp = json.load(f)
        if stamp.get("params") == params and files_ok(stamp):
            print(f"make_large_model: up to date ({STAMP})")
            return 0

    os.makedirs(DATA, exist_ok=True)
    if os.path.exists(STAMP):
        os.remove(STAMP)
    t0 = time.perf_counter()
    model = build(args.layers, args.dim, args.seed)
    t1 = time.perf_counter()
    onnx.save_model(model, INLINE)
    t2 = time.perf_counter()
    shutil.rmtree(EXT_DIR, ignore_errors=True)
    os.makedirs(EXT_DIR)
    # save_model with save_as_external_data converts `model` in place; it is not reused.
    onnx.save_model(
        model,
        EXT_MODEL,
        save_as_external_data=True,
        all_tensors_to_one_file=True,
        location=EXT_LOCATION,
        size_threshold=1024,
    )
    t3 = time.perf_counter()
    del model

    rel = lambda p: os.path.relpath(p, DATA)  # noqa: E731
    sizes = {rel(p): os.path.getsize(p) for p in (INLINE, EXT_MODEL, os.path.join(EXT_DIR, EXT_LOCATION))}
    with open(STAMP, "w") as f:
        json.dump({"params": params, "sizes": sizes}, f, indent=1)
    mb = sum(sizes.values()) / 2 / 1e6
    print(
        f"make_large_model: {args.layers} layers of {args.dim}x{args.dim} fp32, ~{mb:.0f} MB each; "
        f"build {t1 - t0:.1f}s, inline save {t2 - t1:.1f}s, external save {t3 - t2:.1f}s"
    )
    for p, s in sizes.items():
        print(f"  {p}: {s:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
