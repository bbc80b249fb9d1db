// flatten-axis-not-one (on Flatten): its axis, made non-negative, is not 1 (1 is the
// default). nncase 1.9 handles only axis 1 (targets/probes/embedding_models.py: flatten_r*).
#include "absl/strings/str_cat.h"
#include "passes/reshapes/reshape_facts.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class FlattenAxisNotOneCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    if (!n.Is("Flatten")) return false;
    int64_t axis = 1;
    if (const Attribute* a = n.FindAttribute("axis")) axis = a->proto().i();
    if (axis < 0) {
      const Value* x = n.input(0);
      if (!x || !x->type() || !x->type()->has_tensor_type() || !x->type()->tensor_type().has_shape())
        return true;  // a negative axis on an unknown rank: not shown to be 1
      axis += x->type()->tensor_type().shape().dim_size();
    }
    if (axis == 1) return false;
    *detail = absl::StrCat("axis ", axis);
    return true;
  }
  // flatten-to-reshape writes it as a Reshape where at most one side holds dims that are not
  // static (WhyStays).
  bool RemedyApplies(const Node& n, const RemedyContext& context) const override {
    return WhyStays(n, context).empty();
  }
  std::string WhyNoRemedy(const Node& n, const RemedyContext& context) const override {
    return absl::StrCat("flatten-to-reshape refuses it: ", WhyStays(n, context));
  }

 private:
  // The pass's decision on the input's shape as the check knows it (RemedyShape).
  static std::string WhyStays(const Node& n, const RemedyContext& context) {
    std::optional<Shape> shape = RemedyShape(n.input(0), context);
    std::string why;
    if (!shape || passes::reshapes::FlattenAsReshape(n, shape, &why)) return "";
    return why;
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<FlattenAxisNotOneCondition>();
}

}  // namespace

extern const ConditionKind kFlattenAxisNotOne = {"flatten-axis-not-one", "flatten-axis-not-one",
                                                 "(on Flatten) its axis is not 1 (it is a Reshape to 2-D)",
                                                 "flatten-to-reshape", Parse};

}  // namespace onnxsurgeon::target
