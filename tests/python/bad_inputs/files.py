"""Bad inputs at the file level: missing, empty, truncated or non-protobuf files."""

from __future__ import annotations

from pathlib import Path

from . import BadInput


def _missing(folder: Path) -> list[str]:
    return ["absent.onnx", "-o", "out.onnx"]


def _empty(folder: Path) -> list[str]:
    (folder / "empty.onnx").write_bytes(b"")
    return ["empty.onnx", "-o", "out.onnx"]


def _garbage(folder: Path) -> list[str]:
    (folder / "garbage.onnx").write_bytes(b"\xff\xfe this is no protobuf")
    return ["garbage.onnx", "-o", "out.onnx"]


CASES = [
    BadInput("missing-file", _missing, "absent.onnx"),
    BadInput("empty-file", _empty, "empty.onnx"),
    BadInput("garbage-file", _garbage, "garbage.onnx"),
]
