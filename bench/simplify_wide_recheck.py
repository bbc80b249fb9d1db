"""Re-check simplify on the wide corpus against the anchors' stored outputs.

`bench/simplify_wide_bench.py` runs all three tools (minutes per model for the anchors);
after a change to simplify only onnxsurgeon's side moves. This runs the CLI's simplify on
every wide-corpus model, counts nodes beside the onnxsim/onnxslim outputs that bench left
in bench/.data/simplify-wide, and checks every output in onnxruntime on the model's inputs.

    .venv/bin/python bench/simplify_wide_recheck.py [--cli build/onnxsurgeon]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import simplify_bench as sb  # noqa: E402
import simplify_wide_bench as wide  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", default=os.path.join(HERE, "..", "build", "onnxsurgeon"))
    args = parser.parse_args()
    totals = {"onnxsurgeon": 0, "onnxsim": 0, "onnxslim": 0}
    fewest = count = 0
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, inputs, rtol, atol in wide.models(""):
            out = os.path.join(tmp, label + ".onnx")
            proc = subprocess.run(
                [args.cli, path, "--pass", "simplify", "-o", out, "--quiet"], capture_output=True, text=True
            )
            if proc.returncode:
                failures.append(f"{label}: exit {proc.returncode}: {proc.stderr.strip()[-200:]}")
                continue
            mine = sb.count_nodes(out)[0]
            anchors = {}
            for tool in ("onnxsim", "onnxslim"):
                stored = os.path.join(wide.OUTDIR, f"{sb.slug(label)}.{tool}.onnx")
                if os.path.exists(stored):
                    anchors[tool] = sb.count_nodes(stored)[0]
                    totals[tool] += anchors[tool]
            check = sb.check_outputs(path, [out], inputs, rtol, atol, 300)[out]
            if check.get("status") != "ok":
                failures.append(f"{label}: {check}")
            count += 1
            totals["onnxsurgeon"] += mine
            fewest += all(mine <= n for n in anchors.values())
            print(
                f"{label:30s} onnxsurgeon={mine:5d} "
                + " ".join(f"{t}={n}" for t, n in anchors.items())
                + f" {check.get('status')}",
                flush=True,
            )
    print(
        f"{count} models; total nodes {totals}; onnxsurgeon fewest (ties included) on {fewest}; "
        f"not equivalent or failed: {len(failures)}"
    )
    for f in failures:
        print("  " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
