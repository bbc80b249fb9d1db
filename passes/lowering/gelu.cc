#include "passes/lowering/gelu.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::lowering {

StatusOr<Value*> EmitGelu(Rewriter& rw, Value* x, int32_t elem_type, GeluForm form) {
  if (!IsFloatType(elem_type)) {
    return absl::InvalidArgumentError(
        absl::StrCat("Gelu of '", x->name(), "': element type ", elem_type, " is not a float type"));
  }
  auto c = [&](double v) { return *rw.ScalarFloat(static_cast<float>(v), elem_type); };  // a float type: cannot fail
  Value* inner = nullptr;
  if (form == GeluForm::kErf) {
    inner = rw.Op("Erf", {rw.Op("Div", {x, c(std::sqrt(2.0))})});
  } else {
    Value* cube = rw.Op("Mul", {rw.Op("Mul", {x, x}), x});
    Value* poly = rw.Op("Add", {x, rw.Op("Mul", {cube, c(0.044715)})});
    inner = rw.Op("Tanh", {rw.Op("Mul", {poly, c(std::sqrt(2.0 / M_PI))})});
  }
  Value* one_plus = rw.Op("Add", {inner, c(1.0)});
  return rw.Op("Mul", {rw.Op("Mul", {x, c(0.5)}), one_plus});
}

}  // namespace onnxsurgeon::lowering
