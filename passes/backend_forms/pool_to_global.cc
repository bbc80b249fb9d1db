// pool-to-global: replaces an AveragePool whose one window covers its whole input by
// GlobalAveragePool, for runtimes that refuse a kernel larger than the input: transformers'
// EfficientNet pooler is AvgPool2d(hidden_dim, ceil_mode=True), a 320x320 kernel over a 2x2
// map, which OpenVINO 2026.4 refuses ('Kernel after dilation has size (dim: 320) larger than
// the data shape after padding (dim: 2)'; targets/probes/pool_models.py).
//
// Exact: with no pads and dilations 1, a window starting at 0 is clipped to the input, and
// the divisor is the clipped window's size (count_include_pad counts pads only, and there
// are none), so the one output per channel is the mean of the whole input, which is
// GlobalAveragePool. There is one output position per spatial axis when the kernel equals
// the dim, or when ceil_mode=1 and kernel - dim < stride (ceil((dim - kernel) / stride) + 1
// = 1). Refused otherwise (pads, dilations, auto_pad, a dim not static, a smaller kernel, or
// a larger one without ceil_mode, which the spec gives no output for).
//
// Options: none.
//
// Given:  %y = AveragePool<kernel_shape=[320,320], strides=[320,320], ceil_mode=1>(%x)
//         %x: float[1,320,2,2]
// Result: %y = GlobalAveragePool(%x)
#include "core/analysis/type_facts.h"
#include "core/pass/pattern_pass.h"
#include "core/rewrite/rule.h"
#include "passes/backend_forms/whole_input_pool.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class WholeInputAveragePoolRule : public NodeRule<NoPlan> {
 public:
  WholeInputAveragePoolRule() : NodeRule("whole-input-average-pool", "AveragePool", "") {}

 protected:
  Verdict<NoPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (node->num_inputs() < 1 || !node->input(0) || node->num_outputs() != 1) return Refuse("has no input");
    std::optional<std::vector<int64_t>> dims = facts.Get<TypeFacts>().Dims(node->input(0));
    if (!dims) return Refuse("its input's rank is unknown (run infer-shapes first)");
    std::string why = WhyNotWholeInputAveragePool(*node, *dims);
    if (!why.empty()) return Refuse(why);
    return NoPlan{};
  }

  Status Replace(Node* node, NoPlan, Rewriter& rw) const override {
    return rw.ReplaceNode(node, {rw.Op("GlobalAveragePool", {node->input(0)})});
  }
};

class PoolToGlobalPass : public PatternPass {
 public:
  PoolToGlobalPass() { AddRule(std::make_unique<WholeInputAveragePoolRule>()); }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "AveragePool");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreatePoolToGlobalPass(const PassOptions&) {
  return std::make_unique<PoolToGlobalPass>();
}

}  // namespace onnxsurgeon::passes
