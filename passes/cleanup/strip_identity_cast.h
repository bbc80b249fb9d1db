// The exactness predicate behind strip-identity-cast's Cast-chain rule, exposed for tests.
#pragma once

#include <cstdint>

namespace onnxsurgeon::passes {

// True when casting any value of tensor type `from` to `to` gives back the same value:
// every value of `from` (infinities, NaN, -0 included) is exactly a value of `to`. Then
// Cast(Cast(x, to), B) == Cast(x, B) for every numeric B, because ONNX defines Cast by
// value. Types are onnx::TensorProto::DataType numbers. Unknown, string and complex types
// are never lossless (except to themselves).
//   float -> double, int32 -> int64, uint8 -> float16, bool -> anything numeric: true
//   float -> int32, int32 -> float (24-bit mantissa), float -> float16, int64 -> double: false
// With allow_precision_loss, any floating type to any other floating type counts too
// (float -> float16 -> float then collapses: values round, the user asked for it).
bool CastIsLossless(int32_t from, int32_t to, bool allow_precision_loss = false);

}  // namespace onnxsurgeon::passes
