// remove-initializer-inputs: initializers that are also listed as graph inputs (torch's
// keep_initializers_as_inputs=True, old exporters) stop being inputs.
//
// Such an input can be overridden at run time, so it is no constant to other passes and
// runtimes cannot fold or pre-pack it. Only the main graph's inputs are interface. Models
// with ir_version < 4 require every initializer to be a graph input: they are left as they
// are, and the pass says so in its report (`skipped: ir_version < 4 ...`).
//
// Options:
//   keep=NAME;NAME...   initializers that stay overridable inputs (';' separates names);
//                       a name that is no initializer input is an error.
//
// Before:  g (float[N] X, float[4] W) => (Y) <float[4] W = {...}> { Y = Add(X, W) }
// After:   g (float[N] X) => (Y) <float[4] W = {...}> { Y = Add(X, W) }
#include "absl/container/flat_hash_set.h"
#include "core/rewrite/rewriter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class RemoveInitializerInputsPass : public Pass {
 public:
  explicit RemoveInitializerInputsPass(absl::flat_hash_set<std::string> keep) : keep_(std::move(keep)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    Graph& g = model.graph();
    for (const std::string& name : keep_) {
      Value* v = g.FindValue(name);
      if (!v || !v->IsGraphInput() || !v->IsInitializer()) {
        return absl::InvalidArgumentError(
            absl::StrCat("keep names '", name, "', which is not an initializer listed as a graph input"));
      }
    }
    if (model.proto().ir_version() < 4) {
      // Not a change: recorded without marking the model changed.
      result.counts["skipped: ir_version < 4 needs initializers listed as inputs"] = 1;
      return result;
    }
    std::vector<Value*> inputs = g.inputs();  // copy: RemoveGraphInput edits the list
    Rewriter rw;
    for (Value* v : inputs) {
      if (!v->IsInitializer() || keep_.contains(v->name())) continue;
      OS_RETURN_IF_ERROR(rw.RemoveGraphInput(v));
      result.Count("inputs-removed");
    }
    return result;
  }

 private:
  absl::flat_hash_set<std::string> keep_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRemoveInitializerInputsPass(const PassOptions& o) {
  std::vector<std::string> keep = o.List("keep");
  return std::make_unique<RemoveInitializerInputsPass>(absl::flat_hash_set<std::string>(keep.begin(), keep.end()));
}

}  // namespace onnxsurgeon::passes
