// Matcher: finds one pattern rooted at a given node, with full backtracking over
// alternatives and commutative operand orders. Nothing in the graph is touched.
#pragma once

#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/pattern/pattern.h"

namespace onnxsurgeon::pattern {

// What a successful match bound, addressed by capture name.
class Match {
 public:
  Value* value(std::string_view capture) const;
  Node* node(std::string_view capture) const;
  const Attribute* attr(std::string_view capture) const;  // null if absent on the node
  // The constant bound to a Const/ScalarNear capture.
  const ConstantData& constant(std::string_view capture) const;
  double scalar(std::string_view capture) const;  // constant(capture).ScalarAsDouble()
  bool has(std::string_view capture) const;
  Node* root() const { return root_; }
  // Every matched node (root included), in pattern order.
  std::vector<Node*> nodes() const;

 private:
  friend class Matcher;
  const Pattern* pattern_ = nullptr;
  Node* root_ = nullptr;
  std::vector<Value*> values_;
  std::vector<Node*> ops_;
  std::vector<std::optional<ConstantData>> constants_;  // by value id
  std::vector<std::pair<std::string, const Attribute*>> attrs_;
};

class Matcher {
 public:
  // Given a pattern and the op (by OpRef id) that must match `root`.
  Matcher(const Pattern& pattern, int root_op) : pattern_(pattern), root_op_(root_op) {}

  // Execute tries to match with `root` as the root op. Result true and `out` filled on
  // success; on failure, with explain on, Explanation() says how far it got and why.
  bool MatchAt(Node* root, Match& out, bool explain = false);
  const std::string& Explanation() const { return explanation_; }

 private:
  struct Goal {
    bool is_op;
    int id;
    Value* value;
    Node* node;
  };
  bool Solve();
  bool SolveValue(int id, Value* v);
  bool SolveOp(int id, Node* n);
  bool Finish();
  bool Fail(std::string reason);
  std::string DescribeOp(int id) const;
  int BoundOps() const;

  const Pattern& pattern_;
  int root_op_;
  std::vector<Goal> goals_;
  std::vector<Value*> values_;
  std::vector<Node*> ops_;
  std::vector<std::optional<ConstantData>> constants_;
  std::vector<std::pair<std::string, const Attribute*>> attrs_;
  bool explain_ = false;
  int best_depth_ = -1;
  std::string explanation_;
};

}  // namespace onnxsurgeon::pattern
