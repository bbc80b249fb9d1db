// channel-axis-equals-spatial: axis=1 over rank-4 tensors whose channel dim equals a spatial
// dim (static). onnx2tf's NCHW -> NHWC layout guess cannot tell those axes apart.
#include "absl/strings/str_cat.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

class ChannelAxisEqualsSpatialCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    const Attribute* a = n.FindAttribute("axis");
    if (!a || (a->proto().i() != 1 && a->proto().i() != -3)) return false;
    return AnyTensor(n, [&](const Value& v) {
      const auto& t = v.type()->tensor_type();
      if (!t.has_shape() || t.shape().dim_size() != 4) return false;
      const auto& d = t.shape().dim();
      if (!d[1].has_dim_value() || d[1].dim_value() <= 1) return false;
      for (int i : {2, 3}) {
        if (d[i].has_dim_value() && d[i].dim_value() == d[1].dim_value()) {
          *detail = absl::StrCat("axis 1 of '", v.name(), "' ", ShapeText(v), " has the size of its axis ", i);
          return true;
        }
      }
      return false;
    });
  }
  std::string WhyNoRemedy(const Node&, const RemedyContext&) const override {
    return "no exact rewrite removes the ambiguity; input shapes whose H and W differ from the channel count avoid it";
  }
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<ChannelAxisEqualsSpatialCondition>();
}

}  // namespace

extern const ConditionKind kChannelAxisEqualsSpatial = {
    "channel-axis-equals-spatial", "channel-axis-equals-spatial",
    "axis=1 over a rank-4 tensor whose dim 1 equals dim 2 or 3 (static): NCHW and NHWC cannot be told apart", "",
    Parse};

}  // namespace onnxsurgeon::target
