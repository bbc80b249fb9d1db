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

PassInfo NopPassInfo() {
  return {"nop", "Do nothing (a load -> save round trip)", {}, [](const PassOptions&) -> StatusOr<std::unique_ptr<Pass>> {
            return std::make_unique<NopPass>();
          }};
}

}  // namespace onnxsurgeon::passes
