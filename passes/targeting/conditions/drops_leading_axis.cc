// drops-leading-axis (on Gather): a constant scalar index on axis 0 of data of rank 3 or more,
// so the result drops that axis (x[t] of a time-major sequence). onnx2tf 1.29 keeps the
// channels-last order of what remains (targets/probes/tflite_layout_models.py).
#include "absl/strings/str_cat.h"
#include "passes/backend_forms/gather_scalar_to_reshape.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class DropsLeadingAxisCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (!n.Is("Gather") || n.num_inputs() < 2 || !n.input(0)) return false;
    if (!passes::DropsLeadingAxis(n, a.types.DimsOf(n.input(0)))) return false;
    *detail = absl::StrCat("a scalar index on axis 0 of '", n.input(0)->name(), "' ", ShapeText(*n.input(0)));
    return true;
  }
  bool RemedyApplies(const Node& n, const RemedyContext& context) const override {
    return WhyStays(n, context).empty();
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext& context) const override {
    return absl::StrCat("gather-scalar-to-reshape refuses it: ", WhyStays(n, context));
  }

 private:
  static std::string WhyStays(const Node& n, const RemedyContext& context) {
    std::optional<Shape> shape = RemedyShape(n.input(0), context);
    return shape ? passes::WhyScalarGatherStays(n, shape) : "";
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<DropsLeadingAxisCondition>();
}

}  // namespace

extern const ConditionKind kDropsLeadingAxis = {
    "drops-leading-axis", "drops-leading-axis",
    "(on Gather) a constant scalar index on axis 0 of data of rank 3 or more (the result drops that axis)",
    "gather-scalar-to-reshape", Parse};

}  // namespace onnxsurgeon::target
