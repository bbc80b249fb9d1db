// cse: common subexpression elimination. Two nodes of the same op, domain and
// attributes reading the same values compute the same outputs; the later one goes and
// its readers read the earlier one's outputs. Exporters repeat shape arithmetic per
// layer (Shape -> Gather -> Unsqueeze -> Concat for every Reshape), and hand-written
// modules repeat subexpressions (`x - mean` twice); after one merge, nodes reading the
// merged values become identical in turn, so one walk in topological order merges whole
// chains. Graph output names are kept (an Identity carries a name that cannot move).
//
// Never merged: random ops (RandomNormal*, RandomUniform*, Bernoulli, Multinomial: two
// draws are not one), ops of custom domains (their effects are unknown), nodes with
// subgraphs, nodes without outputs, QuantizeLinear and DequantizeLinear (a QDQ model keeps
// its Q/DQ nodes: each quantized op reads its own DequantizeLinear, the node unit runtimes
// fuse; two identical pairs on deduplicated constants stay two). Runs in every graph,
// subgraph and function body; a
// node is only merged with one of its own graph.
//
// Before:  s1 = Shape(X)  d1 = Gather(s1, zero)  s2 = Shape(X)  d2 = Gather(s2, zero)
//          Y = Mul(d1, d2)
// After:   s1 = Shape(X)  d1 = Gather(s1, zero)  Y = Mul(d1, d1)
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/budget.h"
#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

bool Mergeable(const Node& n) {
  std::string_view domain = CanonicalDomain(n.domain());
  if (!domain.empty() && domain != "ai.onnx.ml") return false;
  if (n.num_outputs() == 0 || !n.subgraphs().empty()) return false;
  const std::string& op = n.op_type();
  if (op == "QuantizeLinear" || op == "DequantizeLinear") return false;
  return op.rfind("Random", 0) != 0 && op != "Bernoulli" && op != "Multinomial";
}

// An Identity read only as graph outputs: merging it would put back an Identity to keep
// the output's name, which saves nothing, and strip-identity-cast would undo it in the
// next simplify round (100k such outputs kept simplify at max-rounds).
bool OnlyNamesAnOutput(const Node& n) {
  return n.Is("Identity") && n.num_outputs() == 1 && n.output(0) && n.output(0)->IsGraphOutput() &&
         n.output(0)->uses().empty();
}

// What makes two nodes interchangeable: op, domain, overload, the exact input values,
// the attributes (in name order, serialized) and the output count.
std::string Key(const Node& n) {
  std::string key = absl::StrCat(n.op_type(), "|", std::string(CanonicalDomain(n.domain())), "|", n.proto().overload(),
                                 "|", n.num_outputs(), "|");
  for (Value* v : n.inputs()) absl::StrAppend(&key, reinterpret_cast<uintptr_t>(v), ",");
  std::vector<const Attribute*> attributes;
  for (const Attribute& a : n.attributes()) attributes.push_back(&a);
  std::sort(attributes.begin(), attributes.end(),
            [](const Attribute* a, const Attribute* b) { return a->name() < b->name(); });
  for (const Attribute* a : attributes) {
    std::string bytes;
    a->proto().SerializeToString(&bytes);
    absl::StrAppend(&key, "|", bytes.size(), ":", bytes);
  }
  return key;
}

// One merge is one step of bisect's budget (null: unbounded).
Status MergeIn(Graph& g, PassResult& result, RewriteBudget* budget) {
  if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
  Rewriter rewriter;
  rewriter.SetRule("cse");
  absl::flat_hash_map<std::string, Node*> first;
  for (Node* n = g.first_node(); n;) {
    Node* next = n->next();
    for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(MergeIn(*sub, result, budget));
    if (budget && budget->exhausted()) return absl::OkStatus();
    if (Mergeable(*n) && !OnlyNamesAnOutput(*n)) {
      auto [it, inserted] = first.try_emplace(Key(*n), n);
      if (!inserted) {
        Node* kept = it->second;
        rewriter.SetInsertionPoint(n);
        std::vector<Value*> replacements(kept->outputs().begin(), kept->outputs().end());
        for (size_t i = 0; i < n->num_outputs(); ++i) {
          if (n->output(i) && !replacements[i] && n->output(i)->HasUsers()) {
            replacements.clear();  // an output the kept node omits: not the same node after all
            break;
          }
        }
        if (!replacements.empty()) {
          RewriteStep step{"cse", n->name(), {n->name(), kept->name()}, {FirstOutputName(*n), FirstOutputName(*kept)}};
          OS_RETURN_IF_ERROR(rewriter.ReplaceNode(n, replacements));
          result.Count("nodes-merged");
          if (budget) budget->Spend(std::move(step));
        }
      }
    }
    n = next;
  }
  return absl::OkStatus();
}

class CsePass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    OS_RETURN_IF_ERROR(MergeIn(model.graph(), result, context.budget));
    for (auto& f : model.functions()) OS_RETURN_IF_ERROR(MergeIn(f->body(), result, context.budget));
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateCsePass(const PassOptions&) { return std::make_unique<CsePass>(); }

}  // namespace onnxsurgeon::passes
