// The operator-set domains: one definition each of how a domain is spelled, which domains
// are standard, and which a model uses.
#pragma once

#include <set>
#include <string>
#include <string_view>

namespace onnxsurgeon {

class Graph;
class Model;

// "" for ai.onnx, whichever spelling the model used.
inline std::string_view CanonicalDomain(std::string_view domain) {
  return domain == "ai.onnx" ? std::string_view() : domain;
}

// The domains ONNX defines for inference and every runtime reads: "" (ai.onnx) and
// ai.onnx.ml. Anything else (com.microsoft, org.pytorch.aten, a function's domain, ...) is
// custom. (onnx's schema registry also holds the training domains; the inspect report's
// schema check asks the registry itself: core/inspect/inspect.cc OnnxHasSchemasFor.)
bool IsStandardDomain(std::string_view domain);

// How reports name an op: "Relu" in the default domain, "com.microsoft::Attention" elsewhere.
std::string QualifiedOpName(std::string_view domain, std::string_view op_type);

// Given a graph. Result the canonical domains of its nodes, its subgraphs' included.
std::set<std::string> NodeDomains(const Graph& graph);
// Given a model. Result the canonical domains its nodes use (every graph: main graph,
// subgraphs, function bodies) and the domains of the functions it defines.
std::set<std::string> UsedDomains(const Model& model);

}  // namespace onnxsurgeon
