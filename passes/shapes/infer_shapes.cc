// infer-shapes: records a type and shape for every value the model computes (value_info),
// by the local shape rules and onnx shape inference, for compilers that need one on every
// tensor (nncase: "Can't find value info").
//
// With reset=true the model's value_info and every computed type are dropped first and
// inferred afresh from the graph inputs: after set-input-shape, fold-constants or If
// folding made shapes static, annotations written for the dynamic model would otherwise
// stay behind and contradict (or hide) the static ones. Graph inputs and initializers keep
// their types. onnx inference and the local shape rules (core/shape) alternate until
// neither adds a type (ReinferShapes): a Reshape to dims computed from static shapes
// (c * h) is typed, and what follows it.
//
// Options:
//   reset=false   infer from scratch instead of only filling in missing types
//
// Before:  g (float[1,4] X) => (float[1,4] Y) { T = Relu(X)  Y = Neg(T) }
// After:   the same, with value_info float[1,4] T
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/graph.h"
#include "core/ir/node.h"
#include "core/ir/value.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

// Every value's name and type, to tell whether inference changed anything.
std::string TypeSignature(const Model& model) {
  std::string sig;
  for (Graph* g : model.AllGraphs()) {
    for (Node* n : g->nodes()) {
      for (Value* v : n->outputs()) {
        if (!v) continue;
        absl::StrAppend(&sig, v->name(), v->in_value_info() ? "+" : "-",
                        v->type() ? v->type()->SerializeAsString() : "", ";");
      }
    }
  }
  return sig;
}

class InferShapesPass : public Pass {
 public:
  explicit InferShapesPass(bool reset) : reset_(reset) {}
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    std::string before = TypeSignature(model);
    TypeRequest request{.sources = TypeSources::kReinfer};
    request.infer.record_value_info = true;
    request.infer.drop_value_info = reset_;
    request.infer.replace_types = reset_;
    auto adopted = TypeFacts::Ensure(model, TypeFacts::AnyMissing, request);
    if (!adopted.ok()) {
      return absl::Status(adopted.status().code(),
                          absl::StrCat("shape inference failed: ", adopted.status().message()));
    }
    // Values typed in memory before (by the local rules) are annotated too: every computed
    // value with a known shape gets its value_info entry, which is what is saved.
    for (Graph* g : model.AllGraphs()) {
      for (Node* n : g->nodes()) {
        for (Value* v : n->outputs()) {
          if (v && !v->in_value_info() && !v->IsGraphOutput() && v->type() &&
              (!v->type()->has_tensor_type() || v->type()->tensor_type().has_shape()))
            g->AddValueInfo(v);
        }
      }
    }
    // Re-adopting the same types is not a change (the planner repeats this to a fixed point).
    if (TypeSignature(model) != before) result.Count("values-typed", std::max(*adopted, 1));
    return result;
  }

 private:
  bool reset_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateInferShapesPass(const PassOptions& o) {
  return std::make_unique<InferShapesPass>(o.Bool("reset"));
}

}  // namespace onnxsurgeon::passes
