// rewrite-gelu: lowers Gelu (opset 20) to standard ops, for targets without Gelu.
//
// Each Gelu(x) becomes the form `to` names, constants in x's element type:
//   to=erf      0.5 * x * (1 + Erf(x / sqrt(2)))                         (default)
//   to=tanh     0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//   to=sigmoid  x * Sigmoid(1.702 * x)
// A Gelu(approximate="tanh") is the tanh form by definition: to=erf and to=tanh both emit
// the tanh form for it, exactly. to=tanh and to=sigmoid on an exact Gelu, and to=sigmoid
// on a tanh Gelu, are APPROXIMATIONS, used only when asked for. Max abs error, measured in
// fp32 with onnxruntime on 2,000,001 evenly spaced points of [-10, 10] by
// bench/gelu_error.py and checked against the bounds in brackets by tests/python/test_gelu.py:
//   tanh form     vs exact GELU   4.74e-4  [5e-4]
//   sigmoid form  vs exact GELU   2.03e-2  [2.1e-2]
//   sigmoid form  vs tanh GELU    2.07e-2  [2.1e-2]
// (the exact lowerings: 4.5e-7 and 8.3e-7, fp32 rounding of outputs up to 10). Outside
// [-10, 10] the approximations' own error only shrinks (every form tends to x, or to 0);
// fp32 rounding grows with |x| as for any form.
// For a target without Erf either, follow with rewrite-erf (or use to=tanh/sigmoid).
//
// Options:
//   to=erf|tanh|sigmoid   the form to emit (default erf: exact)
//   subgraphs=false       also rewrite GELU subgraphs (the forms fuse-gelu matches) into
//                         `to`: an Erf subgraph when to is tanh or sigmoid, a tanh
//                         subgraph when to is sigmoid (for targets without Erf or Tanh)
// A Gelu whose x has an unknown or non-float element type, or an unknown `approximate`,
// is refused (--debug-patterns says why); it stays as it is.
//
// Before:  y = Gelu(x)
// After:   d = Div(x, 1.4142135)  e = Erf(d)  a = Add(e, 1)  h = Mul(x, 0.5)  y = Mul(h, a)
#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "passes/gelu/subgraph_rules.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/gelu.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using gelu::GeluKind;

enum class Target { kErf, kTanh, kSigmoid };

constexpr float kSigmoidScale = 1.702f;  // x * sigmoid(1.702 x): Hendrycks & Gimpel 2016

StatusOr<Value*> EmitForm(Rewriter& rw, Value* x, int32_t elem_type, GeluKind kind, Target to) {
  if (to == Target::kSigmoid) {
    OS_ASSIGN_OR_RETURN(Value * scale, rw.ScalarFloat(kSigmoidScale, elem_type));
    return rw.Op("Mul", {x, rw.Op("Sigmoid", {rw.Op("Mul", {x, scale})})});
  }
  bool tanh = to == Target::kTanh || kind == GeluKind::kTanh;
  return lowering::EmitGelu(rw, x, elem_type, tanh ? lowering::GeluForm::kTanh : lowering::GeluForm::kErf);
}

class RewriteGeluPass : public PatternPass {
 public:
  RewriteGeluPass(Target to, bool subgraphs) : to_(to) {
    pattern::Pattern p("gelu-op");
    pattern::OpRef gelu = p.Op("Gelu", {p.Any("x")}).CaptureAttr("approximate", "approximate");
    // The plan: x's element type, a float type.
    AddRule(std::make_unique<PatternRule<int32_t>>(
        "gelu-op", std::move(p), gelu.id(),
        [](const pattern::Match& m) -> Verdict<int32_t> {
          const Attribute* a = m.attr("approximate");
          if (a && a->s() != "none" && a->s() != "tanh")
            return Refuse(absl::StrCat("unknown approximate='", a->s(), "'"));
          int32_t t = ElementType(m.value("x"));
          if (!lowering::IsFloatType(t)) return Refuse(lowering::WhyNotFloat(*m.root(), m.value("x")));
          return t;
        },
        [to](const pattern::Match& m, int32_t type, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          OS_ASSIGN_OR_RETURN(Value * y, EmitForm(rw, m.value("x"), type, KindOf(m), to));
          return std::vector<Value*>{y};
        }));
    if (!subgraphs) return;
    std::vector<GeluKind> kinds;
    if (to != Target::kErf) kinds.push_back(GeluKind::kExact);
    if (to == Target::kSigmoid) kinds.push_back(GeluKind::kTanh);
    if (kinds.empty()) return;  // to=erf: every subgraph is already an allowed form
    gelu::AddGeluSubgraphRules(
        *this, "gelu-subgraph", kinds,
        [this](GeluKind kind, Value* x, const pattern::Match& m, Rewriter& rw) -> StatusOr<Value*> {
          // The matched 1 (of 1 + erf / 1 + tanh) is in the subgraph's computation type.
          return EmitForm(rw, x, m.constant("1").data_type, kind, to_);
        });
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("Gelu", "rewrite-gelu");  // fuse-gelu later in the pipeline leaves it lowered
    lowering::InferTypesIfNeeded(model, "Gelu");
    OS_ASSIGN_OR_RETURN(PassResult raw, PatternPass::Run(model, context));
    return gelu::MergeFormCounts(raw);
  }

 private:
  static GeluKind KindOf(const pattern::Match& m) {
    const Attribute* a = m.attr("approximate");
    return a && a->s() == "tanh" ? GeluKind::kTanh : GeluKind::kExact;
  }

  Target to_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteGeluPass(const PassOptions& o) {
  const std::string& to = o.String("to");  // one of the choices passes.def declares
  Target target = to == "tanh" ? Target::kTanh : to == "sigmoid" ? Target::kSigmoid : Target::kErf;
  return std::make_unique<RewriteGeluPass>(target, o.Bool("subgraphs"));
}

}  // namespace onnxsurgeon::passes
