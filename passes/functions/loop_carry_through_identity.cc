// loop-carry-through-identity: where a Loop body returns a loop-carried input unchanged (the
// body output is the body input itself, as tf2onnx writes the weights a tf.while_loop
// carries), returns Identity(input) instead. OpenVINO 2026.4 counts each such value twice
// and refuses the Loop ('loop body graph canonical inputs size (11), does not match the sum
// of loop carried dependencies and two mandatory inputs (8)'); with the Identity it converts
// and matches (tf_keras_lstm_op13_b1, 3e-8; targets/probes/loop_models.py).
//
// Exact: Identity returns its input, so every iteration carries the same value.
//
// Options: none.
//
// Given:  %y, %w_final = Loop(%n, %c, %h0, %w) <body: (%i, %cond, %h, %wc) => (%cond, %h2, %wc) {...}>
// Result: the body returns (%cond, %h2, %wt) with %wt = Identity(%wc)
#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// The body, and the indices of its outputs that are its own carried inputs.
struct ThroughPlan {
  Graph* body = nullptr;
  std::vector<size_t> outputs;
};

class CarryThroughIdentity : public NodeRule<ThroughPlan> {
 public:
  CarryThroughIdentity() : NodeRule("loop-carry-through-identity", "Loop") {}

 protected:
  Verdict<ThroughPlan> Check(Node* root, RewriteFacts&) const override {
    std::vector<Graph*> subs = root->subgraphs();
    if (subs.size() != 1) return Refuse("it has no body");
    ThroughPlan plan{subs[0], {}};
    const auto& in = plan.body->inputs();
    const auto& out = plan.body->outputs();
    // Body inputs: iteration, condition, carried...; outputs: condition, carried..., scans.
    for (size_t k = 2; k < in.size() && k - 1 < out.size(); ++k)
      if (in[k] && in[k] == out[k - 1]) plan.outputs.push_back(k - 1);
    if (plan.outputs.empty()) return Refuse("its body returns no carried input unchanged");
    return plan;
  }

  Status Replace(Node*, ThroughPlan plan, Rewriter& rw) const override {
    rw.SetInsertionPointAtEnd(plan.body);
    for (size_t i : plan.outputs) {
      Value* carried = plan.body->outputs()[i];
      Value* through = rw.Op("Identity", {carried});
      if (carried->has_type()) *through->mutable_info()->mutable_type() = *carried->type();
      rw.SetGraphOutput(plan.body, i, through);
    }
    return absl::OkStatus();
  }
};

class LoopCarryThroughIdentityPass : public PatternPass {
 public:
  LoopCarryThroughIdentityPass() { AddRule(std::make_unique<CarryThroughIdentity>()); }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLoopCarryThroughIdentityPass(const PassOptions&) {
  return std::make_unique<LoopCarryThroughIdentityPass>();
}

}  // namespace onnxsurgeon::passes
