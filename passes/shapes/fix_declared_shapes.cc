// fix-declared-shapes: replaces declared shapes (graph outputs, value_info) that contradict
// what the graph computes by the computed ones (core/inspect/declared_shapes.h).
//
// `inspect` lists these declarations. onnxruntime runs such a model with a warning, and
// onnx's checker accepts it until its inference proves the real shape, e.g. after an opset
// upgrade (convert-opset then refuses and names this pass).
//
// Before:  g (float[2,3,4] x) => (float[6] y) { s = Shape(x)  y = Reshape(x, s) }
// After:   g (float[2,3,4] x) => (float[2,3,4] y) { ... }
#include "absl/strings/str_cat.h"
#include "core/inspect/declared_shapes.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class FixDeclaredShapesPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    for (const DeclaredShapeConflict& c : RepairDeclaredShapes(model))
      result.Count(c.graph_output ? "graph-output-shapes-repaired" : "value-info-shapes-repaired");
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFixDeclaredShapesPass(const PassOptions&) {
  return std::make_unique<FixDeclaredShapesPass>();
}

}  // namespace onnxsurgeon::passes
