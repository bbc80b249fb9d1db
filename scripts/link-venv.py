"""Makes the source tree's python/ importable from .venv (a .pth file), so that after
`make build` both `.venv/bin/python -c "import onnxsurgeon"` and the tests use the
freshly built extension in python/onnxsurgeon/."""

import pathlib
import site
import sys

root = pathlib.Path(__file__).resolve().parent.parent
target = pathlib.Path(site.getsitepackages()[0]) / "onnxsurgeon-dev.pth"
line = str(root / "python") + "\n"
if not target.exists() or target.read_text() != line:
    target.write_text(line)
    print(f"link-venv: {target} -> {line.strip()}", file=sys.stderr)
