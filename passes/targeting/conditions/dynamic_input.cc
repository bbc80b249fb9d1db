// dynamic-input:I: input I is computed at run time (not an initializer or a Constant).
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class DynamicInputCondition : public Condition {
 public:
  explicit DynamicInputCondition(int64_t input) : input_(input) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (static_cast<size_t>(input_) >= n.num_inputs() || !n.input(input_) || IsConstant(n.input(input_))) return false;
    *detail = absl::StrCat("input ", input_, " '", n.input(input_)->name(), "' is computed at run time");
    return true;
  }

 private:
  int64_t input_;
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_ASSIGN_OR_RETURN(int64_t i, ParseIndex(args, "dynamic-input:"));
  return std::make_unique<DynamicInputCondition>(i);
}

}  // namespace

extern const ConditionKind kDynamicInput = {"dynamic-input:", "dynamic-input:I",
                                            "input I is not a constant (an initializer or a Constant's output)", "",
                                            Parse};

}  // namespace onnxsurgeon::target
