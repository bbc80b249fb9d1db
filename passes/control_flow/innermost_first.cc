#include "passes/control_flow/innermost_first.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ir/domains.h"
#include "core/ir/function.h"
#include "core/ir/graph.h"

namespace onnxsurgeon::passes::control_flow {
namespace {

void PostOrder(Graph& g, std::string_view op_type, std::vector<Node*>& out) {
  for (Node* n : g.nodes()) {
    for (Graph* sub : n->subgraphs()) PostOrder(*sub, op_type, out);
    if (n->op_type() == op_type && CanonicalDomain(n->domain()).empty()) out.push_back(n);
  }
}

}  // namespace

StatusOr<PassResult> ConvertInnermostFirst(Model& model, const PassContext& context, std::string_view op_type,
                                           const std::string& rule, RewriteListener* listener,
                                           const ConvertNode& convert) {
  std::vector<Node*> nodes;
  PostOrder(model.graph(), op_type, nodes);
  for (auto& f : model.functions()) PostOrder(f->body(), op_type, nodes);
  PassResult result;
  Rewriter rw(listener);
  rw.SetRule(rule);
  for (Node* n : nodes) {
    const std::string name = n->name(), op(n->op_type());
    OS_ASSIGN_OR_RETURN(std::string why, convert(n, rw));
    if (why.empty()) {
      result.Count(rule);
    } else if (context.debug_patterns) {
      context.debug_patterns(absl::StrCat("[", rule, "] node '", name, "' (", op, "): ", why));
    }
  }
  return result;
}

}  // namespace onnxsurgeon::passes::control_flow
