// prune-opset-imports: removes the opset imports of domains that no node and no function
// uses (core/ir/ir_version.h), e.g. the `local` domain left after inlining, or a
// custom domain whose ops were all rewritten. OpenVINO refuses a file importing a domain
// it does not know ("Unable to read the model"), even when no node uses it. The default
// domain always stays.
//
// Options: none.
//
// Before:  <opset_import: ["" : 18, "local" : 1]>  (no node of domain local)
// After:   <opset_import: ["" : 18]>
#include "core/ir/ir_version.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class PruneOpsetImportsPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    for (const std::string& domain : RemoveUnusedOpsetImports(model)) result.Count("removed:" + domain);
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreatePruneOpsetImportsPass(const PassOptions&) {
  return std::make_unique<PruneOpsetImportsPass>();
}

}  // namespace onnxsurgeon::passes
