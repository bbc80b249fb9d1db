// RewriteBudget: a bound on rewrite steps, so a pass can be stopped cleanly after N of
// them (bisect's search for the step that changes what a model computes).
//
// A step is one rule application in the greedy driver, or one unit of work of a pass
// without rules (fold-constants: one folded node). Whoever makes steps asks exhausted()
// before each and calls Spend() after each; once the limit is reached it stops as it
// would at a fixed point, leaving a valid model. The budget rides in PassContext, so every
// pass of a pipeline (and every round of simplify) spends from the same one. With no
// limit it only counts, and remembers the last step.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace onnxsurgeon {

struct RewriteStep {
  std::string rule;                // the rule, or the pass's step ("fold-constants")
  std::string root;                // the node it was applied at (its name before the step)
  std::vector<std::string> nodes;  // the nodes the step erased or rewrote, root first
  // Each of those nodes' first output (names are optional in ONNX, values' are not), so
  // the nodes can be found again in the model before the step.
  std::vector<std::string> outputs;
};

// The name of a node's first output ("" when it has none).
template <typename NodeT>
std::string FirstOutputName(const NodeT& node) {
  for (const auto* v : node.outputs())
    if (v) return v->name();
  return "";
}

class RewriteBudget {
 public:
  // -1: no limit.
  explicit RewriteBudget(int64_t limit = -1) : limit_(limit) {}
  bool exhausted() const { return limit_ >= 0 && spent_ >= limit_; }
  void Spend(RewriteStep step) {
    ++spent_;
    last_ = std::move(step);
  }
  int64_t spent() const { return spent_; }
  int64_t limit() const { return limit_; }
  const RewriteStep& last() const { return last_; }

 private:
  int64_t limit_;
  int64_t spent_ = 0;
  RewriteStep last_;
};

}  // namespace onnxsurgeon
