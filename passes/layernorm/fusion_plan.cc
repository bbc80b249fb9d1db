// The LayerNorm fusion plan: the reductions it reads and how the fused node is written.
#include "passes/layernorm/fusion_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/rewrite/facts.h"
#include "core/shape/symbolic.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"
#include "passes/reductions/mean.h"

namespace onnxsurgeon::layernorm::fusion {

using lowering::Rank;

// ---- facts about matched values ----------------------------------------------------

// Static dims of a value (initializer dims or inferred shape); nullopt when the rank is
// unknown; a dim is -1 when it is symbolic or unknown.
std::optional<std::vector<int64_t>> Dims(const Value* v) {
  auto shape = ShapeOf(v);
  if (!shape) return std::nullopt;
  return DimsOrMinusOne(*shape);
}

std::optional<Reduction> ReadReduction(const Node& n, int64_t rank, std::string* why) {
  if (n.Is("GlobalAveragePool")) {
    if (rank < 3) {
      Refuse(why, absl::StrCat("GlobalAveragePool '", n.name(), "' on an input of ",
                               rank < 0 ? std::string("unknown rank") : absl::StrCat("rank ", rank)));
      return std::nullopt;
    }
    Reduction r;
    for (int64_t a = 2; a < rank; ++a) r.axes.push_back(a);
    return r;
  }
  Reduction r;
  const Attribute* keepdims = n.FindAttribute("keepdims");
  r.keepdims = !keepdims || keepdims->i(1) != 0;
  if (n.num_inputs() > 1 && n.input(1)) {
    std::optional<std::vector<int64_t>> ints = ConstantInt64s(n.input(1));
    if (!ints) {
      Refuse(why, absl::StrCat(n.op_type(), " '", n.name(), "' reduces over axes that are not a constant"));
      return std::nullopt;
    }
    r.axes = *ints;
  } else if (const Attribute* a = n.FindAttribute("axes")) {
    r.axes = a->ints();
  }
  if (r.axes.empty()) {
    const Attribute* noop = n.FindAttribute("noop_with_empty_axes");
    if (noop && noop->i(0) != 0) {
      Refuse(why, absl::StrCat(n.op_type(), " '", n.name(), "' reduces nothing (noop_with_empty_axes)"));
      return std::nullopt;
    }
    r.all = true;
  }
  return r;
}

// The LayerNormalization axis for a reduction over the trailing axes of a rank-`rank`
// tensor (rank -1: unknown), or nullopt with a reason.
std::optional<int64_t> TrailingAxis(const Reduction& r, int64_t rank, std::string* why) {
  if (r.all) return 0;
  std::vector<int64_t> axes;
  for (int64_t a : r.axes) {
    if (a >= 0) {
      if (rank < 0) {
        Refuse(why,
               absl::StrCat("axes [", absl::StrJoin(r.axes, ","), "] are non-negative and the input rank is unknown"));
        return std::nullopt;
      }
      a -= rank;
    }
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != -static_cast<int64_t>(axes.size() - i)) {
      Refuse(why, absl::StrCat("normalizes over axes [", absl::StrJoin(r.axes, ","),
                               "], which are not the trailing axes (LayerNormalization normalizes axis..rank-1)"));
      return std::nullopt;
    }
  }
  return -static_cast<int64_t>(axes.size());
}

bool IsLayerNormType(int32_t t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::FLOAT16 || t == onnx::TensorProto::BFLOAT16;
}

// ---- the fused node ------------------------------------------------------------------

// x's dims as LayerNormalization sees them (after the transpose, if any).
std::optional<std::vector<int64_t>> NormalizedInputDims(const Plan& plan) {
  auto dims = Dims(plan.x);
  if (!dims || plan.perm.empty()) return dims;
  std::vector<int64_t> permuted;
  for (int64_t p : plan.perm) permuted.push_back((*dims)[p]);
  return permuted;
}

// Sorted distinct axes, non-negative when the rank is known; nullopt when a
// non-negative axis meets an unknown rank.
std::optional<std::vector<int64_t>> CanonicalAxes(const Reduction& r, int64_t rank) {
  std::vector<int64_t> axes;
  if (r.all) {
    if (rank < 0) return std::nullopt;
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t a : r.axes) {
    if (a < 0 && rank >= 0) a += rank;
    if (a >= 0 && rank < 0) return std::nullopt;
    if (rank >= 0 && (a < 0 || a >= rank)) return std::nullopt;  // out of range: invalid model
    axes.push_back(a);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

// Sets plan.axis (and plan.perm for normalized axes that are not the trailing ones) from
// the two reductions, which must agree.
bool PlanAxes(const Reduction& mean, const Reduction& var, int64_t rank, Plan& plan, std::string* why) {
  auto mean_axes = CanonicalAxes(mean, rank);
  auto var_axes = CanonicalAxes(var, rank);
  if (!mean_axes || !var_axes) {
    return Refuse(why, "the reduction axes are out of range, or non-negative with the input rank unknown");
  }
  if (*mean_axes != *var_axes) return Refuse(why, "the mean and the variance reduce over different axes");
  if (auto trailing = TrailingAxis(mean, rank, nullptr)) {
    plan.axis = *trailing;
    return true;
  }
  if (rank < 0) return Refuse(why, "normalizes over axes that are not the trailing ones, and the rank is unknown");
  // Channels-first (LayerNorm2d): move the normalized axes last with a Transpose.
  const std::vector<int64_t>& normalized = *mean_axes;
  for (int64_t i = 0; i < rank; ++i)
    if (!std::binary_search(normalized.begin(), normalized.end(), i)) plan.perm.push_back(i);
  plan.perm.insert(plan.perm.end(), normalized.begin(), normalized.end());
  plan.axis = -static_cast<int64_t>(normalized.size());
  return true;
}

// Given the affine operand of a LayerNorm over `x` from `axis`. Result true when
// Mul/Add by it equals LayerNormalization's elementwise scale/bias over the normalized
// axes: same element type, no broadcasting beyond the normalized axes or the output's
// rank, every normalized dim matched exactly. `reshape_to` is set when the operand is a
// constant with leading 1-dims that must be dropped.
bool CheckAffineOperand(const char* role, Value* operand, const Plan& plan,
                        std::optional<std::vector<int64_t>>* reshape_to, std::string* why) {
  int32_t t = ElementType(operand);
  if (t != plan.elem_type) {
    return Refuse(why, absl::StrCat(role, " '", operand->name(), "' has element type ", t, ", x has ", plan.elem_type));
  }
  auto dims = Dims(operand);
  auto x_dims = Dims(plan.x);
  if (!dims || !x_dims)
    return Refuse(why, absl::StrCat("shape of ", role, " '", operand->name(), "' or of x is unknown"));
  int64_t rank = static_cast<int64_t>(x_dims->size());
  if (!plan.perm.empty()) {
    // Channels-first: the operand, right-aligned to x, must hold x's dim on every
    // normalized axis and 1 elsewhere ([C,1,1] over NCHW); it becomes [C].
    if (static_cast<int64_t>(dims->size()) > rank) {
      return Refuse(why, absl::StrCat(role, " '", operand->name(), "' has a higher rank than x"));
    }
    int64_t k = -plan.axis;
    std::vector<int64_t> normalized(plan.perm.end() - k, plan.perm.end());
    std::vector<int64_t> target;
    for (int64_t i = 0; i < rank; ++i) {
      int64_t at = i - (rank - static_cast<int64_t>(dims->size()));
      int64_t have = at >= 0 ? (*dims)[at] : 1;
      bool is_normalized = std::find(normalized.begin(), normalized.end(), i) != normalized.end();
      int64_t want = is_normalized ? (*x_dims)[i] : 1;
      if (want < 0 || have != want) {
        return Refuse(why, absl::StrCat(role, " '", operand->name(), "' does not scale exactly the normalized axes"));
      }
      if (is_normalized) target.push_back(have);
    }
    if (!operand->initializer()) {
      return Refuse(why,
                    absl::StrCat(role, " '", operand->name(), "' of a channels-first LayerNorm is not an initializer"));
    }
    *reshape_to = target;
    return true;
  }
  int64_t k = plan.axis < 0 ? -plan.axis : rank - plan.axis;
  if (static_cast<int64_t>(dims->size()) > rank) {
    return Refuse(
        why, absl::StrCat(role, " '", operand->name(), "' has a higher rank than x: it would broadcast the output"));
  }
  size_t lead = 0;
  while (static_cast<int64_t>(dims->size() - lead) > k && (*dims)[lead] == 1) ++lead;
  if (static_cast<int64_t>(dims->size() - lead) != k) {
    return Refuse(why,
                  absl::StrCat(role, " '", operand->name(), "' does not span exactly the ", k, " normalized axes"));
  }
  for (int64_t i = 0; i < k; ++i) {
    int64_t want = (*x_dims)[rank - k + i];
    int64_t have = (*dims)[lead + i];
    if (want < 0 || have != want) {
      return Refuse(why,
                    absl::StrCat(role, " '", operand->name(), "' dim ", have, " does not equal x's normalized dim ",
                                 want < 0 ? std::string("(unknown)") : std::to_string(want)));
    }
  }
  if (lead > 0) {
    if (!operand->initializer()) {
      return Refuse(why, absl::StrCat(role, " '", operand->name(), "' has leading 1-dims and is not an initializer"));
    }
    *reshape_to = std::vector<int64_t>(dims->begin() + static_cast<std::ptrdiff_t>(lead), dims->end());
  }
  return true;
}

// An initializer's bytes under new dims (a view: nothing is copied).
StatusOr<Value*> Reshaped(Rewriter& rw, Value* v, const std::vector<int64_t>& dims) {
  Tensor t = *v->initializer();
  t.mutable_meta().clear_dims();
  for (int64_t d : dims) t.mutable_meta().add_dims(d);
  return rw.Constant(std::move(t), "affine");
}

// Ones of the normalized shape in x's type: a constant when those dims are static,
// else ConstantOfShape(Shape(x, start=axis)).
StatusOr<Value*> Ones(Rewriter& rw, const Plan& plan, Value* x) {
  Tensor one;
  one.mutable_meta().set_data_type(plan.elem_type);
  OS_ASSIGN_OR_RETURN(Tensor unit, Tensor::FromDoubles(plan.elem_type, {}, {1.0}));  // 1.0 in x's element type
  std::string bytes(unit.raw_bytes());
  auto x_dims = NormalizedInputDims(plan);
  if (x_dims) {
    int64_t rank = static_cast<int64_t>(x_dims->size());
    int64_t first = plan.axis < 0 ? rank + plan.axis : plan.axis;
    std::vector<int64_t> dims(x_dims->begin() + first, x_dims->end());
    if (std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d >= 0; })) {
      int64_t n = 1;
      for (int64_t d : dims) n *= d;
      std::string all;
      all.reserve(bytes.size() * static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) all += bytes;
      for (int64_t d : dims) one.mutable_meta().add_dims(d);
      one.SetRawBytes(std::move(all));
      return rw.Constant(std::move(one), "ones");
    }
  }
  one.mutable_meta().add_dims(1);
  one.SetRawBytes(std::move(bytes));
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = one.ToProto("");
  Value* shape = rw.Op("Shape", {x}, {Rewriter::AttrInt("start", plan.axis)});
  return rw.Op("ConstantOfShape", {shape}, {std::move(value)});
}

// The LayerNorm of `plan` written out as standard ops (passes/lowering/layer_norm.h) in
// the graph's opset, straight from the match: the element type is the one the match
// established, and non-trailing axes are reduced in place (the [C,1,1] scale and bias
// broadcast as they did), so no LayerNormalization is made only to be taken apart again.
StatusOr<Value*> EmitDecomposed(Rewriter& rw, const Plan& plan, int64_t opset) {
  lowering::LayerNormSpec spec;
  spec.x = plan.x;
  spec.scale = plan.scale;
  spec.bias = plan.bias;
  spec.axis = plan.axis;
  spec.epsilon = plan.epsilon;
  spec.elem_type = plan.elem_type;
  spec.rank = Rank(plan.x);
  if (!plan.perm.empty()) spec.axes.assign(plan.perm.end() + plan.axis, plan.perm.end());
  OS_ASSIGN_OR_RETURN(lowering::LayerNormParts parts, lowering::EmitLayerNormDecomposition(rw, spec, opset));
  return parts.y;
}

StatusOr<Value*> EmitLayerNormOp(Rewriter& rw, const Plan& plan) {
  Value* x = plan.x;
  if (!plan.perm.empty()) x = rw.Op("Transpose", {x}, {Rewriter::AttrInts("perm", plan.perm)});
  Value* scale = plan.scale;
  if (!scale) {
    OS_ASSIGN_OR_RETURN(scale, Ones(rw, plan, x));
  } else if (plan.scale_dims) {
    OS_ASSIGN_OR_RETURN(scale, Reshaped(rw, plan.scale, *plan.scale_dims));
  }
  Value* bias = plan.bias;
  if (bias && plan.bias_dims) {
    OS_ASSIGN_OR_RETURN(bias, Reshaped(rw, plan.bias, *plan.bias_dims));
  }
  std::vector<Value*> inputs = {x, scale};
  if (bias) inputs.push_back(bias);
  Value* y = rw.Op("LayerNormalization", inputs,
                   {Rewriter::AttrInt("axis", plan.axis), Rewriter::AttrFloat("epsilon", plan.epsilon)});
  if (plan.perm.empty()) return y;
  std::vector<int64_t> inverse(plan.perm.size());
  for (size_t i = 0; i < plan.perm.size(); ++i) inverse[static_cast<size_t>(plan.perm[i])] = static_cast<int64_t>(i);
  return rw.Op("Transpose", {y}, {Rewriter::AttrInts("perm", inverse)});
}

StatusOr<Value*> EmitLayerNorm(Rewriter& rw, const Plan& plan) {
  if (plan.decompose) return EmitDecomposed(rw, plan, rw.graph()->OpsetVersion(""));
  return EmitLayerNormOp(rw, plan);
}

}  // namespace onnxsurgeon::layernorm::fusion
