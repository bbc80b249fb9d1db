// dce: dead code elimination.
//
// Removes nodes none of whose outputs is used (by a node, a subgraph, or a graph
// output), initializers nothing reads (unless they are graph inputs), value_info entries
// for values that no longer exist, and model-local functions nothing calls. Runs inside
// If/Loop/Scan bodies and function bodies too.
//
// Before:  Y = Relu(X); Z = Neg(X)      (Z unused)      initializer W unused
// After:   Y = Relu(X)
#include "absl/container/flat_hash_set.h"
#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

bool Dead(const Node& n) {
  if (n.num_outputs() == 0) return false;  // kept: it exists for an effect we can't see
  for (Value* v : n.outputs())
    if (v && v->HasUsers()) return false;
  return true;
}

void SweepGraph(Graph& g, Rewriter& rw, PassResult& result) {
  // Reverse order: a node's producers come earlier, so one sweep removes whole chains.
  for (Node* n = g.last_node(); n;) {
    Node* prev = n->prev();
    if (Dead(*n)) {
      if (rw.EraseNode(n).ok()) result.Count("nodes");
    } else {
      for (Graph* sub : n->subgraphs()) SweepGraph(*sub, rw, result);
    }
    n = prev;
  }
  std::vector<Value*> unused;
  for (Value* v : g.initializers())
    if (!v->IsGraphInput() && !v->HasUsers()) unused.push_back(v);
  for (Value* v : unused)
    if (rw.RemoveInitializer(v).ok()) result.Count("initializers");
  result.Count("value_info", static_cast<int64_t>(g.RemoveOrphanValueInfo()));
}

class DcePass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    Rewriter rw;
    rw.SetRule("dce");
    SweepGraph(model.graph(), rw, result);
    result.Count("functions", rw.RemoveUncalledFunctions(model));
    for (auto& f : model.mutable_functions()) SweepGraph(f->body(), rw, result);
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDcePass(const PassOptions&) { return std::make_unique<DcePass>(); }

}  // namespace onnxsurgeon::passes
