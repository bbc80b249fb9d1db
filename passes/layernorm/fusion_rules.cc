#include "passes/layernorm/fusion_rules.h"

#include "passes/layernorm/fusion_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/analysis/type_facts.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/rewrite/facts.h"
#include "core/shape/symbolic.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"
#include "passes/reductions/mean.h"

namespace onnxsurgeon::layernorm {
namespace {

using namespace fusion;  // NOLINT: the plan vocabulary these rules are written in
using lowering::Rank;
using pattern::Match;
using pattern::OpRef;
using pattern::Pattern;
using pattern::ValueRef;

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
  if (!CheckMeans(m, *mean, *var, plan.x, facts.Get<TypeFacts>().Symbolic(), why)) return std::nullopt;
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

}  // namespace

std::vector<std::unique_ptr<RewriteRule>> MakeFusionRules(std::vector<std::string> custom_names,
                                                          DecomposeWhen decompose) {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  rules.push_back(MakeCustomNamedRule(std::move(custom_names), decompose));
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
