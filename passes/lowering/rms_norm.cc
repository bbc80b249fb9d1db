#include "passes/lowering/rms_norm.h"

#include "absl/strings/str_cat.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::lowering {

StatusOr<RmsNormParts> EmitRmsNorm(Rewriter& rw, const RmsNormSpec& spec, int64_t opset, bool want_inv_std_dev) {
  const int32_t y_type = spec.scale_type ? spec.scale_type : spec.elem_type;
  if (!IsFloatType(spec.elem_type) || !IsFloatType(y_type))
    return absl::InvalidArgumentError(absl::StrCat("element type ", spec.elem_type, " is not a float type"));
  if (!IsFloatType(spec.stash_type))
    return absl::InvalidArgumentError(absl::StrCat("stash_type ", spec.stash_type, " is not a floating-point type"));
  if (spec.axes.empty()) return absl::InvalidArgumentError("no normalized axes");
  auto up = [&](Value* v, int32_t type) {
    return type != spec.stash_type ? rw.Op("Cast", {v}, {Rewriter::AttrInt("to", spec.stash_type)}) : v;
  };

  Value* axes_input = opset >= 18 ? rw.Int64s(spec.axes) : nullptr;
  Value* x = up(spec.x, spec.elem_type);
  Value* square = rw.Op("Mul", {x, x});
  Value* mean_square = axes_input ? rw.Op("ReduceMean", {square, axes_input})
                                  : rw.Op("ReduceMean", {square}, {Rewriter::AttrInts("axes", spec.axes)});
  OS_ASSIGN_OR_RETURN(Value * epsilon, rw.ScalarFloat(spec.epsilon, spec.stash_type));
  Value* rms = rw.Op("Sqrt", {rw.Op("Add", {mean_square, epsilon})});
  RmsNormParts parts;
  Value* y = rw.Op("Div", {x, rms});
  if (want_inv_std_dev) parts.inv_std_dev = rw.Op("Reciprocal", {rms});
  if (spec.scale) y = rw.Op("Mul", {y, up(spec.scale, y_type)});
  parts.y = y_type != spec.stash_type ? rw.Op("Cast", {y}, {Rewriter::AttrInt("to", y_type)}) : y;
  return parts;
}

}  // namespace onnxsurgeon::lowering
