// lower-contrib-ops: onnxruntime-only ops (com.microsoft, and the default-domain ops
// onnxruntime registers itself: SimplifiedLayerNormalization, LayerNormalization below
// opset 17) lowered to standard ONNX at the model's opset, for runtimes other than
// onnxruntime. The rules live in passes/contrib/, one per op (see passes/contrib/common.h);
// each new node carries its rule's name.
//
// Options:
//   ops=A;B           only these op types (default: every op the pass lowers)
//   dequantize=false  MatMulNBits: float weights (dequantized by the pass) instead of int4
//                     DequantizeLinear; the only lowering below opset 21
//
// Ops with no rule here (QOrderedMatMul, QLinearSoftmax, QGemm...) and nodes a
// rule refused stay as they are; the result names each, with the rule's reason, as
// "left: <domain>.<op>[: reason]" counts (these do not mark the model changed). The
// com.microsoft opset import goes when no node uses it any more.
//
// Before:  y = com.microsoft.FastGelu(x, b)                     (opset 17)
// After:   s = Add(x, b)   y = 0.5 s (1 + Tanh(0.7978846 (s + 0.044715 s^3)))
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/pass/pattern_pass.h"
#include "core/rewrite/greedy_driver.h"
#include "core/shape/propagate.h"
#include "passes/contrib/common.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// An onnxruntime-only op: com.microsoft, or one onnxruntime registers in the default domain.
bool IsContribOp(const Node& node) {
  if (node.domain() == contrib::kMsDomain) return true;
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  if (node.op_type() == "SimplifiedLayerNormalization" || node.op_type() == "SkipSimplifiedLayerNormalization")
    return true;
  return node.op_type() == "LayerNormalization" && node.graph()->OpsetVersion("") < 17;
}

class LowerContribOpsPass : public Pass {
 public:
  LowerContribOpsPass(std::vector<std::string> ops, bool dequantize) : ops_(std::move(ops)), dequantize_(dequantize) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    std::vector<contrib::ContribRule> all = contrib::MakeNormRules(!context.IsForbidden("LayerNormalization"));
    for (auto& r : contrib::MakeActivationRules(!context.IsForbidden("Gelu"))) all.push_back(std::move(r));
    for (auto& r : contrib::MakeMatMulRules(dequantize_)) all.push_back(std::move(r));
    for (auto& r : contrib::MakeRotaryRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeAttentionRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeGqaRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeFusedConvRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQuantRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeQLinearRules()) all.push_back(std::move(r));
    for (auto& r : contrib::MakeEmbedRules(!context.IsForbidden("LayerNormalization"))) all.push_back(std::move(r));
    std::vector<const RewriteRule*> rules;
    for (const auto& r : all)
      if (ops_.empty() || std::find(ops_.begin(), ops_.end(), r.op_type) != ops_.end()) rules.push_back(r.rule.get());

    GreedyOptions options = WithDebugPatterns({}, context);
    options.top_down = true;  // producers first: a lowered op's outputs are typed for its users
    absl::flat_hash_map<const Node*, std::string> why_left;
    auto debug = std::move(options.explain);
    options.explain = [&](const std::string& rule, const Node& node, const std::string& why) {
      if (!why.empty()) why_left[&node] = why;
      if (debug) debug(rule, node, why);
    };
    // Rounds: onnx inference and the op table type the model once per run, when the
    // contrib ops upstream of a node still hide its input's type. A round that lowered
    // something while some node waited for a type is followed by another, with fresh facts.
    PassResult result;
    bool waiting = true;
    while (waiting) {
      why_left.clear();
      OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, rules, options));
      for (const auto& [name, n] : counts) result.Count(name, n);
      waiting = !counts.empty() && std::any_of(why_left.begin(), why_left.end(), [](const auto& entry) {
        return entry.second.find(" unknown") != std::string::npos;
      });
      // The next round's facts see the types of what this round lowered through onnx
      // inference too, in memory only (the local rules alone walk the nodes once in order,
      // and the optimizer's graphs are not always sorted).
      if (waiting) {
        InferShapesOptions infer;
        infer.record_value_info = false;
        if (!EnsureShapes(model, infer, [](const Model&) { return true; }).ok()) result.Count("shape-inference-failed");
      }
    }

    // What stays, named (not a change).
    std::vector<Node*> nodes = model.graph().AllNodesRecursive();
    for (auto& f : model.functions())
      for (Node* n : f->body().AllNodesRecursive()) nodes.push_back(n);
    bool ms_used = false;
    for (const Node* n : nodes) {
      ms_used = ms_used || n->domain() == contrib::kMsDomain;
      if (!IsContribOp(*n)) continue;
      std::string key = absl::StrCat("left: ", n->domain().empty() ? "ai.onnx" : n->domain(), ".", n->op_type());
      if (auto it = why_left.find(n); it != why_left.end()) absl::StrAppend(&key, ": ", it->second);
      else if (std::find(contrib::LoweredOpTypes().begin(), contrib::LoweredOpTypes().end(), n->op_type()) ==
               contrib::LoweredOpTypes().end())
        absl::StrAppend(&key, ": no lowering");
      else if (!ops_.empty()) absl::StrAppend(&key, ": not in ops=");
      ++result.counts[key];
    }
    if (result.changed && !ms_used) {  // the com.microsoft import goes with its last node
      auto* imports = model.mutable_proto().mutable_opset_import();
      for (int i = imports->size() - 1; i >= 0; --i) {
        if (imports->Get(i).domain() != contrib::kMsDomain) continue;
        imports->DeleteSubrange(i, 1);
        result.Count("opset-imports-removed");
      }
    }
    return result;
  }

 private:
  std::vector<std::string> ops_;
  bool dequantize_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLowerContribOpsPass(const PassOptions& o) {
  return std::make_unique<LowerContribOpsPass>(o.List("ops"), o.Bool("dequantize"));
}

}  // namespace onnxsurgeon::passes
