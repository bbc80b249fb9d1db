#include "core/rewrite/rule.h"

namespace onnxsurgeon {

PatternRuleBase::PatternRuleBase(std::string name, pattern::Pattern pattern, int root, int benefit)
    : RewriteRule(std::move(name), pattern.ops()[root].op_type, pattern.ops()[root].domain, benefit),
      pattern_(std::move(pattern)),
      root_(root) {}

bool PatternRuleBase::MatchAt(Node* root, pattern::Match& match, std::string* why) const {
  pattern::Matcher matcher(pattern_, root_);
  if (matcher.MatchAt(root, match, why != nullptr)) return true;
  if (why) *why = matcher.Explanation();
  return false;
}

Status PatternRuleBase::Commit(const pattern::Match& match, const std::vector<Value*>& replacements,
                               Rewriter& rewriter) const {
  OS_RETURN_IF_ERROR(rewriter.ReplaceNode(match.root(), replacements));
  std::vector<Node*> rest = match.nodes();
  std::erase(rest, match.root());
  rewriter.EraseDead(std::move(rest));
  return absl::OkStatus();
}

}  // namespace onnxsurgeon
