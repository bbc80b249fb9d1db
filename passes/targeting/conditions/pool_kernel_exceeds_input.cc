// pool-kernel-exceeds-input (on a pool with kernel_shape): on some spatial axis its dilated
// kernel is larger than the input plus its pads, both static. OpenVINO 2026.4 refuses such an
// AveragePool at conversion (targets/probes/pool_models.py); ONNX and onnxruntime clip the
// window to the input.
#include "passes/backend_forms/whole_input_pool.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class PoolKernelExceedsInputCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (n.num_inputs() < 1 || !n.input(0) || !n.FindAttribute("kernel_shape")) return false;
    std::optional<std::vector<int64_t>> dims = a.types.Dims(n.input(0));
    if (!dims) return false;
    std::optional<std::string> how = passes::KernelExceedsInput(n, *dims);
    if (!how) return false;
    *detail = *how;
    return true;
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<PoolKernelExceedsInputCondition>();
}

}  // namespace

extern const ConditionKind kPoolKernelExceedsInput = {
    "pool-kernel-exceeds-input", "pool-kernel-exceeds-input",
    "(on a pool) its kernel is larger than the input plus its pads on some spatial axis", "pool-to-global", Parse};

}  // namespace onnxsurgeon::target
