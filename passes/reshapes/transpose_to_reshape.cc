// transpose-to-reshape: writes a Transpose that only moves dims of size 1 as a Reshape, for
// runtimes that mistranslate such Transposes: nncase 1.9 computes Transpose(Squeeze(Y))
// after an LSTM wrong (torch's batch_first LSTM export, [24,1,16] -> [1,24,16]: off by
// 0.73; measured here) and gets the same move right as a Reshape.
//
// Exact: a permutation that keeps the dims of size above 1 in their order leaves every
// element at the same row-major offset; it only changes where the unit dims stand, which is
// what Reshape to the output shape does. The input's shape must be known with static unit
// dims; at most one other dim may be dynamic (it becomes the Reshape's -1), and no dim may
// be 0 (a 0 in Reshape's shape copies a dim).
//
// Given:  %y = Transpose<perm = [1, 0, 2]>(%x)          %x: float[24,1,16]
// Result: %y = Reshape(%x, [1,24,16])
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes {
namespace {

// The plan: Reshape's shape input.
using TargetShape = std::vector<int64_t>;

class TransposeToReshapePass : public PatternPass {
 public:
  TransposeToReshapePass() {
    pattern::Pattern p("transpose-to-reshape");
    pattern::OpRef t = p.Op("Transpose", {p.Any("x")});
    AddRule(std::make_unique<PatternRule<TargetShape>>(
        "transpose-to-reshape", std::move(p), t.id(),
        [](const pattern::Match& m) -> Verdict<TargetShape> {
          std::string why;
          auto shape = reshapes::TransposeAsReshape(*m.root(), &why);
          return Verdict<TargetShape>::From(std::move(shape), why);
        },
        [](const pattern::Match& m, const TargetShape& shape, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* y = rw.Op("Reshape", {m.value("x"), rw.Int64s(shape)});
          const Value* old = m.root()->output(0);
          if (old->has_type()) *y->mutable_info()->mutable_type() = old->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Transpose");  // the input's shape decides
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateTransposeToReshapePass(const PassOptions&) {
  return std::make_unique<TransposeToReshapePass>();
}

}  // namespace onnxsurgeon::passes
