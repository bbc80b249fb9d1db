// output:I: output I is produced (named, not left out). An op whose later form added an
// optional output (SkipLayerNormalization's sum of input and skip, output 3) is refused by
// a runtime that knows only the earlier form, at load, whatever reads the output.
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
    "output:", "output:I", "output I is produced (an optional output a later form of the op added)", "", Parse};

}  // namespace onnxsurgeon::target
