"""ValueType: the type of a graph value as Python data (what `Value.type` returns).

v.type.kind        "tensor", "sparse_tensor", "sequence", "optional", "map" or "unknown"
v.type.dtype       "float", "int64", ... (tensors; the key type for maps)
v.type.elem_type   the onnx.TensorProto data type number
v.type.shape       (dims) with int for static, str for symbolic, None for unknown dims;
                   None when not even the rank is known
v.type.element     the element type of a sequence or optional, the value type of a map
str(v.type)        the text form, "float[N,4]", which the type also compares equal to
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

Dim = Union[int, str, None]

# onnx.TensorProto.DataType numbers -> names, as the ONNX text format spells them.
_DTYPES = {
    1: "float",
    2: "uint8",
    3: "int8",
    4: "uint16",
    5: "int16",
    6: "int32",
    7: "int64",
    8: "string",
    9: "bool",
    10: "float16",
    11: "double",
    12: "uint32",
    13: "uint64",
    14: "complex64",
    15: "complex128",
    16: "bfloat16",
    17: "float8e4m3fn",
    18: "float8e4m3fnuz",
    19: "float8e5m2",
    20: "float8e5m2fnuz",
    21: "uint4",
    22: "int4",
    23: "float4e2m1",
    24: "float8e8m0",
    25: "uint2",
    26: "int2",
}


@dataclass(frozen=True, eq=False)
class ValueType:
    kind: str
    elem_type: int
    shape: Optional[Tuple[Dim, ...]]
    element: Optional["ValueType"]
    text: str

    @property
    def dtype(self) -> Optional[str]:
        return _DTYPES.get(self.elem_type) if self.elem_type else None

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    @classmethod
    def _from_tuple(cls, t) -> Optional["ValueType"]:
        if t is None:
            return None
        kind, elem_type, shape, inner, text = t
        return cls(kind, elem_type, shape, cls._from_tuple(inner), text)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"ValueType({self.text!r})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            return self.text == other
        if isinstance(other, ValueType):
            return (self.kind, self.elem_type, self.shape, self.element) == (
                other.kind,
                other.elem_type,
                other.shape,
                other.element,
            )
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.text)
