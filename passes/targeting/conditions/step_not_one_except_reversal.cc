// step-not-one-except-reversal (on Slice): a steps input with a step other than 1 that is
// not -1 over a whole static axis, or steps computed at run time. pnnx 20261020 converts a
// whole-axis reversal x[:, ::-1] and ncnn runs it exactly, but leaves x[:, ::2], x[:, ::-2]
// and x[:, 4:0:-1] as a Tensor.slice layer ncnn cannot create (targets/probes/ncnn_models.py):
// step-not-one would name more than the probe shows. A Slice of a value computed from shapes
// and constants alone does not count (pnnx folds it: efficientnet_op13_b1's padding).
#include "absl/strings/str_cat.h"
#include "passes/backend_forms/slice_step_to_gather.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class StepNotOneExceptReversalCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    // A Slice of shapes and constants alone (torch's reversed pad lists) pnnx folds.
    if (!n.Is("Slice") || ShapeDerived(n.input(0))) return false;
    std::string why = passes::SliceStepsBeyondReversal(n);
    if (why.empty()) return false;
    *detail = why;
    return true;
  }
  // slice-step-to-gather(form=concat) writes constant steps on static dims as Concats.
  bool RemedyApplies(const Node& n, const RemedyContext&) const override {
    return passes::WhySliceStepsStay(n).empty();
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext&) const override {
    return absl::StrCat("slice-step-to-gather refuses it: ", passes::WhySliceStepsStay(n));
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<StepNotOneExceptReversalCondition>();
}

}  // namespace

extern const ConditionKind kStepNotOneExceptReversal = {
    "step-not-one-except-reversal", "step-not-one-except-reversal",
    "(on Slice) a step other than 1 that is not -1 over a whole static axis, or steps computed at run time",
    "slice-step-to-concat", Parse};

}  // namespace onnxsurgeon::target
