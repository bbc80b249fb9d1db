#include "core/rewrite/rule.h"

namespace onnxsurgeon {

PatternRule::PatternRule(std::string name, pattern::Pattern pattern, int root, Replace replace, Check check, int benefit)
    : RewriteRule(std::move(name), pattern.ops()[root].op_type, pattern.ops()[root].domain, benefit),
      pattern_(std::move(pattern)),
      root_(root),
      replace_(std::move(replace)),
      check_(std::move(check)) {}

StatusOr<bool> PatternRule::MatchAndRewrite(Node* root, Rewriter& rewriter, std::string* why) {
  pattern::Matcher matcher(pattern_, root_);
  pattern::Match match;
  if (!matcher.MatchAt(root, match, why != nullptr)) {
    if (why) *why = matcher.Explanation();
    return false;
  }
  if (check_ && !check_(match, why)) return false;
  // Committed: from here on the graph changes.
  OS_ASSIGN_OR_RETURN(std::vector<Value*> replacements, replace_(match, rewriter));
  OS_RETURN_IF_ERROR(rewriter.ReplaceNode(root, replacements));
  std::vector<Node*> rest = match.nodes();
  std::erase(rest, root);
  rewriter.EraseDead(std::move(rest));
  return true;
}

}  // namespace onnxsurgeon
