// toposort: puts every graph's nodes in topological order (stable: nodes already in a
// valid order keep it). Some exporters and hand edits write out-of-order graphs that
// onnx's checker and several runtimes reject.
//
// Before:  B = Neg(A); A = Relu(X)
// After:   A = Relu(X); B = Neg(A)
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class ToposortPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    for (Graph* g : model.AllGraphs()) {
      if (g->IsTopologicallySorted()) continue;
      OS_RETURN_IF_ERROR(g->TopologicalSort());
      result.Count("graphs-reordered");
    }
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateToposortPass(const PassOptions&) { return std::make_unique<ToposortPass>(); }

}  // namespace onnxsurgeon::passes
