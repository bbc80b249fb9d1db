// lower-ir-version: sets ir_version to the lowest the model's opset imports and features
// allow (core/ir/ir_version.h), so runtimes that stop at an older IR version load it.
// convert-opset does this on its own after changing the opset; this pass is for a model
// whose opset is already right but whose ir_version is newer than the runtime reads
// (dynamo exports at opset 18 declare IR 10; onnxruntime 1.14 reads <= 8).
//
// Options:
//   max=-1   the highest IR version the target reads: when the model needs more, the pass
//            stops with an error naming the feature (e.g. "FLOAT8E4M3FN element type
//            (initializer 'w')"), the model unchanged. -1: no limit.
//
// Before:  <ir_version: 10, opset_import: ["" : 17]>
// After:   <ir_version: 8, opset_import: ["" : 17]>
#include "absl/strings/str_cat.h"
#include "core/ir/ir_version.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class LowerIrVersionPass : public Pass {
 public:
  explicit LowerIrVersionPass(int64_t max) : max_(max) {}
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    int64_t before = model.proto().ir_version();
    OS_ASSIGN_OR_RETURN(int64_t after, LowerIrVersion(model, max_));
    if (after != before) result.Count(absl::StrCat("ir-version-", before, "-to-", after));
    return result;
  }

 private:
  int64_t max_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLowerIrVersionPass(const PassOptions& o) {
  int64_t max = o.Int("max");
  if (max == 0) return absl::InvalidArgumentError("max must be a positive IR version, or -1");
  return std::make_unique<LowerIrVersionPass>(max);
}

}  // namespace onnxsurgeon::passes
