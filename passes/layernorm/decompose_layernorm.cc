// decompose-layernorm: lowers every LayerNormalization to standard ops, for targets that
// do not have it (opset < 17 runtimes, accelerators whose LayerNorm kernel is broken).
//
// Emits, with ReduceMean axes as an attribute below opset 18 and as an input from 18:
//   mean = ReduceMean(x)  d = Sub(x, mean)  var = ReduceMean(Pow(d, 2))
//   y = Add(Mul(Div(d, Sqrt(Add(var, epsilon))), scale), bias)
// wrapped in Casts to the stash type when x is float16/bfloat16 (the precision
// LayerNormalization itself computes in). Mean and InvStdDev outputs are provided when
// used. A scale of ones and a bias of zeros are left out.
//
// Before:  y = LayerNormalization<axis=-1, epsilon=1e-5>(x, w, b)
// After:   the chain above.
// Later passes of the same pipeline do not fuse LayerNormalization back (ForbiddenOps,
// core/pass/pass.h): `decompose-layernorm,simplify` ends without one at any opset.
#include "core/pass/pattern_pass.h"
#include "core/rewrite/greedy_driver.h"
#include "passes/layernorm/decompose_rule.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class DecomposeLayerNormPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("LayerNormalization", "decompose-layernorm");  // later fusions keep it decomposed
    // The emitted constants take x's element type: infer it where no value_info records it
    // (a model whose types were never inferred, as onnxruntime's optimizer writes them).
    lowering::InferTypesIfNeeded(model, "LayerNormalization");
    auto rule = layernorm::MakeDecomposeRule([](const Node&) { return true; });
    OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, {rule.get()}, WithDebugPatterns({}, context)));
    PassResult result;
    for (const auto& [name, n] : counts) result.Count(name, n);
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDecomposeLayerNormPass(const PassOptions&) {
  return std::make_unique<DecomposeLayerNormPass>();
}

}  // namespace onnxsurgeon::passes
