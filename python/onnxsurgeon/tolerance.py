"""The one tolerance table and element-wise comparison behind `--check`, `compare` and
`bisect` (core/verify embeds this file into the binary) and onnxsurgeon.testing.

Pure numpy and nothing else: the CLI's helpers run it in whatever Python has onnxruntime
(or a backend's own venv), and the test oracle loads it before the extension is built.

An element passes when |a - b| <= atol + rtol * |b| (numpy.allclose, b the reference);
NaN must be NaN in both, infinities equal. Integers and bools must be equal.
"""

from __future__ import annotations

# (atol, rtol) per element type, keyed by numpy dtype name. Integers and bool: exact.
TOLERANCES = {
    "float64": (1e-9, 1e-7),
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 2e-2),
    "complex64": (1e-4, 1e-4),
    "complex128": (1e-9, 1e-7),
}
# convert-float16 (and a float16 side of a comparison): every float compared with this.
FP16 = TOLERANCES["float16"]
# "Infinitely" off (exact types, NaN against a number): large, finite, since JSON has no inf.
INF = 1e30
# onnxruntime's type strings, as --check reads them from a session.
ORT_TYPES = {
    "tensor(double)": "float64",
    "tensor(float)": "float32",
    "tensor(float16)": "float16",
    "tensor(bfloat16)": "bfloat16",
}


def tolerance_for(dtype_name, fp16=False, extra=(0.0, 0.0)):
    """(atol, rtol) for an element type ("float32", or onnxruntime's "tensor(float)"),
    widened to `extra` (an approximating pass's measured bound); (0, 0) for exact types."""
    name = ORT_TYPES.get(dtype_name, dtype_name)
    if name not in TOLERANCES:
        return (0.0, 0.0)
    atol, rtol = FP16 if fp16 else TOLERANCES[name]
    return (max(atol, extra[0]), max(rtol, extra[1]))


def looser(*dtype_names, fp16=False, extra=(0.0, 0.0)):
    """The widest tolerance of several element types (a float16 side against float32)."""
    pairs = [tolerance_for(n, fp16, extra) for n in dtype_names]
    return (max(p[0] for p in pairs), max(p[1] for p in pairs))


def compare_arrays(np, a, b, atol, rtol):
    """Element-wise comparison of `a` (under test) against `b` (the reference).

    Returns {"max_abs", "max_rel", "ratio", "off", "size", "problem"}: `ratio` is the worst
    |a - b| / (atol + rtol * |b|) (over 1: outside tolerance; exact types 0 or inf), `off`
    counts the elements outside tolerance (every element when the shapes differ), `problem`
    is "" when all pass.
    Float types of different widths are compared in float64; any other type change is a
    problem. `np` is numpy, passed in so importing this module needs nothing.
    """
    a, b = np.asarray(a), np.asarray(b)
    row = {"max_abs": 0.0, "max_rel": 0.0, "ratio": 0.0, "off": 0, "size": int(b.size), "problem": ""}
    floats = a.dtype.kind in "fc" and b.dtype.kind in "fc"
    if a.dtype != b.dtype and not floats:
        return {**row, "ratio": INF, "off": int(b.size), "problem": f"element type changed: {b.dtype} -> {a.dtype}"}
    if a.shape != b.shape:
        return {
            **row,
            "ratio": INF,
            "off": int(b.size),
            "problem": f"shape changed: {list(b.shape)} -> {list(a.shape)}",
        }
    if b.size == 0:
        return row
    if floats:
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            nan_a, nan_b = np.isnan(a64), np.isnan(b64)
            finite = np.isfinite(a64) & np.isfinite(b64)
            diff = np.abs(a64 - b64)
            ref = np.abs(b64)
            # Non-finite elements pass only when both are the same NaN or infinity.
            same_special = (nan_a & nan_b) | (a64 == b64)
            bad = np.where(finite, diff > atol + rtol * ref, ~same_special)
        if finite.any():
            d, r = diff[finite], ref[finite]
            row["max_abs"] = float(d.max())
            row["max_rel"] = float((d / np.maximum(r, np.finfo(np.float32).tiny)).max())
            bound = atol + rtol * r
            with np.errstate(divide="ignore", invalid="ignore"):
                ratios = np.where(bound > 0, d / np.where(bound > 0, bound, 1), np.where(d > 0, INF, 0.0))
            row["ratio"] = float(ratios.max())
        off = int(bad.sum())
        if off:
            row["off"] = off
            row["ratio"] = max(row["ratio"], 1.0 if (bad & finite).any() else INF)
            if (nan_a != nan_b).any():
                row["problem"] = f"NaN in {int((nan_a != nan_b).sum())} element(s) of one side only"
            elif (bad & ~finite).any():
                row["problem"] = "an infinity differs"
            else:
                row["problem"] = f"{off} of {b.size} element(s) outside atol {atol:g} + rtol {rtol:g}"
        return row
    if not np.array_equal(a, b):
        off = int((a != b).sum())
        row.update(off=off, ratio=INF, problem=f"{off} of {b.size} element(s) differ (must be equal)")
        if a.dtype.kind in "iub":
            row["max_abs"] = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max())
    return row
