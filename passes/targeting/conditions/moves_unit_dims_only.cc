// moves-unit-dims-only (on Transpose): it keeps the order of the dims above size 1, so it is
// a Reshape. Asked of transpose-to-reshape's own fact (passes/reshapes/reshape_facts.h).
#include "passes/reshapes/reshape_facts.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class MovesUnitDimsOnlyCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Transpose") || !passes::reshapes::TransposeAsReshape(n, nullptr)) return false;
    *detail = "moves only dims of size 1";
    return true;
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<MovesUnitDimsOnlyCondition>();
}

}  // namespace

extern const ConditionKind kMovesUnitDimsOnly = {"moves-unit-dims-only", "moves-unit-dims-only",
                                                 "(on Transpose) it only moves dims of size 1 (it is a Reshape)",
                                                 "transpose-to-reshape", Parse};

}  // namespace onnxsurgeon::target
