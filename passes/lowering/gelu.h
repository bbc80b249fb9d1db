// Emitting Gelu as standard ops older opsets know. Shared by rewrite-gelu and the opset
// converter (Gelu does not exist below opset 20).
#pragma once

#include <cstdint>

#include "core/ir/value.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::lowering {

enum class GeluForm {
  kErf,   // 0.5 * x * (1 + Erf(x / sqrt(2)))                        Gelu(approximate="none"), exact
  kTanh,  // 0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))  Gelu(approximate="tanh"), exact
};

// Given x (elem_type: its TensorProto data type, a float type).
// Execute emits the form at the rewriter's insertion point, constants in x's type.
// Result the Gelu value; an error when elem_type is not a float type.
StatusOr<Value*> EmitGelu(Rewriter& rewriter, Value* x, int32_t elem_type, GeluForm form);

}  // namespace onnxsurgeon::lowering
