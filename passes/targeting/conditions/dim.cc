// dim:I:A>N: dim A of input I is static and above N (an LSTM's batch: dim:0:1>1).
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class DimCondition : public Condition {
 public:
  DimCondition(int64_t input, int64_t axis, int64_t limit) : input_(input), axis_(axis), limit_(limit) {}
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (static_cast<size_t>(input_) >= n.num_inputs() || !n.input(input_)) return false;
    const Value* v = n.input(input_);
    if (!v->type() || !v->type()->has_tensor_type() || !v->type()->tensor_type().has_shape()) return false;
    const auto& shape = v->type()->tensor_type().shape();
    if (axis_ >= shape.dim_size() || !shape.dim(axis_).has_dim_value()) return false;
    const int64_t d = shape.dim(axis_).dim_value();
    if (d <= limit_) return false;
    *detail = absl::StrCat("input ", input_, " '", v->name(), "' has dim ", axis_, " = ", d);
    return true;
  }

 private:
  int64_t input_, axis_, limit_;
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view args) {
  size_t colon = args.find(':'), gt = args.find('>');
  int64_t i = -1, a = -1, limit = 0;
  if (colon == absl::string_view::npos || gt == absl::string_view::npos || gt < colon ||
      !absl::SimpleAtoi(args.substr(0, colon), &i) || !absl::SimpleAtoi(args.substr(colon + 1, gt - colon - 1), &a) ||
      !absl::SimpleAtoi(args.substr(gt + 1), &limit) || i < 0 || a < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("'dim:", args, "' wants dim:I:A>N (input I >= 0, axis A >= 0, a size N)"));
  return std::make_unique<DimCondition>(i, a, limit);
}

}  // namespace

extern const ConditionKind kDim = {"dim:", "dim:I:A>N", "dim A of input I is static and above N", "", Parse};

}  // namespace onnxsurgeon::target
