// nop: does nothing. A pipeline of just `nop` is a pure load -> save round trip, which is
// how lossless I/O is tested.
//
// Before: any model.   After: the same model.
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {
class NopPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model&, const PassContext&) override { return PassResult{}; }
};
}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateNopPass(const PassOptions&) { return std::make_unique<NopPass>(); }

}  // namespace onnxsurgeon::passes
