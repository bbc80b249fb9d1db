// Rewrite rules: what the greedy driver applies.
//
// A rule is const and stateless (MLIR's RewritePattern): it has a root op (or none: any
// node), a benefit (higher is tried first) and a debug name, and works in two steps.
//   check(root or match, facts) -> Verdict<Plan>: decides, touching nothing. It returns
//       the Plan (whatever the rewrite needs: values, epsilon, axes...) or Refuse("why"),
//       which --debug-patterns prints and goldens' `--- refused:` sections read.
//   replace(root or match, plan, rewriter): consumes the plan, so every fact is computed
//       once; it changes the graph only through the Rewriter.
// What a check reads besides the graph comes from RewriteFacts (core/rewrite/facts.h).
//
// Two kinds:
//   PatternRule<Plan>: a declarative Pattern (core/pattern) matched at the root; replace
//       returns the values replacing the root's outputs; the driver erases matched nodes
//       left dead.
//   NodeRule<Plan>: a hand-written match on the root node (a rule over any op, a region
//       walk); replace does its own replacing through the Rewriter.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/ir/node.h"
#include "core/pattern/matcher.h"
#include "core/pattern/pattern.h"
#include "core/rewrite/facts.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon {

// A check's "no", with its reason (empty: nothing worth reporting, e.g. another op).
struct Refusal {
  std::string reason;
};
inline Refusal Refuse(std::string reason) { return Refusal{std::move(reason)}; }

// For helpers of checks that report through a `why` pointer: `return Refuse(why, "...")`.
inline bool Refuse(std::string* why, std::string reason) {
  if (why) *why = std::move(reason);
  return false;
}

// The plan of a rule that needs none: its check only says yes (`return Matched();`) or no.
struct NoPlan {};
inline NoPlan Matched() { return {}; }

// A check's answer: the plan, or a refusal, or (rarely) an error: the model is invalid
// where the rule looked (a LayerNormalization without Scale), and the pass fails.
template <typename Plan = NoPlan>
class Verdict {
 public:
  Verdict(Plan plan) : plan_(std::move(plan)) {}                    // NOLINT: `return plan;`
  Verdict(Refusal refusal) : reason_(std::move(refusal.reason)) {}  // NOLINT: `return Refuse("...");`
  Verdict(Status error) : error_(std::move(error)) {}               // NOLINT: `return absl::...Error(...);`
  // A helper's optional plan; `why` is its reason when empty.
  static Verdict From(std::optional<Plan> plan, std::string why) {
    if (plan) return Verdict(std::move(*plan));
    return Verdict(Refusal{std::move(why)});
  }

  explicit operator bool() const { return plan_.has_value(); }
  Plan& operator*() { return *plan_; }
  Plan* operator->() { return &*plan_; }
  const std::string& reason() const { return reason_; }
  const Status& error() const { return error_; }

 private:
  std::optional<Plan> plan_;
  std::string reason_;
  Status error_;
};

// What the driver holds: a root op, a benefit and one const entry point.
class RewriteRule {
 public:
  RewriteRule(std::string name, std::string root_op, std::string root_domain = "", int benefit = 1)
      : name_(std::move(name)), root_op_(std::move(root_op)), root_domain_(std::move(root_domain)), benefit_(benefit) {}
  virtual ~RewriteRule() = default;
  const std::string& name() const { return name_; }
  const std::string& root_op() const { return root_op_; }  // empty: any op
  const std::string& root_domain() const { return root_domain_; }
  int benefit() const { return benefit_; }

  // Given a node whose op is root_op(). Execute: check, and if the rule applies, rewrite
  // through `rewriter` (insertion point already at `root`). Result true if the graph
  // changed; on false nothing was touched and `why` (when given) says why.
  // Implemented by NodeRule and PatternRule; write rules as one of those.
  virtual StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rewriter, RewriteFacts& facts,
                                         std::string* why) const = 0;

 private:
  std::string name_, root_op_, root_domain_;
  int benefit_;
};

// A rule with a hand-written match on its root node.
template <typename Plan = NoPlan>
class NodeRule : public RewriteRule {
 public:
  using RewriteRule::RewriteRule;

  StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rewriter, RewriteFacts& facts, std::string* why) const final {
    Verdict<Plan> verdict = Check(root, facts);
    OS_RETURN_IF_ERROR(verdict.error());
    if (!verdict) {
      if (why) *why = verdict.reason();
      return false;
    }
    OS_RETURN_IF_ERROR(Replace(root, std::move(*verdict), rewriter));
    return true;
  }

 protected:
  // Decides, touching nothing.
  virtual Verdict<Plan> Check(Node* root, RewriteFacts& facts) const = 0;
  // Rewrites as planned, through `rewriter` only.
  virtual Status Replace(Node* root, Plan plan, Rewriter& rewriter) const = 0;
};

// The part of PatternRule that does not depend on the plan's type.
class PatternRuleBase : public RewriteRule {
 protected:
  // `root` must be an op of `pattern`.
  PatternRuleBase(std::string name, pattern::Pattern pattern, int root, int benefit);
  // True and `match` filled when the pattern matches at `root`; else `why` says why.
  bool MatchAt(Node* root, pattern::Match& match, std::string* why) const;
  // Replaces the root's outputs with `replacements` and erases the matched nodes left dead.
  Status Commit(const pattern::Match& match, const std::vector<Value*>& replacements, Rewriter& rewriter) const;

 private:
  pattern::Pattern pattern_;
  int root_;
};

// A declarative rule: a Pattern, a check that turns a match into a Plan, and a replace
// that turns the plan into the values replacing the root's outputs.
//
//   PatternRule<Plan>(name, pattern, root, check, replace[, benefit])
//     check:   (const Match&[, RewriteFacts&]) -> Verdict<Plan>
//     replace: (const Match&, Plan, Rewriter&) -> StatusOr<std::vector<Value*>>
//   PatternRule<>(name, pattern, root, replace[, benefit])      no check, no plan
//     replace: (const Match&, Rewriter&) -> StatusOr<std::vector<Value*>>
template <typename Plan = NoPlan>
class PatternRule : public PatternRuleBase {
 public:
  using Check = std::function<Verdict<Plan>(const pattern::Match&, RewriteFacts&)>;
  using Replace = std::function<StatusOr<std::vector<Value*>>(const pattern::Match&, Plan, Rewriter&)>;

  template <typename CheckFn, typename ReplaceFn>
    requires(!std::is_integral_v<ReplaceFn>)
  PatternRule(std::string name, pattern::Pattern pattern, int root, CheckFn check, ReplaceFn replace, int benefit = 1)
      : PatternRuleBase(std::move(name), std::move(pattern), root, benefit),
        check_(AdaptCheck(std::move(check))),
        replace_(AdaptReplace(std::move(replace))) {}

  template <typename ReplaceFn>
    requires(std::is_same_v<Plan, NoPlan>)
  PatternRule(std::string name, pattern::Pattern pattern, int root, ReplaceFn replace, int benefit = 1)
      : PatternRule(
            std::move(name), std::move(pattern), root, [](const pattern::Match&) { return Verdict<Plan>(Matched()); },
            std::move(replace), benefit) {}

  StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rewriter, RewriteFacts& facts, std::string* why) const final {
    pattern::Match match;
    if (!MatchAt(root, match, why)) return false;
    Verdict<Plan> verdict = check_(match, facts);
    OS_RETURN_IF_ERROR(verdict.error());
    if (!verdict) {
      if (why) *why = verdict.reason();
      return false;
    }
    // Committed: from here on the graph changes.
    OS_ASSIGN_OR_RETURN(std::vector<Value*> replacements, replace_(match, std::move(*verdict), rewriter));
    OS_RETURN_IF_ERROR(Commit(match, replacements, rewriter));
    return true;
  }

 private:
  template <typename F>
  static Check AdaptCheck(F check) {
    if constexpr (std::is_invocable_v<F, const pattern::Match&, RewriteFacts&>) {
      return Check(std::move(check));
    } else {
      return [check = std::move(check)](const pattern::Match& m, RewriteFacts&) -> Verdict<Plan> { return check(m); };
    }
  }
  template <typename F>
  static Replace AdaptReplace(F replace) {
    if constexpr (std::is_invocable_v<F, const pattern::Match&, Plan, Rewriter&>) {
      return Replace(std::move(replace));
    } else {
      static_assert(std::is_same_v<Plan, NoPlan>, "replace takes (const Match&, Plan, Rewriter&)");
      return [replace = std::move(replace)](const pattern::Match& m, Plan, Rewriter& rw) { return replace(m, rw); };
    }
  }

  Check check_;
  Replace replace_;
};

}  // namespace onnxsurgeon
