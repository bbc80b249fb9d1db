// negative-step (on Slice): a constant steps input with a negative step (x[::-1]). Where a
// runtime takes positive steps but not negative ones (nncase 1.9: step 2 matches, step -1
// is refused), step-not-one would name more than the probe shows.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "passes/backend_forms/slice_step_to_gather.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class NegativeStepCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Slice") || n.num_inputs() < 5 || !n.input(4)) return false;
    auto steps = ConstantInt64s(n.input(4));
    if (!steps || std::none_of(steps->begin(), steps->end(), [](int64_t s) { return s < 0; })) return false;
    *detail = absl::StrCat("steps '", n.input(4)->name(), "' = [", absl::StrJoin(*steps, ","), "]");
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

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<NegativeStepCondition>();
}

}  // namespace

extern const ConditionKind kNegativeStep = {"negative-step", "negative-step",
                                            "(on Slice) a constant steps input with a negative step",
                                            "slice-step-to-gather", Parse};

}  // namespace onnxsurgeon::target
