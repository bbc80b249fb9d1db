// input:I: input I is given (an optional input, or axes given as an input). The op's form
// without that input is older (ReduceSum before 13 took axes as an attribute), so the plan
// converts below the form (convert-opset-before-form) when the target's opsets reach there.
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class InputCondition : public Condition {
 public:
  explicit InputCondition(int64_t input) : input_(input) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (static_cast<size_t>(input_) >= n.num_inputs() || !n.input(input_)) return false;
    *detail = absl::StrCat("input ", input_, " '", n.input(input_)->name(), "' is given");
    return true;
  }
  // The op's earlier form takes no such input: converting below it removes the input, when
  // the target's opsets reach that far.
  bool RemedyApplies(const Node& n, const RemedyContext& context) const override {
    return OpsetBeforeForm(n) >= context.opset_min;
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext& context) const override {
    return absl::StrCat("the form of ", n.op_type(), " without input ", input_, " is older than opset ",
                        OpsetBeforeForm(n) + 1, ", outside the target's opsets ", context.opset_min, "..",
                        context.opset_max);
  }

 private:
  int64_t input_;
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_ASSIGN_OR_RETURN(int64_t i, ParseIndex(args, "input:"));
  return std::make_unique<InputCondition>(i);
}

}  // namespace

extern const ConditionKind kInput = {
    "input:", "input:I",
    "input I is given (an optional input, or axes given as an input); the plan converts to the opset before that "
    "form of the op (ReduceSum-13's axes input: opset 12)",
    "convert-opset-before-form", Parse};

}  // namespace onnxsurgeon::target
