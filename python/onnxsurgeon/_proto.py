"""onnx.ModelProto <-> Model without serializing the weights through protobuf's Python API.

protobuf (upb) copies a bytes field each time Python reads or sets it, and
`SerializeToString` / `ParseFromString` copy every byte of the message (serializing a
weight-heavy model costs about two copies of its weights: a doubling buffer, then a bytes
object). So the big initializers travel apart from the model:

- from_proto: everything but the big main-graph initializers' raw_data is serialized by
  protobuf, and C++ loads that (`_core._load_parts`). The big payloads themselves:
  - deferred (what `onnxsurgeon.run(proto, ...)` does): nothing is read. Each big tensor
    gets its size from dims and type, and a deferred source, its TensorProto in the input
    proto; its raw_data is read (one copy) only when a pass needs the bytes, under the
    GIL. A pass that only looks (dedupe-initializers hashing same-shape candidates) reads
    it for that moment and drops it; merging still compares the bytes in full. The proto
    must not change while the Model lives, so only `run` defers: it holds the proto for
    the whole call.
  - read (`Model.from_proto`, whose Model the caller keeps): each raw_data is read once
    (one copy, into a bytes object the C++ tensor then views).
  The input proto is only read, never changed.
- to_proto: C++ serializes the model without the big payloads (`Model._to_parts`), protobuf
  parses that, and each big initializer gets its raw_data with one copy: a tensor still
  deferred (no pass replaced its bytes, read or not) by `CopyFrom` of its source
  TensorProto, then its own metadata (name, dims, ... as the passes left them) put back;
  any other by setting raw_data from the bytes C++ holds (the very bytes object read in,
  when no pass replaced it).

So an untouched big weight costs one copy on `run(proto)` (into the new ModelProto, which
must own its bytes), where reading it in and setting it out cost two.

"Big" is at least 4096 elements (16 KiB of float32) going in, at least 16 KiB coming out;
smaller tensors, subgraph initializers and tensors in typed fields go the ordinary way.
A raw_data whose length disagrees with its dims and type is refused when its bytes are
read (and by the loader when they are not deferred); an untouched deferred one is not read
at all, so it reaches the output as it was given (onnx.checker reports it there).
"""

from __future__ import annotations

from typing import Any

from . import _core

# Initializers of at least this many elements go apart from the model on the way in
# (read from dims, which costs nothing; reading raw_data's length would copy it).
MIN_ELEMENTS = 4096
# Payloads of at least this many bytes go apart on the way out.
MIN_BYTES = 16 * 1024

_MODEL_GRAPH = 7  # ModelProto.graph
_GRAPH_INITIALIZER = 5  # GraphProto.initializer


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """One length-delimited field (wire type 2) in protobuf's wire format."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _is_repeated(fd: Any) -> bool:
    return fd.is_repeated if hasattr(fd, "is_repeated") else fd.label == fd.LABEL_REPEATED


def _serialize_except(msg: Any, skip: str, empty: Any) -> bytes:
    """`msg` serialized without its field `skip` (`empty`: a new message of msg's type).
    Fields are walked through the descriptor, not ListFields(), which would read (copy)
    `skip` too. Message fields are serialized one by one and joined (the wire format is a
    concatenation of fields): copying them into another message would serialize and parse
    each once more."""
    pieces = []
    for fd in msg.DESCRIPTOR.fields:
        if fd.name == skip:
            continue
        repeated = _is_repeated(fd)
        if repeated:
            value = getattr(msg, fd.name)
            if not len(value):
                continue
        elif msg.HasField(fd.name):
            value = getattr(msg, fd.name)
        else:
            continue
        if fd.type == fd.TYPE_MESSAGE:
            items = value if repeated else (value,)
            pieces += [_field(fd.number, item.SerializeToString()) for item in items]
        elif repeated:
            getattr(empty, fd.name).extend(value)
        else:
            setattr(empty, fd.name, value)
    return empty.SerializeToString() + b"".join(pieces)


def _is_big(t: Any) -> bool:
    if not t.HasField("raw_data"):
        return False
    n = 1
    for d in t.dims:
        n *= d
    return n >= MIN_ELEMENTS


def _has_unknown_fields(messages: list) -> bool:
    try:
        from google.protobuf.unknown_fields import UnknownFieldSet
    except ImportError:  # protobuf < 4.22: cannot tell, so assume there are some
        return True
    return any(len(UnknownFieldSet(m)) for m in messages)


def from_proto(proto: Any, base_dir: str = "", defer: bool = False) -> _core.Model:
    """A Model from an onnx.ModelProto, which is not changed. `defer`: the big weights'
    bytes stay in `proto` until a pass reads them (the proto must not change meanwhile)."""
    big = []
    if proto.HasField("graph"):
        big = [i for i, t in enumerate(proto.graph.initializer) if _is_big(t)]
    # Nothing worth keeping apart, or fields this onnx.proto does not know where the message
    # is taken apart (ListFields does not list them): one serialization, which keeps all.
    if not big or _has_unknown_fields([proto, proto.graph] + [proto.graph.initializer[i] for i in big]):
        return _core.load_buffer(proto.SerializeToString(), base_dir)
    import onnx  # a dependency of the package; only a ModelProto's caller gets here

    graph = proto.graph
    big_set = set(big)
    pieces = [_serialize_except(graph, "initializer", onnx.GraphProto())]
    parts = []
    deferred = []
    for i, t in enumerate(graph.initializer):
        if i in big_set:
            meta = _serialize_except(t, "raw_data", onnx.TensorProto())
            if defer:
                deferred.append((i, t))  # read (copied) only if a pass needs the bytes
            else:
                parts.append((i, t.raw_data))  # the one copy of the weights
        else:
            meta = t.SerializeToString()
        pieces.append(_field(_GRAPH_INITIALIZER, meta))
    slim = _serialize_except(proto, "graph", onnx.ModelProto()) + _field(_MODEL_GRAPH, b"".join(pieces))
    return _core._load_parts(slim, parts, base_dir, deferred)


def _copy_payload(dst: Any, src: Any) -> None:
    """dst (metadata only, as C++ wrote it) gets src's raw_data with one copy: CopyFrom,
    then every field but raw_data put back as dst had it."""
    meta = dst.SerializeToString()  # small: no raw_data
    dst.CopyFrom(src)  # the one copy of the weights
    for fd in dst.DESCRIPTOR.fields:
        if fd.name != "raw_data":
            dst.ClearField(fd.name)
    dst.MergeFromString(meta)


def to_proto(model: _core.Model) -> Any:
    """The model as a new onnx.ModelProto."""
    import onnx  # a dependency of the package; imported here so `import onnxsurgeon` stays light

    slim, parts = model._to_parts(MIN_BYTES)
    proto = onnx.ModelProto()
    proto.ParseFromString(memoryview(slim))
    if parts:
        initializers = proto.graph.initializer
        for i, data in parts:
            if isinstance(data, bytes):
                initializers[i].raw_data = data
            else:  # a deferred tensor's source: a TensorProto of the input proto
                _copy_payload(initializers[i], data)
    return proto
