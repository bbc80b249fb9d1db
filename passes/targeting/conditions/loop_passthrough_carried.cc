// loop-passthrough-carried (on Loop): its body returns a loop-carried input unchanged (the
// body output is the body input itself), as tf2onnx writes the weights a tf.while_loop
// carries. OpenVINO 2026.4 counts each such value twice and refuses the Loop ('loop body
// graph canonical inputs size (11), does not match ... (8)'); reading the value from the
// enclosing graph instead, or returning Identity(input), converts and matches
// (targets/probes/loop_models.py); loop-carry-through-identity writes the Identity.
#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class LoopPassthroughCarriedCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Loop")) return false;
    for (const Graph* body : n.subgraphs()) {
      const auto& in = body->inputs();
      const auto& out = body->outputs();
      // Body inputs: iteration, condition, carried...; outputs: condition, carried..., scans.
      int count = 0;
      std::string first;
      for (size_t k = 2; k < in.size() && k - 1 < out.size(); ++k) {
        if (!in[k] || in[k] != out[k - 1]) continue;
        if (count++ == 0) first = in[k]->name();
      }
      if (count == 0) continue;
      *detail = absl::StrCat(count, " carried value(s) returned unchanged (first: '", first, "')");
      return true;
    }
    return false;
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<LoopPassthroughCarriedCondition>();
}

}  // namespace

extern const ConditionKind kLoopPassthroughCarried = {
    "loop-passthrough-carried", "loop-passthrough-carried",
    "(on Loop) its body returns a loop-carried input unchanged (the body output is the input itself)",
    "loop-carry-through-identity", Parse};

}  // namespace onnxsurgeon::target
