// rewrite-reciprocal: replaces Reciprocal(x) by Div(1, x), for runtimes without Reciprocal
// (nncase 1.9 has no importer for it, measured). RMSNorm and rsqrt exports write
// Reciprocal(Sqrt(.)).
//
// Exact: Reciprocal is defined as 1/x, and IEEE division of 1 by x is that value
// correctly rounded, the same as Div computes (tests/python/test_targets.py compares both
// with onnxruntime). The 1 has x's element type; float16/bfloat16/float/double only.
// Later passes of the same pipeline may not bring Reciprocal back (ForbiddenOps).
//
// Options: none.
//
// Before:  y = Reciprocal(x)
// After:   y = Div(1.0, x)
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class RewriteReciprocalPass : public PatternPass {
 public:
  RewriteReciprocalPass() {
    pattern::Pattern p("reciprocal");
    pattern::OpRef r = p.Op("Reciprocal", {p.Any("x")});
    // The plan: x's element type, a float type.
    AddRule(std::make_unique<PatternRule<int32_t>>(
        "reciprocal", std::move(p), r.id(),
        [](const pattern::Match& m) -> Verdict<int32_t> {
          int32_t type = ElementType(m.value("x"));
          if (lowering::IsFloatType(type)) return type;
          return Refuse(lowering::WhyNotFloat(*m.root(), m.value("x")));
        },
        [](const pattern::Match& m, int32_t type, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* x = m.value("x");
          OS_ASSIGN_OR_RETURN(Value * one, rw.ScalarFloat(1.0f, type));
          return std::vector<Value*>{rw.Op("Div", {one, x})};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("Reciprocal", "rewrite-reciprocal");
    lowering::InferTypesIfNeeded(model, "Reciprocal");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteReciprocalPass(const PassOptions&) {
  return std::make_unique<RewriteReciprocalPass>();
}

}  // namespace onnxsurgeon::passes
