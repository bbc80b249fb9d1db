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

// Emits `form` at the rewriter's insertion point, constants in x's type (elem_type: x's
// TensorProto data type); returns the Gelu value, or an error when elem_type is not a
// float type.
//   Given:   %y = Gelu<approximate="none">(%x)           (the node being lowered)
//   Execute: EmitGelu(rw, %x, FLOAT, GeluForm::kErf)
//   Result:  %e = Erf(Div(%x, 1.4142135))
//            %g = Mul(Mul(%x, 0.5), Add(%e, 1.0))       (returned; %y's uses go to it)
//   kTanh:   %t = Tanh(Mul(Add(%x, Mul(Mul(Mul(%x, %x), %x), 0.044715)), 0.7978846))
//            %g = Mul(Mul(%x, 0.5), Add(%t, 1.0))
StatusOr<Value*> EmitGelu(Rewriter& rewriter, Value* x, int32_t elem_type, GeluForm form);

}  // namespace onnxsurgeon::lowering
