// fuse-gelu: replaces the GELU subgraphs exporters write by the Gelu op (opset >= 20).
//
// Matches (passes/gelu/subgraph_rules.h), with any operand order and any association of the
// products:
//   exact:  x * 0.5 * (1 + Erf(x / sqrt(2)))          -> Gelu(x)
//           (also Erf(x * 0.70710678), x / 2 instead of x * 0.5, and 0.5 * (1 + erf)
//           as one factor: x * (0.5 * (1 + erf)), (x * 0.5) * (1 + erf), ...)
//   tanh:   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//                                                      -> Gelu(x, approximate="tanh")
//           with x^3 as x*x*x (any tree, the 0.044715 anywhere in it) or Pow(x, 3), and
//           Megatron's factoring sqrt(2/pi) * x * (1 + 0.044715 * x * x).
// The irrational constants must equal sqrt 2, sqrt(2/pi), 0.044715 to the precision of
// their own type (fp32 within 1e-4 relative, so 0.79788456 and 1.41421 pass and 0.8 or
// 1.5 do not; fp16 and bf16 constants within their rounding); 0.5, 1, 2 and the exponent
// 3 must be exact. Every intermediate must feed only the match.
// Refusals (shown by --debug-patterns): a wrong constant, an intermediate used outside
// the match, a default-domain opset below 20 (Gelu does not exist there: convert the
// opset first), an element type Gelu does not take.
//
// After rewrite-gelu in the same pipeline (Gelu forbidden, core/pass/pass.h) it does nothing.
//
// Options: none.
//
// Before:  d = Div(x, 1.4142135)  e = Erf(d)  a = Add(e, 1.0)  m = Mul(x, a)  y = Mul(m, 0.5)
// After:   y = Gelu(x)
#include "absl/strings/str_cat.h"
#include "core/ir/dtypes.h"
#include "core/pass/pattern_pass.h"
#include "passes/gelu/subgraph_rules.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using gelu::GeluKind;

Verdict<> GeluAllowed(const pattern::Match& m) {
  int64_t opset = m.root()->graph()->OpsetVersion("");
  if (opset < 20)
    return Refuse(absl::StrCat("Gelu needs opset >= 20 and the model imports ", opset, " (convert the opset first)"));
  const Value* x = m.value("x");
  if (x->has_type() && x->type()->has_tensor_type() && x->type()->tensor_type().elem_type() != 0) {
    int32_t t = x->type()->tensor_type().elem_type();
    if (t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::FLOAT16 && t != onnx::TensorProto::DOUBLE &&
        t != onnx::TensorProto::BFLOAT16) {
      return Refuse(absl::StrCat("Gelu does not take element type ", DataTypeName(t)));
    }
  }
  return Matched();
}

class FuseGeluPass : public PatternPass {
 public:
  FuseGeluPass() {
    gelu::AddGeluSubgraphRules(
        *this, "gelu", {GeluKind::kExact, GeluKind::kTanh},
        [](GeluKind kind, Value* x, const pattern::Match& m, Rewriter& rw) -> StatusOr<Value*> {
          std::vector<onnx::AttributeProto> attrs;
          if (kind == GeluKind::kTanh) attrs.push_back(Rewriter::AttrString("approximate", "tanh"));
          return rw.Op("Gelu", {x}, std::move(attrs));
        },
        GeluAllowed);
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    if (context.IsForbidden("Gelu")) {  // an earlier pass of this pipeline lowered Gelu on purpose
      if (context.debug_patterns)
        context.debug_patterns(absl::StrCat("fuse-gelu: skipped: Gelu was removed by '", context.ForbiddenBy("Gelu"),
                                            "' earlier in this pipeline"));
      return PassResult{};
    }
    OS_ASSIGN_OR_RETURN(PassResult raw, PatternPass::Run(model, context));
    return gelu::MergeFormCounts(raw);
  }

 private:
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseGeluPass(const PassOptions&) { return std::make_unique<FuseGeluPass>(); }

}  // namespace onnxsurgeon::passes
