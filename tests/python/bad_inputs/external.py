"""Bad inputs on the file side: external-data locations that leave the folder or are no
regular file, data files with more than one hard link (onnx refuses them), ranges past the
end, and outputs that would overwrite an input (the model, its data file, by any spelling:
symlink, hard link, "./") or another model's data file, or that name a folder or a missing
one. Each is refused before anything is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import BadInput

WEIGHTS = np.arange(1024, dtype=np.float32)  # 4096 bytes


def small_model() -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
        "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1024])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1024])],
        [numpy_helper.from_array(WEIGHTS, "W")],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 10
    return m


def external_model(
    folder: Path,
    name: str = "m.onnx",
    location: str = "w.bin",
    offset: str | None = "0",
    length: str | None = "4096",
    write_data: bool = True,
) -> Path:
    """folder/name with W in `location` (as given: not checked), and the 4096 data bytes there."""
    m = small_model()
    w = m.graph.initializer[0]
    w.ClearField("raw_data")
    w.data_location = TensorProto.EXTERNAL
    entries = {"location": location, "offset": offset, "length": length}
    for key, value in entries.items():
        if value is not None:
            entry = w.external_data.add()
            entry.key, entry.value = key, value
    if write_data:
        (folder / location).write_bytes(WEIGHTS.tobytes())
    (folder / name).write_bytes(m.SerializeToString())
    return folder / name


def rewrite_to(output: str, *extra: str, prepare: Callable[[Path], None] = lambda f: None):
    """m.onnx (data in w.bin) rewritten to `output` with `extra` flags, after `prepare`
    has made what the case needs beside it."""

    def make(folder: Path) -> list[str]:
        external_model(folder)
        prepare(folder)
        return ["m.onnx", "-o", output, *extra]

    return make


def _write_weights(size: int = WEIGHTS.nbytes) -> Callable[[Path], None]:
    """Writes the first `size` bytes of W's data to folder/w.bin."""
    return lambda folder: (folder / "w.bin").write_bytes(WEIGHTS.tobytes()[:size])


def with_location(
    location: str, prepare: Callable[[Path], None] = lambda f: None, inspect: bool = False, **kwargs
) -> Callable[[Path], list[str]]:
    """m.onnx whose W points at `location`, which `prepare` creates."""

    def make(folder: Path) -> list[str]:
        prepare(folder)
        external_model(folder, location=location, write_data=False, **kwargs)
        return ["inspect", "m.onnx"] if inspect else ["m.onnx", "-o", "out.onnx"]

    return make


def _secret_outside(folder: Path) -> Path:
    outside = folder / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.bin").write_bytes(WEIGHTS.tobytes())
    return outside / "secret.bin"


def _in_subfolder(make_case: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
    """Runs the case with the model in folder/model (so ".." has somewhere to go)."""

    def make(folder: Path) -> list[str]:
        (folder / "model").mkdir()
        argv = make_case(folder / "model")
        return [a if a.startswith("-") or a == "inspect" else f"model/{a}" for a in argv]

    return make


def _symlink_out(folder: Path) -> None:
    os.symlink(_secret_outside(folder.parent), folder / "link.bin")


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "fifo.bin")


def _directory(folder: Path) -> None:
    (folder / "dir.bin").mkdir()


def _link(kind: str, target: str, name: str) -> Callable[[Path], None]:
    def make(folder: Path) -> None:
        if kind == "symlink":
            os.symlink(target, folder / name)
        else:
            os.link(folder / target, folder / name)

    return make


def _location_is(location: str, prepare: Callable[[Path], None] = lambda f: None):
    return rewrite_to("out.onnx", "--external-data", "all", "--external-location", location, prepare=prepare)


def _by_links(name: str, target: str, build: Callable, message: str, hard_link_message: str = "") -> list[BadInput]:
    """The case `name` under two more spellings of `target`: a symbolic link and a hard link
    to it (`build(spelling, prepare)` makes the case; `prepare` makes the link). A hard link
    to a data file is refused at load (`hard_link_message`), before the output is looked at."""
    suffix = Path(target).suffix
    return [
        BadInput(
            f"{name}-by-{label}",
            build(f"{stem}{suffix}", _link(kind, target, f"{stem}{suffix}")),
            hard_link_message if kind == "hard" and hard_link_message else message,
            why=WHY_HARD_LINK if kind == "hard" and hard_link_message else "",
        )
        for label, kind, stem in (("symlink", "symlink", "alias"), ("hard-link", "hard", "hard"))
    ]


def _hard_link_outside(folder: Path) -> None:
    os.link(folder / "w.bin", folder.parent / "outside.bin")


def _hard_link_inside(folder: Path) -> None:
    os.link(folder / "w.bin", folder / "other.bin")


def _hard_linked(prepare: Callable[[Path], None]) -> Callable[[Path], list[str]]:
    """m.onnx with its data in w.bin, which `prepare` gives a second hard link."""

    def make(folder: Path) -> list[str]:
        external_model(folder)
        prepare(folder)
        return ["m.onnx", "-o", "out.onnx"]

    return make


def _others_data_in_output_folder(folder: Path) -> list[str]:
    (folder / "src").mkdir()
    (folder / "dst").mkdir()
    external_model(folder / "src")
    external_model(folder / "dst", name="other.onnx")  # another model, its weights in dst/w.bin
    return ["src/m.onnx", "-o", "dst/new.onnx"]  # keep: W would go to dst/w.bin


def _others_default_data_name(folder: Path) -> list[str]:
    external_model(folder)
    external_model(folder, name="other.onnx", location="out.onnx.data")
    return ["m.onnx", "-o", "out.onnx", "--external-data", "all"]


def _inline_input(folder: Path) -> None:
    (folder / "m.onnx").write_bytes(small_model().SerializeToString())


BIG = "18446744073709551615"  # 2^64 - 1

# Why each is refused although onnx's checker or onnxruntime accepts it (the leniency table).
WHY_HARD_LINK = (
    "onnx's rule (security): through another link, data from outside the model's folder could be read; "
    "onnx 1.23's checker refuses it (onnxruntime 1.32 does not look)"
)
WHY_RANGE = "onnxruntime refuses it: the data is not where the model says (onnx's checker does not read data files)"
WHY_NUMBER = "onnxruntime refuses it: not a plain decimal number (onnx's checker does not read data files)"
MISSING = "no/such/folder/out.onnx"


def _out_folder(folder: Path) -> None:
    (folder / "out.onnx").mkdir()


CASES = [
    # where external data may come from
    BadInput(
        "ext-location-climbs-out",
        _in_subfolder(with_location("../outside/secret.bin", lambda f: _secret_outside(f.parent))),
        "'..'",
    ),
    BadInput("ext-location-absolute", with_location("/etc/hostname"), "absolute"),
    BadInput("ext-location-symlink-out", _in_subfolder(with_location("link.bin", _symlink_out)), "symbolic link"),
    BadInput(
        "ext-location-symlink-to-device",
        with_location("zero.bin", _link("symlink", "/dev/zero", "zero.bin")),
        "symbolic link",
    ),
    BadInput("ext-location-fifo", with_location("fifo.bin", _fifo), "a FIFO", timeout=10.0),
    BadInput("ext-location-fifo-inspect", with_location("fifo.bin", _fifo, inspect=True), "a FIFO", timeout=10.0),
    BadInput("ext-location-directory", with_location("dir.bin", _directory), "a folder"),
    BadInput("ext-location-missing", with_location("absent.bin"), "absent.bin"),
    BadInput("ext-location-empty", with_location(""), "names no location"),
    # more than one name for the data file (onnx 1.23's checker refuses it)
    BadInput(
        "ext-hard-link-outside",
        _in_subfolder(_hard_linked(_hard_link_outside)),
        "'w.bin' has 2 hard links",
        why=WHY_HARD_LINK,
    ),
    BadInput("ext-hard-link-inside", _hard_linked(_hard_link_inside), "'w.bin' has 2 hard links", why=WHY_HARD_LINK),
    # ranges
    BadInput(
        "ext-offset-past-end",
        with_location("w.bin", _write_weights(), offset="8192"),
        "outside 'w.bin'",
        why=WHY_RANGE,
    ),
    BadInput(
        "ext-length-past-end",
        with_location("w.bin", _write_weights(100)),
        "outside 'w.bin'",
        why=WHY_RANGE,
    ),
    BadInput(
        "ext-offset-plus-length-overflows",
        with_location("w.bin", _write_weights(), offset=BIG),
        "outside 'w.bin'",
        why=WHY_RANGE,
    ),
    BadInput(
        "ext-length-overflows-64-bits",
        with_location("w.bin", _write_weights(), length="99999999999999999999999"),
        "malformed external-data length",
        why=WHY_NUMBER,
    ),
    BadInput(
        "ext-offset-negative",
        with_location("w.bin", _write_weights(), offset="-1"),
        "malformed external-data offset",
        why=WHY_NUMBER,
    ),
    BadInput(
        "ext-length-not-the-tensor-size",
        with_location("w.bin", _write_weights(), length="4092"),
        "4092 bytes of external data",
        why="onnxruntime refuses it: the range does not hold the tensor's bytes",
    ),
    # outputs that are an input's own files
    BadInput("out-is-input", rewrite_to("m.onnx"), "is the input model"),
    BadInput("out-is-input-dot-spelling", rewrite_to("./m.onnx"), "is the input model"),
    *_by_links("out-is-input", "m.onnx", lambda out, link: rewrite_to(out, prepare=link), "is the input model"),
    BadInput("out-is-input-data", rewrite_to("w.bin"), "a file an input model reads"),
    BadInput("out-is-input-data-dot-spelling", rewrite_to("./w.bin"), "a file an input model reads"),
    *_by_links(
        "out-is-input-data",
        "w.bin",
        lambda out, link: rewrite_to(out, prepare=link),
        "a file an input model reads",
        "'w.bin' has 2 hard links",
    ),
    BadInput("out-is-input-inline-all", rewrite_to("m.onnx", "--external-data", "inline"), "is the input model"),
    BadInput("ext-location-is-input-data", _location_is("w.bin"), "'w.bin': it is a file an input model reads"),
    *_by_links(
        "ext-location-is-input-data", "w.bin", _location_is, "a file an input model reads", "'w.bin' has 2 hard links"
    ),
    BadInput("ext-location-is-input-model", _location_is("m.onnx"), "a file an input model reads"),
    BadInput("ext-location-is-the-output", _location_is("out.onnx"), "is the output model itself"),
    BadInput("ext-location-climbs-out-on-save", _location_is("../w.bin"), "'..'"),
    # outputs that are another model's files, a folder, or in no folder
    BadInput("out-folder-holds-another-models-data", _others_data_in_output_folder, "may hold another model's weights"),
    BadInput(
        "out-default-data-name-is-another-models", _others_default_data_name, "refusing to replace 'out.onnx.data'"
    ),
    BadInput("out-folder-missing-external", rewrite_to(MISSING), "does not exist"),
    BadInput("out-folder-missing-external-all", rewrite_to(MISSING, "--external-data", "all"), "does not exist"),
    BadInput("out-folder-missing-inline", rewrite_to(MISSING, "--external-data", "inline"), "does not exist"),
    BadInput("out-is-a-folder", rewrite_to("out.onnx", prepare=_out_folder), "it is a folder"),
    BadInput(
        "out-is-a-folder-external-all",
        rewrite_to("out.onnx", "--external-data", "all", prepare=_out_folder),
        "it is a folder",
    ),
]
