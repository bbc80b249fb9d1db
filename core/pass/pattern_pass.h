// PatternPass: a pass made of rewrite rules, applied by the greedy driver to a fixed
// point. Counts per rule become the pass's result; --debug-patterns shows every miss.
#pragma once

#include <memory>
#include <vector>

#include "core/pass/pass.h"
#include "core/rewrite/greedy_driver.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon {

// `base` with the driver's misses reported to --debug-patterns when the context asks for
// them (rule, node, reason); a miss without a reason (a rule rooted at any op that saw a
// node of another kind) has nothing to say and is not reported.
GreedyOptions WithDebugPatterns(GreedyOptions base, const PassContext& context);

class PatternPass : public Pass {
 public:
  void AddRule(std::unique_ptr<RewriteRule> rule) { rules_.push_back(std::move(rule)); }
  // Runs the rules with facts of their own (built on first use).
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override;

 protected:
  // Runs the rules with `facts` the pass seeded first (RewriteFacts::Emplace: inferred
  // types, what the pipeline forbids).
  StatusOr<PassResult> RunRules(Model& model, const PassContext& context, RewriteFacts& facts);

  GreedyOptions options_;

 private:
  std::vector<std::unique_ptr<RewriteRule>> rules_;
};

}  // namespace onnxsurgeon
