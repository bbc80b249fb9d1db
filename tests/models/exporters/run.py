#!/usr/bin/env python3
"""Builds corpus models of one exporter stack, inside that stack's virtualenv:

    VENV/bin/python tests/models/exporters/run.py --out DIR --stamp STAMP \
        NAME=module:function[=description] ...

tests/models/generate.py runs it (one process per stack, so the framework is imported
once). Each builder returns an exporter_lib.Exported; a failing one leaves NAME.error
(the traceback) and no stamp, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import sys
import time
import traceback
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]  # exporter modules, then corpus_common
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("JAX_PLATFORMS", "cpu")


# The frameworks print to stdout and stderr, partly from C++; the progress lines carry this
# prefix so that generate.py can show them alone.
PROGRESS = "corpus-progress:"


def report(line: str) -> None:
    print(PROGRESS + line, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--stamp", required=True)
    parser.add_argument("models", nargs="+", metavar="NAME=module:function=description")
    args = parser.parse_args()

    import warnings

    import exporter_lib
    import numpy as np

    warnings.filterwarnings("ignore")
    failures = []
    for item in args.models:
        name, builder, description = (item.split("=", 2) + [""])[:3]
        start = time.perf_counter()
        seed = zlib.crc32(name.encode()) & 0x7FFFFFFF
        random.seed(seed)
        np.random.seed(seed)
        try:
            module_name, function_name = builder.split(":")
            exported = getattr(importlib.import_module(module_name), function_name)(seed)
            manifest = exporter_lib.write(
                name, exported, args.out, args.stamp, description, time.perf_counter() - start
            )
        except Exception:
            failures.append(name)
            (args.out / f"{name}.error").write_text(traceback.format_exc())
            report(f"  {name:28s} FAILED (see {args.out / (name + '.error')})")
            continue
        (args.out / f"{name}.error").unlink(missing_ok=True)
        report(
            f"  {name:28s} {manifest['exporter']:17s} opset {manifest['opset']:2d} {manifest['node_count']:5d} nodes"
            f" {manifest['generation_seconds']:6.2f}s"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
