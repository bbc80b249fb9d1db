// simplify-reductions: reductions that need no reduction (passes/reductions/rules.h).
//
//   sum-to-mean       ReduceSum(x) * (1/N) or / N  -> ReduceMean(x)   (N static)
//   reduce-over-ones  Reduce{Mean,Max,Min,Sum,Prod} over static size-1 axes -> x | Squeeze
//   arg-over-one      ArgMax/ArgMin over a static size-1 axis -> zeros
//   softmax-over-one  Softmax/LogSoftmax over a static size-1 axis -> ones / zeros, only
//                     with assume-finite=true (NaN or infinite inputs give NaN, not 1)
//
// Options:
//   assume-finite=false  fold Softmax/LogSoftmax over one element too: exact for finite
//                        inputs; a NaN or infinite input would give 1 (0) instead of NaN.
//
// Types and shapes come from the model and, when a candidate's input has none, onnx
// shape inference in memory (no value_info is added).
//
// Before:  s = ReduceSum<keepdims=0>(x[2,8], [-1]); m = Mul(s, 0.125); r = ReduceMax<axes=[1]>(y[4,1])
// After:   m = ReduceMean<keepdims=0>(x, [-1]); r = y
#include <algorithm>

#include "core/analysis/type_facts.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/reductions/rules.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

bool IsCandidate(const Node& n) {
  const auto& ops = reductions::RootOps();
  return n.domain().empty() && std::find(ops.begin(), ops.end(), n.op_type()) != ops.end();
}

class SimplifyReductionsPass : public PatternPass {
 public:
  explicit SimplifyReductionsPass(bool assume_finite) {
    for (auto& rule : reductions::MakeRules(assume_finite)) AddRule(std::move(rule));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    auto needs = [](const Model& m) {
      for (Node* n : m.graph().AllNodesRecursive())
        if (IsCandidate(*n) && n->input(0) && !ShapeOf(n->input(0))) return true;
      return false;
    };
    TypeRequest request;
    request.infer.record_value_info = false;
    (void)TypeFacts::Ensure(model, needs, request);  // without shapes the rules refuse, saying why
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateSimplifyReductionsPass(const PassOptions& o) {
  return std::make_unique<SimplifyReductionsPass>(o.Bool("assume-finite"));
}

}  // namespace onnxsurgeon::passes
