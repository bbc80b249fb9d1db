// The greedy driver: applies a set of rules to a fixed point.
//
// Every node of the model (main graph, If/Loop/Scan bodies, function bodies) starts on a
// worklist. A popped node is offered to the rules whose root op it is, highest benefit
// first, then in registration order; the first that rewrites wins. The rewriter's listener
// re-queues what a rewrite touched: new nodes, users of replaced values, producers of
// values that lost a user. The driver stops when the worklist is empty or a budget
// (core/rewrite/budget.h) is spent, and fails with a clear error after max_rewrites (a
// rule set that does not converge is a bug).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/rewrite/budget.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon {

struct GreedyOptions {
  int64_t max_rewrites = -1;  // -1: 10 x the model's node count + 1000
  bool include_subgraphs = true;
  // Initial visiting order. Bottom-up (default: each graph's last node first) tries a
  // fusion rooted at a chain's final op before a smaller one rooted inside the chain.
  bool top_down = false;
  bool include_functions = true;
  // When set, each miss of a rule at a node whose op is its root is reported here.
  std::function<void(const std::string& rule, const Node& node, const std::string& why)> explain;
  // When set, every popped node is counted here (progress reporting).
  std::atomic<int64_t>* visited = nullptr;
  // When set, also told of every change the rules make (as MLIR's GreedyRewriteConfig
  // listener): a pass that keeps facts about the graph learns what to revisit.
  RewriteListener* listener = nullptr;
  // When set, each rule application spends one step, and the driver stops cleanly (as at a
  // fixed point: dead nodes and orphaned weights still go) once it is spent. bisect uses it
  // to stop a pass after N rewrites.
  RewriteBudget* budget = nullptr;
};

// Result rewrites per rule name. Every rule's check reads `facts` (shared by the run).
StatusOr<std::map<std::string, int64_t>> ApplyRulesGreedily(Model& model, const std::vector<const RewriteRule*>& rules,
                                                            RewriteFacts& facts, const GreedyOptions& options = {});
// The same with facts of its own (built on first use from the model).
StatusOr<std::map<std::string, int64_t>> ApplyRulesGreedily(Model& model, const std::vector<const RewriteRule*>& rules,
                                                            const GreedyOptions& options = {});

}  // namespace onnxsurgeon
