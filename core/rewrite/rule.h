// Rewrite rules: what the greedy driver applies.
//
// A RewriteRule has a root op (or none: any node), a benefit (higher is tried first), a
// debug name, and MatchAndRewrite, which must not mutate anything unless it returns true.
// PatternRule is the declarative kind: a Pattern, an optional check that can refuse a
// match and say why, and a replacement that returns the values replacing the root's
// outputs. The driver erases matched nodes left dead.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/pattern/matcher.h"
#include "core/pattern/pattern.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon {

// A miss with its reason, for MatchAndRewrite and checks: `return Refuse(why, "...")`.
inline bool Refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

class RewriteRule {
 public:
  RewriteRule(std::string name, std::string root_op, std::string root_domain = "", int benefit = 1)
      : name_(std::move(name)), root_op_(std::move(root_op)), root_domain_(std::move(root_domain)), benefit_(benefit) {}
  virtual ~RewriteRule() = default;
  const std::string& name() const { return name_; }
  const std::string& root_op() const { return root_op_; }  // empty: any op
  const std::string& root_domain() const { return root_domain_; }
  int benefit() const { return benefit_; }

  // Given a node whose op is root_op(). Execute: if the rule applies, rewrite through
  // `rewriter` (insertion point already at `root`). Result true if the graph changed; on
  // false nothing was touched. `why`, when given, receives the reason for a miss.
  virtual StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rewriter, std::string* why) = 0;

 private:
  std::string name_, root_op_, root_domain_;
  int benefit_;
};

class PatternRule : public RewriteRule {
 public:
  using Check = std::function<bool(const pattern::Match&, std::string* why)>;
  using Replace = std::function<StatusOr<std::vector<Value*>>(const pattern::Match&, Rewriter&)>;

  // `root` must be an op of `pattern`.
  PatternRule(std::string name, pattern::Pattern pattern, int root, Replace replace, Check check = {}, int benefit = 1);

  StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rewriter, std::string* why) override;

 private:
  pattern::Pattern pattern_;
  int root_;
  Replace replace_;
  Check check_;
};

}  // namespace onnxsurgeon
