#include "core/ir/domains.h"

#include "core/ir/model.h"

namespace onnxsurgeon {

bool IsStandardDomain(std::string_view domain) {
  domain = CanonicalDomain(domain);
  return domain.empty() || domain == "ai.onnx.ml";
}

std::string QualifiedOpName(std::string_view domain, std::string_view op_type) {
  domain = CanonicalDomain(domain);
  if (domain.empty()) return std::string(op_type);
  std::string name(domain);
  name.append("::").append(op_type);
  return name;
}

std::set<std::string> NodeDomains(const Graph& graph) {
  std::set<std::string> used;
  for (const Node* n : graph.AllNodesRecursive()) used.insert(std::string(CanonicalDomain(n->domain())));
  return used;
}

std::set<std::string> UsedDomains(const Model& model) {
  std::set<std::string> used;
  for (Graph* g : model.AllGraphs())
    for (const Node* n : g->nodes()) used.insert(std::string(CanonicalDomain(n->domain())));
  for (const auto& f : model.functions()) used.insert(f->domain());
  return used;
}

}  // namespace onnxsurgeon
