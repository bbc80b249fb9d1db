// output:I: output I is produced (named; an optional output an older schema of the op does
// not have, as SkipLayerNormalization's fourth, input_skip_bias_sum).
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class OutputCondition : public Condition {
 public:
  explicit OutputCondition(int64_t output) : output_(output) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (static_cast<size_t>(output_) >= n.num_outputs() || !n.output(output_)) return false;
    *detail = absl::StrCat("output ", output_, " '", n.output(output_)->name(), "' is produced");
    return true;
  }

 private:
  int64_t output_;
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  OS_ASSIGN_OR_RETURN(int64_t i, ParseIndex(args, "output:"));
  return std::make_unique<OutputCondition>(i);
}

}  // namespace

extern const ConditionKind kOutput = {
    "output:", "output:I", "output I is produced (an optional output an older schema of the op lacks)", "", Parse};

}  // namespace onnxsurgeon::target
