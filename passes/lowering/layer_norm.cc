#include "passes/lowering/layer_norm.h"

#include "absl/strings/str_cat.h"

namespace onnxsurgeon::lowering {

int32_t ElemType(const Value* v) {
  if (!v) return 0;
  if (const Tensor* t = v->initializer()) return t->meta().data_type();
  const onnx::TypeProto* type = v->type();
  return type && type->has_tensor_type() ? type->tensor_type().elem_type() : 0;
}

int64_t Rank(const Value* v) {
  if (!v) return -1;
  if (const Tensor* t = v->initializer()) return t->meta().dims_size();
  const onnx::TypeProto* type = v->type();
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape()) return -1;
  return type->tensor_type().shape().dim_size();
}

StatusOr<std::vector<int64_t>> NormalizedAxes(int64_t axis, int64_t rank) {
  if (axis >= 0) {
    if (rank < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("LayerNorm axis ", axis, " is non-negative and the input rank is unknown (run shape inference)"));
    }
    if (axis >= rank) return absl::InvalidArgumentError(absl::StrCat("LayerNorm axis ", axis, " out of range for rank ", rank));
    axis -= rank;
  } else if (rank >= 0 && axis < -rank) {
    return absl::InvalidArgumentError(absl::StrCat("LayerNorm axis ", axis, " out of range for rank ", rank));
  }
  std::vector<int64_t> axes;
  for (int64_t a = axis; a < 0; ++a) axes.push_back(a);
  return axes;
}

StatusOr<LayerNormParts> EmitLayerNormDecomposition(Rewriter& rw, const LayerNormSpec& spec, int64_t opset,
                                                    bool want_inv_std_dev) {
  if (spec.elem_type == 0) {
    return absl::FailedPreconditionError("LayerNorm input element type is unknown (run shape inference)");
  }
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizedAxes(spec.axis, spec.rank));
  const int32_t stash = spec.stash_type;
  const bool cast = spec.elem_type != stash;

  Value* axes_input = opset >= 18 ? rw.Int64s(axes) : nullptr;
  auto reduce_mean = [&](Value* v) {
    if (axes_input) return rw.Op("ReduceMean", {v, axes_input});
    return rw.Op("ReduceMean", {v}, {Rewriter::AttrInts("axes", axes)});
  };

  Value* x = cast ? rw.Op("Cast", {spec.x}, {Rewriter::AttrInt("to", stash)}) : spec.x;
  LayerNormParts parts;
  parts.mean = reduce_mean(x);
  Value* d = rw.Op("Sub", {x, parts.mean});
  Value* var = reduce_mean(rw.Op("Pow", {d, rw.ScalarFloat(2.0f, stash)}));
  Value* std_dev = rw.Op("Sqrt", {rw.Op("Add", {var, rw.ScalarFloat(spec.epsilon, stash)})});
  Value* normalized = rw.Op("Div", {d, std_dev});
  if (want_inv_std_dev) parts.inv_std_dev = rw.Op("Reciprocal", {std_dev});
  if (cast) normalized = rw.Op("Cast", {normalized}, {Rewriter::AttrInt("to", spec.elem_type)});
  Value* y = spec.scale ? rw.Op("Mul", {normalized, spec.scale}) : normalized;
  if (spec.bias) y = rw.Op("Add", {y, spec.bias});
  parts.y = y;
  return parts;
}

}  // namespace onnxsurgeon::lowering
