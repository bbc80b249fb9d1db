#include "passes/layernorm/fusion_rules.h"

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

namespace onnxsurgeon::layernorm {
namespace {

using lowering::Rank;
using pattern::Match;
using pattern::OpRef;
using pattern::Pattern;
using pattern::ValueRef;

// ---- facts about matched values ----------------------------------------------------

// Static dims of a value (initializer dims or inferred shape); nullopt when the rank is
// unknown; a dim is -1 when it is symbolic or unknown.
std::optional<std::vector<int64_t>> Dims(const Value* v) {
  auto shape = ShapeOf(v);
  if (!shape) return std::nullopt;
  return DimsOrMinusOne(*shape);
}

// What a mean reduces: a ReduceMean's (or the ReduceSum's of ReduceSum * 1/N) axes
// (attribute, or constant input from opset 18 / 13) or every axis; a GlobalAveragePool's
// axes 2..rank-1 (tf2onnx writes reduce_mean over the last axis of a rank-3 tensor so).
// keepdims=0 is allowed here; CheckKeptAxes decides whether the axes are put back.
struct Reduction {
  bool all = false;
  std::vector<int64_t> axes;
  bool keepdims = true;
};

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

struct Plan {
  Value* x = nullptr;
  Value* scale = nullptr;  // null: ones
  Value* bias = nullptr;   // null: none
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int32_t elem_type = 0;
  // Constant scale/bias written with leading 1-dims: dims to drop them to.
  std::optional<std::vector<int64_t>> scale_dims, bias_dims;
  // Normalized axes that are not the trailing ones (LayerNorm2d over axis 1 of NCHW):
  // x is transposed so they are, normalized, and transposed back. Empty: no transpose.
  std::vector<int64_t> perm;
  // Written out as standard ops rather than as one LayerNormalization (DecomposeWhen).
  bool decompose = false;
};

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

// ---- decomposed forms ----------------------------------------------------------------

// Given a value with the reduced axes of `reduced` put back (`kept`: the pattern's
// keepdims / Reshape / Unsqueeze, maybe under an Expand), whether `reduced` kept its dims,
// and the canonical reduced axes of x. True when `kept` broadcasts against x exactly as a
// keepdims=1 reduction would: Unsqueeze of exactly the reduced axes, or a Reshape to x's
// shape with the reduced axes 1 (an Expand on top must give x's shape).
bool CheckKeptAxes(const char* role, const Value* kept, const Value* reduced, bool keepdims,
                   const std::vector<int64_t>& axes, const Value* x, const SymbolicShapes& shapes, std::string* why) {
  if (kept == reduced) {
    if (keepdims) return true;
    return Refuse(why, absl::StrCat("the ", role, " '", reduced->name(),
                                    "' drops the reduced axes (keepdims=0) and nothing puts them back"));
  }
  const Node* n = kept->producer();
  std::optional<Shape> x_shape = ShapeOf(x);
  if (!x_shape) return Refuse(why, absl::StrCat("x's rank is unknown: cannot tell what '", n->name(), "' restores"));
  const int64_t rank = static_cast<int64_t>(x_shape->size());
  if (n->Is("Expand")) {
    // Against x, Expand only repeats what broadcasting would: its output must fit in x's
    // shape (each dim 1 or x's), as jax2tf's BroadcastTo to [.., 1] or to x's shape does.
    // Its shape as computed: a batch read from Shape(x)[0] is x's, whatever it is named.
    std::optional<Shape> shape = shapes.ComputedShape(const_cast<Value*>(kept));
    bool fits = shape && shape->size() <= x_shape->size();
    for (size_t i = 0; fits && i < shape->size(); ++i) {
      const Dim& d = (*shape)[i];
      fits = (d.is_static() && d.value == 1) || d.SameAs((*x_shape)[x_shape->size() - shape->size() + i]);
    }
    if (!fits) {
      return Refuse(why, absl::StrCat("Expand '", n->name(), "' of the ", role, " gives ",
                                      shape ? ShapeToString(*shape) : std::string("an unknown shape"),
                                      ", which does not broadcast into x's shape ", ShapeToString(*x_shape)));
    }
    return CheckKeptAxes(role, n->input(0), reduced, keepdims, axes, x, shapes, why);
  }
  if (n->Is("Unsqueeze")) {
    std::optional<std::vector<int64_t>> put_back;
    if (n->num_inputs() > 1 && n->input(1)) put_back = ConstantInt64s(n->input(1));
    else if (const Attribute* a = n->FindAttribute("axes")) put_back = a->ints();
    if (put_back) {
      for (int64_t& a : *put_back) a = a < 0 ? a + rank : a;
      std::sort(put_back->begin(), put_back->end());
    }
    if (keepdims || put_back != axes) {
      return Refuse(why, absl::StrCat("Unsqueeze '", n->name(), "' of the ", role,
                                      " does not put back exactly the reduced axes"));
    }
    return true;
  }
  // Reshape: to x's shape with the reduced axes 1 (its shape as computed, else the
  // constant target shape).
  std::optional<Shape> shape = shapes.ComputedShape(const_cast<Value*>(kept));
  if (!shape || !StaticDims(shape)) {
    if (auto target = ConstantInt64s(n->input(1));
        target && std::all_of(target->begin(), target->end(), [](int64_t d) { return d > 0; })) {
      shape = Shape();
      for (int64_t d : *target) shape->push_back(Dim::Static(d));
    }
  }
  bool restores = shape && static_cast<int64_t>(shape->size()) == rank;
  for (int64_t i = 0; restores && i < rank; ++i) {
    const Dim& d = (*shape)[static_cast<size_t>(i)];
    bool reduced_axis = std::binary_search(axes.begin(), axes.end(), i);
    restores = reduced_axis ? d.is_static() && d.value == 1 : d.SameAs((*x_shape)[static_cast<size_t>(i)]);
  }
  if (!restores) {
    return Refuse(why, absl::StrCat("Reshape '", n->name(), "' of the ", role, " gives ",
                                    shape ? ShapeToString(*shape) : std::string("an unknown shape"), ", not x's shape ",
                                    ShapeToString(*x_shape), " with the reduced axes 1"));
  }
  return true;
}

// The two means really are means (a ReduceSum's factor is 1/N of x's static reduced
// dims), and each reaches x with the reduced axes back in place.
bool CheckMeans(const Match& m, const Reduction& mean, const Reduction& var, const Value* x,
                const SymbolicShapes& shapes, std::string* why) {
  if (!reductions::IsAverage(m.value("mean"), x, why) || !reductions::IsAverage(m.value("var_mean"), x, why))
    return false;
  auto axes = CanonicalAxes(mean, Rank(x));
  if (!axes) return Refuse(why, "the reduced axes are unknown");
  // E[x^2] - E[x]^2 subtracts the two reductions: they must keep the same dims.
  const Node* var_op = m.value("var")->producer();
  bool moments = var_op->Is("Sub") || var_op->Is("Max");
  if (moments && mean.keepdims != var.keepdims) {
    return Refuse(why, "E[x^2] and E[x]^2 differ in keepdims: their difference would broadcast");
  }
  return CheckKeptAxes("mean", m.value("mean_kept"), m.value("mean"), mean.keepdims, *axes, x, shapes, why) &&
         CheckKeptAxes("variance", m.value("var_kept"), m.value("var"), var.keepdims, *axes, x, shapes, why);
}

// Given a match holding x, the two ReduceMeans ("mean", "var"), "eps" and optionally
// "scale"/"bias". Result the plan, or nullopt with the reason.
std::optional<Plan> Analyze(const Match& m, RewriteFacts& facts, std::string* why) {
  Plan plan;
  plan.x = m.value("x");
  // x's type, or else the epsilon's: Add(var, eps) computes in x's type, so the match
  // itself says what it is even where shape inference could not type x.
  plan.elem_type = ElementType(plan.x);
  if (plan.elem_type == 0) plan.elem_type = m.constant("eps").data_type;
  if (plan.elem_type == onnx::TensorProto::DOUBLE) {
    Refuse(why, "x is double; LayerNormalization would compute it in float");
    return std::nullopt;
  }
  if (!IsLayerNormType(plan.elem_type)) {
    Refuse(why, plan.elem_type == 0 ? "x's element type is unknown" : "x is not a floating-point tensor");
    return std::nullopt;
  }
  const int64_t rank = Rank(plan.x);
  const Node* mean_op = reductions::ReductionOf(m.value("mean"));
  const Node* var_op = reductions::ReductionOf(m.value("var_mean"));
  if (!mean_op || !var_op) {
    Refuse(why, "a matched mean is not a reduction");
    return std::nullopt;
  }
  auto mean = ReadReduction(*mean_op, rank, why);
  if (!mean) return std::nullopt;
  auto var = ReadReduction(*var_op, rank, why);
  if (!var) return std::nullopt;
  if (!PlanAxes(*mean, *var, rank, plan, why)) return std::nullopt;
  if (!CheckMeans(m, *mean, *var, plan.x, facts.Get<SymbolicShapes>(), why)) return std::nullopt;
  std::optional<double> eps = m.constant("eps").ScalarAsDouble();
  if (!eps || !std::isfinite(*eps)) {
    Refuse(why, "epsilon is not a finite scalar");
    return std::nullopt;
  }
  plan.epsilon = static_cast<float>(*eps);
  if (m.has("scale")) {
    plan.scale = m.value("scale");
    if (!CheckAffineOperand("scale", plan.scale, plan, &plan.scale_dims, why)) return std::nullopt;
  }
  if (m.has("bias")) {
    plan.bias = m.value("bias");
    if (!CheckAffineOperand("bias", plan.bias, plan, &plan.bias_dims, why)) return std::nullopt;
  }
  return plan;
}

// True when the match already is what EmitDecomposed writes for it at `opset`: ReduceMean
// over exactly those axes in the opset's form (attribute below 18, input from 18),
// Pow(d, 2), Add(eps), Sqrt, Div, then Mul(scale) / Add(bias) when present. Rewriting it
// would change nothing (and would match again): the decomposition is left as it is.
bool IsCanonicalDecomposition(const Match& m, const Plan& plan, int64_t opset) {
  if (plan.elem_type != onnx::TensorProto::FLOAT) return false;  // the emitted form casts around other types
  std::map<std::string, int> want = {{"ReduceMean", 2},          {"Sub", 1},  {"Pow", 1},
                                     {"Add", plan.bias ? 2 : 1}, {"Sqrt", 1}, {"Div", 1}};
  if (plan.scale) want["Mul"] = 1;
  std::map<std::string, int> have;
  for (Node* n : m.nodes()) have[n->op_type()]++;
  if (have != want) return false;
  std::vector<int64_t> axes;
  if (!plan.perm.empty()) {
    axes.assign(plan.perm.end() + plan.axis, plan.perm.end());
  } else {
    auto normalized = lowering::NormalizedAxes(plan.axis, Rank(plan.x));
    if (!normalized.ok()) return false;
    axes = *normalized;
  }
  for (const char* role : {"mean", "var_mean"}) {
    const Node* reduce = m.value(role)->producer();
    bool as_input = reduce->num_inputs() > 1 && reduce->input(1);
    if (as_input != (opset >= 18)) return false;
    std::optional<std::vector<int64_t>> have_axes =
        as_input
            ? ConstantInt64s(reduce->input(1))
            : (reduce->FindAttribute("axes") ? std::optional(reduce->FindAttribute("axes")->ints()) : std::nullopt);
    if (have_axes != axes) return false;
  }
  return true;
}

std::unique_ptr<RewriteRule> MakeRule(std::string name, Pattern p, int root, int benefit, DecomposeWhen decompose) {
  auto check = [decompose](const Match& m, RewriteFacts& facts) -> Verdict<Plan> {
    std::string why;
    std::optional<Plan> plan = Analyze(m, facts, &why);
    if (!plan) return Refuse(std::move(why));
    plan->decompose = decompose && decompose(*m.root());
    if (plan->decompose) {
      int64_t opset = m.root()->graph()->OpsetVersion("");
      if (IsCanonicalDecomposition(m, *plan, opset)) {
        return Refuse(absl::StrCat("already the standard decomposition at opset ", opset, ": left as it is"));
      }
    }
    return *std::move(plan);
  };
  auto replace = [](const Match& m, Plan plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
    OS_ASSIGN_OR_RETURN(Value * y, EmitLayerNorm(rw, plan));
    return std::vector<Value*>{y};
  };
  return std::make_unique<PatternRule<Plan>>(std::move(name), std::move(p), root, check, replace, benefit);
}

// How the standardization divides by the standard deviation.
enum class Division { kDiv, kMulReciprocal, kMulOneOver, kMulRsqrt };
constexpr Division kDivisions[] = {Division::kDiv, Division::kMulReciprocal, Division::kMulOneOver,
                                   Division::kMulRsqrt};
const char* DivisionName(Division d) {
  switch (d) {
    case Division::kDiv: return "div";
    case Division::kMulReciprocal: return "reciprocal";
    case Division::kMulOneOver: return "one-over";
    case Division::kMulRsqrt: return "rsqrt";
  }
  return "";
}

// mean = E[x]; d = Sub(x, mean'); var = E[Pow(d, 2) | Mul(d, d)], or
// var = [Max(0,] E[x^2] - mean^2 [)]; E is any reductions::MeanOf form (ReduceMean,
// GlobalAveragePool, ReduceSum * 1/N). mean' and var' are the mean and variance as they
// meet x: themselves (keepdims=1), or with the reduced axes put back (KeptAxes).
struct Variance {
  ValueRef x, d, mean, mean_kept, var_kept;
};

using reductions::MeanOf;

// `reduced` with the reduced axes back as 1s: itself (keepdims=1), Reshape or Unsqueeze
// (jax2tf's expand_dims after a keepdims=0 reduction), maybe then Expanded to x's shape.
// CheckKeptAxes decides which is right.
ValueRef KeptAxes(Pattern& p, ValueRef reduced, std::string capture) {
  ValueRef restored =
      p.Or({reduced, p.Op("Reshape", {reduced, p.Any()}), p.Op("Unsqueeze", {reduced}).AnyNumberOfInputs()});
  return p.Or({restored, p.Op("Expand", {restored, p.Any()})}, std::move(capture));
}

// v^2 as Pow(v, 2) or Mul(v, v).
ValueRef Square(Pattern& p, ValueRef v) {
  return p.Or({p.Op("Pow", {v, p.ScalarNear("two", 2.0)}), p.Op("Mul", {v, v})});
}

bool IsZero(const ConstantData& c, std::string* why) {
  std::optional<std::vector<double>> values = c.AsDoubles();
  if (values && values->size() == 1 && (*values)[0] == 0.0) return true;
  if (why) *why = "is not the scalar 0";
  return false;
}
Variance BuildVariance(Pattern& p) {
  ValueRef x = p.Any("x");
  ValueRef mean = MeanOf(p, x, "mean");
  ValueRef mean_kept = KeptAxes(p, mean, "mean_kept");
  ValueRef d = p.Op("Sub", {x, mean_kept});
  // E[(x - mean)^2], or E[x^2] - E[x]^2 (Flax's fast variance) with or without its
  // max(0, .) clamp: the same variance in exact arithmetic (see fix-layernorm in docs/passes.md).
  ValueRef central = MeanOf(p, Square(p, d), "var_mean");
  ValueRef moments = p.Op("Sub", {MeanOf(p, Square(p, x), "var_mean"), Square(p, mean)});
  ValueRef clamped = p.Op("Max", {moments, p.Const("zero", IsZero)}).Commutative();
  ValueRef var = p.Or({central, clamped, moments}, "var");
  return {x, d, mean, mean_kept, KeptAxes(p, var, "var_kept")};
}

ValueRef ScalarConst(Pattern& p, std::string capture) {
  return p.Const(std::move(capture), [](const ConstantData& c, std::string* why) {
    if (c.is_scalar()) return true;
    if (why) *why = absl::StrCat("has ", c.num_elements(), " elements, wants a scalar");
    return false;
  });
}

// (x - mean) / sqrt(var + eps), written as `division`.
OpRef BuildStandardized(Pattern& p, Division division) {
  Variance v = BuildVariance(p);
  OpRef var_eps = p.Op("Add", {v.var_kept, ScalarConst(p, "eps")}).Commutative();
  // The numerator is d itself or a second Sub(x, mean) (exporters duplicate it).
  ValueRef numerator = p.Or({v.d, p.Op("Sub", {v.x, v.mean_kept})});
  switch (division) {
    case Division::kDiv: return p.Op("Div", {numerator, p.Op("Sqrt", {var_eps})});
    case Division::kMulReciprocal:
      return p.Op("Mul", {numerator, p.Op("Reciprocal", {p.Op("Sqrt", {var_eps})})}).Commutative();
    case Division::kMulOneOver:
      return p.Op("Mul", {numerator, p.Op("Div", {p.ScalarNear("one", 1.0), p.Op("Sqrt", {var_eps})})}).Commutative();
    case Division::kMulRsqrt:
      return p.Op("Mul", {numerator, p.Op("Pow", {var_eps, p.ScalarNear("minus_half", -0.5)})}).Commutative();
  }
  return {nullptr, -1};
}

// 1 / sqrt(var + eps): Reciprocal(Sqrt(.)), Div(1, Sqrt(.)) or Pow(., -0.5).
ValueRef InverseStd(Pattern& p, const Variance& v) {
  OpRef var_eps = p.Op("Add", {v.var_kept, ScalarConst(p, "eps")}).Commutative();
  ValueRef std_dev = p.Op("Sqrt", {var_eps});
  return p.Or({p.Op("Reciprocal", {std_dev}), p.Op("Div", {p.ScalarNear("one", 1.0), std_dev}),
               p.Op("Pow", {var_eps, p.ScalarNear("minus_half", -0.5)})});
}

// Keras / tf2onnx: y = x * inv + (beta - mean * inv), inv = rsqrt(var + eps) [* gamma].
std::unique_ptr<RewriteRule> MakeKerasRule(const DecomposeWhen& decompose) {
  Pattern p("layernorm-keras");
  Variance v = BuildVariance(p);
  ValueRef rsqrt = InverseStd(p, v);
  ValueRef inv = p.Or({p.Op("Mul", {rsqrt, p.Any("scale")}).Commutative(), rsqrt});
  // beta - mean * inv (tf.nn.batch_normalization), or -mean * inv + beta (Keras 3)
  ValueRef shifted =
      p.Or({p.Op("Sub", {p.Any("bias"), p.Op("Mul", {v.mean_kept, inv}).Commutative()}),
            p.Op("Add", {p.Op("Mul", {p.Op("Neg", {v.mean_kept}), inv}).Commutative(), p.Any("bias")}).Commutative()});
  OpRef root = p.Op("Add", {p.Op("Mul", {v.x, inv}).Commutative(), shifted}).Commutative();
  return MakeRule("layernorm-keras", std::move(p), root.id(), 3, decompose);
}

// Flax (jax2tf + tf2onnx): the scale multiplies the inverse standard deviation first,
//   y = (x - mean') * (rsqrt(var' + eps) * scale) [+ bias]
std::unique_ptr<RewriteRule> MakeScaledInverseRule(bool with_bias, const DecomposeWhen& decompose) {
  std::string name = with_bias ? "layernorm-scaled-inverse-affine" : "layernorm-scaled-inverse";
  Pattern p(name);
  Variance v = BuildVariance(p);
  ValueRef inv = p.Op("Mul", {InverseStd(p, v), p.Any("scale")}).Commutative();
  ValueRef numerator = p.Or({v.d, p.Op("Sub", {v.x, v.mean_kept})});
  OpRef n = p.Op("Mul", {numerator, inv}).Commutative();
  if (!with_bias) return MakeRule(name, std::move(p), n.id(), 2, decompose);
  OpRef root = p.Op("Add", {n, p.Any("bias")}).Commutative();
  return MakeRule(name, std::move(p), root.id(), 3, decompose);
}

// ---- custom ops named like a LayerNorm -----------------------------------------------

class CustomNamedLayerNormRule : public NodeRule<Plan> {
 public:
  CustomNamedLayerNormRule(std::vector<std::string> names, DecomposeWhen decompose)
      : NodeRule("layernorm-custom-op", /*root_op=*/"", "", /*benefit=*/4),
        names_(std::move(names)),
        decompose_(std::move(decompose)) {}

 protected:
  Verdict<Plan> Check(Node* node, RewriteFacts&) const override {
    if (!IsCustomNamedLayerNorm(*node, names_)) return Refuse("");
    Model* model = node->graph()->model();
    if (model && model->FindFunction(node->domain(), node->op_type(), node->proto().overload())) {
      return Refuse("calls a model-local function: judged by its body, not its name");
    }
    size_t n_inputs = node->num_inputs();
    while (n_inputs > 0 && !node->input(n_inputs - 1)) --n_inputs;
    if (n_inputs < 1 || n_inputs > 3 || !node->input(0) || (n_inputs == 3 && !node->input(1))) {
      return Refuse(absl::StrCat("has ", n_inputs, " inputs; wants x[, scale[, bias]]"));
    }
    for (size_t i = 1; i < node->num_outputs(); ++i) {
      if (node->output(i) && node->output(i)->HasUsers()) {
        return Refuse(absl::StrCat("its output ", i, " is used; only the normalized output is understood"));
      }
    }
    Plan plan;
    plan.x = node->input(0);
    plan.elem_type = ElementType(plan.x);
    if (plan.elem_type == onnx::TensorProto::DOUBLE) return Refuse("x is double; LayerNormalization computes in float");
    if (plan.elem_type != 0 && !IsLayerNormType(plan.elem_type)) return Refuse("x is not a floating-point tensor");
    std::string why;
    if (!ReadEpsilon(*node, &plan.epsilon, &why) || !ReadAxis(*node, Rank(plan.x), &plan.axis, &why)) {
      return Refuse(std::move(why));
    }
    plan.scale = n_inputs >= 2 ? node->input(1) : nullptr;
    plan.bias = n_inputs >= 3 ? node->input(2) : nullptr;
    if (plan.elem_type == 0 && plan.scale) plan.elem_type = ElementType(plan.scale);  // scale has x's type
    if (!plan.scale && plan.elem_type == 0) return Refuse("no scale input and x's element type is unknown");
    plan.decompose = decompose_ && decompose_(*node);
    return plan;
  }

  Status Replace(Node* node, Plan plan, Rewriter& rw) const override {
    OS_ASSIGN_OR_RETURN(Value * y, EmitLayerNorm(rw, plan));
    std::vector<Value*> replacements(node->num_outputs(), nullptr);
    replacements[0] = y;
    return rw.ReplaceNode(node, replacements);
  }

 private:
  static bool ReadEpsilon(const Node& n, float* eps, std::string* why) {
    for (const char* name : {"epsilon", "eps"}) {
      if (const Attribute* a = n.FindAttribute(name)) {
        if (a->type() == onnx::AttributeProto::FLOAT) *eps = a->f();
        else if (a->type() == onnx::AttributeProto::INT) *eps = static_cast<float>(a->i());
        else return Refuse(why, absl::StrCat("attribute '", name, "' is not a number"));
        return true;
      }
    }
    return true;  // LayerNormalization's default, 1e-5
  }
  static bool ReadAxis(const Node& n, int64_t rank, int64_t* axis, std::string* why) {
    for (const char* name : {"axis", "begin_norm_axis"}) {
      if (const Attribute* a = n.FindAttribute(name)) {
        *axis = a->i(-1);
        return true;
      }
    }
    if (const Attribute* a = n.FindAttribute("axes")) {
      Reduction r;
      r.axes = a->ints();
      r.all = r.axes.empty();
      auto first = TrailingAxis(r, rank, why);
      if (!first) return false;
      *axis = *first;
    }
    return true;
  }

  std::vector<std::string> names_;
  DecomposeWhen decompose_;
};

}  // namespace

bool IsCustomNamedLayerNorm(const Node& n, const std::vector<std::string>& names) {
  std::string_view domain = CanonicalDomain(n.domain());
  if (domain.empty() || domain == "ai.onnx.ml") return false;
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& name) { return absl::EqualsIgnoreCase(n.op_type(), name); });
}

const std::vector<std::string>& DefaultCustomNames() {
  static const std::vector<std::string> names = {
      "Custom_LayerNorm",   "CustomLayerNorm", "CustomLayerNormalization", "LayerNorm",
      "LayerNormalization", "LayerNormPlugin", "LayerNormalizationPlugin", "layer_norm",
  };
  return names;
}

std::vector<std::unique_ptr<RewriteRule>> MakeFusionRules(std::vector<std::string> custom_names,
                                                          DecomposeWhen decompose) {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  rules.push_back(std::make_unique<CustomNamedLayerNormRule>(std::move(custom_names), decompose));
  rules.push_back(MakeKerasRule(decompose));
  rules.push_back(MakeScaledInverseRule(/*with_bias=*/true, decompose));
  rules.push_back(MakeScaledInverseRule(/*with_bias=*/false, decompose));
  for (Division division : kDivisions) {
    std::string form = DivisionName(division);
    {  // y = Add(Mul(n, scale), bias)
      Pattern p("layernorm-" + form + "-affine");
      OpRef n = BuildStandardized(p, division);
      OpRef root = p.Op("Add", {p.Op("Mul", {n, p.Any("scale")}).Commutative(), p.Any("bias")}).Commutative();
      std::string name = p.name();
      rules.push_back(MakeRule(name, std::move(p), root.id(), 3, decompose));
    }
    {  // y = Mul(n, scale)
      Pattern p("layernorm-" + form + "-scale");
      OpRef n = BuildStandardized(p, division);
      OpRef root = p.Op("Mul", {n, p.Any("scale")}).Commutative();
      std::string name = p.name();
      rules.push_back(MakeRule(name, std::move(p), root.id(), 2, decompose));
    }
    {  // y = n
      Pattern p("layernorm-" + form);
      OpRef n = BuildStandardized(p, division);
      std::string name = p.name();
      rules.push_back(MakeRule(name, std::move(p), n.id(), 1, decompose));
    }
  }
  return rules;
}

}  // namespace onnxsurgeon::layernorm
