#include "passes/lowering/layer_norm.h"

#include "absl/strings/str_cat.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon::lowering {

StatusOr<std::vector<int64_t>> NormalizedAxes(int64_t axis, int64_t rank) {
  if (axis >= 0) {
    if (rank < 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "LayerNorm axis ", axis, " is non-negative and the input rank is unknown (run shape inference)"));
    }
    if (axis >= rank)
      return absl::InvalidArgumentError(absl::StrCat("LayerNorm axis ", axis, " out of range for rank ", rank));
    axis -= rank;
  } else if (rank >= 0 && axis < -rank) {
    return absl::InvalidArgumentError(absl::StrCat("LayerNorm axis ", axis, " out of range for rank ", rank));
  }
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  return axes;
}

namespace {

bool IsFloat(int32_t t) {
  using T = onnx::TensorProto;
  return t == T::FLOAT || t == T::DOUBLE || t == T::FLOAT16 || t == T::BFLOAT16;
}

// What the emitted Mul/Add/Cast need: a floating-point stash type, and Scale/Bias of X's
// element type as dense tensors (a sparse initializer cannot feed a Mul).
Status CheckOperandTypes(const LayerNormSpec& spec) {
  if (!IsFloat(spec.stash_type))
    return absl::InvalidArgumentError(absl::StrCat("stash_type ", spec.stash_type, " is not a floating-point type"));
  for (const auto& [what, v] : {std::pair{"Scale", spec.scale}, std::pair{"B", spec.bias}}) {
    if (!v) continue;
    if (v->IsSparseInitializer() || (v->type() && v->type()->has_sparse_tensor_type()))
      return absl::InvalidArgumentError(absl::StrCat(what, " '", v->name(), "' is a sparse tensor"));
    const int32_t t = v->type() && v->type()->has_tensor_type() ? v->type()->tensor_type().elem_type()
                      : v->IsInitializer()                      ? v->initializer()->meta().data_type()
                                                                : 0;
    if (t != 0 && spec.elem_type != 0 && t != spec.elem_type)
      return absl::InvalidArgumentError(
          absl::StrCat(what, " '", v->name(), "' is ", DataTypeName(t), ", X is ", DataTypeName(spec.elem_type)));
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<LayerNormParts> EmitLayerNormDecomposition(Rewriter& rw, const LayerNormSpec& spec, int64_t opset,
                                                    bool want_inv_std_dev) {
  // Unknown element type (a function body has no types): cast to the stash type and
  // back with CastLike, a no-op when x already is in the stash type.
  const bool cast_like = spec.elem_type == 0;
  if (cast_like && opset < 15) {
    return absl::FailedPreconditionError("LayerNorm input element type is unknown and CastLike needs opset 15");
  }
  std::vector<int64_t> axes = spec.axes;
  if (axes.empty()) {
    OS_ASSIGN_OR_RETURN(axes, NormalizedAxes(spec.axis, spec.rank));
  }
  OS_RETURN_IF_ERROR(CheckOperandTypes(spec));
  const int32_t stash = spec.stash_type;
  const bool cast = cast_like || spec.elem_type != stash;

  Value* axes_input = opset >= 18 ? rw.Int64s(axes) : nullptr;
  auto reduce_mean = [&](Value* v) {
    if (axes_input) return rw.Op("ReduceMean", {v, axes_input});
    return rw.Op("ReduceMean", {v}, {Rewriter::AttrInts("axes", axes)});
  };

  Value* x = cast ? rw.Op("Cast", {spec.x}, {Rewriter::AttrInt("to", stash)}) : spec.x;
  LayerNormParts parts;
  parts.mean = reduce_mean(x);
  Value* d = rw.Op("Sub", {x, parts.mean});
  OS_ASSIGN_OR_RETURN(Value * two, rw.ScalarFloat(2.0f, stash));
  Value* var = reduce_mean(rw.Op("Pow", {d, two}));
  OS_ASSIGN_OR_RETURN(Value * epsilon, rw.ScalarFloat(spec.epsilon, stash));
  Value* std_dev = rw.Op("Sqrt", {rw.Op("Add", {var, epsilon})});
  Value* normalized = rw.Op("Div", {d, std_dev});
  if (want_inv_std_dev) parts.inv_std_dev = rw.Op("Reciprocal", {std_dev});
  if (cast_like) normalized = rw.Op("CastLike", {normalized, spec.x});
  else if (cast) normalized = rw.Op("Cast", {normalized}, {Rewriter::AttrInt("to", spec.elem_type)});
  Value* y = spec.scale ? rw.Op("Mul", {normalized, spec.scale}) : normalized;
  if (spec.bias) y = rw.Op("Add", {y, spec.bias});
  parts.y = y;
  return parts;
}

}  // namespace onnxsurgeon::lowering
