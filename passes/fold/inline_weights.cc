// inline-weights: moves tensors stored in external-data files into the model file, for
// runtimes that ignore external data (nncase 1.9 silently ran a model with an external
// .data file with wrong weights, off by 0.66). The saved model then holds every weight
// inline (unless the save itself asks for --external-data all).
//
// Options:
//   max-bytes=2147483648   stop with an error rather than write a model file whose inline
//                          weights exceed this (protobuf readers refuse files over 2 GiB)
//
// Before:  initializer W with data_location EXTERNAL (model.data, offset 0)
// After:   initializer W with its bytes inline
#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "core/ir/value.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class InlineWeightsPass : public Pass {
 public:
  explicit InlineWeightsPass(int64_t max_bytes) : max_bytes_(max_bytes) {}
  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    std::vector<Tensor*> external;
    int64_t total = 0;
    for (Graph* g : model.AllGraphs()) {
      for (Value* v : g->initializers()) {
        Tensor* t = v->mutable_initializer();
        total += static_cast<int64_t>(t->raw_size());
        if (t->storage() == TensorStorage::kExternal) external.push_back(t);
        else if (t->meta().data_location() == onnx::TensorProto::EXTERNAL) {
          return absl::FailedPreconditionError(
              absl::StrCat("initializer '", v->name(), "' refers to external data that was not loaded"));
        }
      }
    }
    if (external.empty()) return result;
    if (total > max_bytes_) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the weights take ", total, " bytes, more than max-bytes=", max_bytes_, " a single model file can hold"));
    }
    for (Tensor* t : external) {
      t->SetRawBytes(t->owner(), t->raw_bytes());  // same bytes, now saved inline
      result.Count("tensors-inlined");
    }
    return result;
  }

 private:
  int64_t max_bytes_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateInlineWeightsPass(const PassOptions& o) {
  return std::make_unique<InlineWeightsPass>(o.Int("max-bytes"));
}

}  // namespace onnxsurgeon::passes
