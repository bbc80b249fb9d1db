// step-not-one (on Slice): a steps input (opset >= 10) not all ones, or not known before run
// time.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "passes/backend_forms/slice_step_to_gather.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class StepNotOneCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Slice") || n.num_inputs() < 5 || !n.input(4)) return false;
    auto steps = ConstantInt64s(n.input(4));
    if (steps && std::all_of(steps->begin(), steps->end(), [](int64_t s) { return s == 1; })) return false;
    *detail = steps ? absl::StrCat("steps '", n.input(4)->name(), "' = [", absl::StrJoin(*steps, ","), "]")
                    : absl::StrCat("steps '", n.input(4)->name(), "' is computed at run time");
    return true;
  }
  // slice-step-to-gather writes constant steps on static dims as Gathers.
  bool RemedyApplies(const Node& n, const RemedyContext&) const override {
    return passes::WhySliceStepsStay(n).empty();
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext&) const override {
    return absl::StrCat("slice-step-to-gather refuses it: ", passes::WhySliceStepsStay(n));
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) { return std::make_unique<StepNotOneCondition>(); }

}  // namespace

extern const ConditionKind kStepNotOne = {"step-not-one", "step-not-one",
                                          "(on Slice) a steps input not all ones, or computed at run time",
                                          "slice-step-to-gather", Parse};

}  // namespace onnxsurgeon::target
