// negative-constant-index (on Gather): its indices are a constant with a negative element
// (ONNX counts it from the end of the axis). nncase 1.9 reads out of bounds for it
// (targets/probes/embedding_models.py: gather_const_neg_*).
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "passes/backend_forms/gather_nonnegative_indices.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class NegativeConstantIndexCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Gather") || n.inputs().size() < 2) return false;
    auto c = GetConstant(n.input(1));
    if (!c) return false;
    auto ints = c->AsInt64s();
    if (!ints) return false;
    for (int64_t v : *ints) {
      if (v < 0) {
        *detail = absl::StrCat("constant index ", v);
        return true;
      }
    }
    return false;
  }
  // gather-nonnegative-indices adds the data's dim on the axis where that dim is static
  // (WhyStays).
  bool RemedyApplies(const Node& n, const RemedyContext& context) const override {
    return WhyStays(n, context).empty();
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext& context) const override {
    return absl::StrCat("gather-nonnegative-indices refuses it: ", WhyStays(n, context));
  }

 private:
  // The pass's decision on the data's shape as the check knows it (RemedyShape).
  static std::string WhyStays(const Node& n, const RemedyContext& context) {
    std::optional<Shape> shape = RemedyShape(n.input(0), context);
    return shape ? passes::WhyGatherIndicesStay(n, shape) : "";
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<NegativeConstantIndexCondition>();
}

}  // namespace

extern const ConditionKind kNegativeConstantIndex = {
    "negative-constant-index", "negative-constant-index",
    "(on Gather) its indices are a constant with a negative element (counted from the end)",
    "gather-nonnegative-indices", Parse};

}  // namespace onnxsurgeon::target
