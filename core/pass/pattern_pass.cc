#include "core/pass/pattern_pass.h"

namespace onnxsurgeon {

GreedyOptions WithDebugPatterns(GreedyOptions options, const PassContext& context) {
  options.visited = context.nodes_visited;
  options.budget = context.budget;
  if (context.debug_patterns) {
    options.explain = [&context](const std::string& rule, const Node& node, const std::string& why) {
      if (why.empty()) return;
      context.debug_patterns(absl::StrCat("[", rule, "] node '", node.name(), "' (", node.op_type(), "): ", why));
    };
  }
  return options;
}

StatusOr<PassResult> PatternPass::Run(Model& model, const PassContext& context) {
  RewriteFacts facts(model);
  return RunRules(model, context, facts);
}

StatusOr<PassResult> PatternPass::RunRules(Model& model, const PassContext& context, RewriteFacts& facts) {
  std::vector<const RewriteRule*> rules;
  for (const auto& r : rules_) rules.push_back(r.get());
  GreedyOptions options = WithDebugPatterns(options_, context);
  OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, rules, facts, options));
  PassResult result;
  for (const auto& [rule, n] : counts) result.Count(rule, n);
  return result;
}

}  // namespace onnxsurgeon
