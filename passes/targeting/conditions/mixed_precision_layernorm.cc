// mixed-precision-layernorm (on ReduceMean): mean = ReduceMean(c), c = Cast(h) with h float16
// or bfloat16, and Sub(c, mean): the head of a LayerNorm written out in a reduced-precision
// model. The structure is a pattern rooted at the Sub; the node asked about must be its mean.
#include "absl/strings/str_cat.h"
#include "core/pattern/matcher.h"
#include "onnx/onnx_pb.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

pattern::Pattern CenteredCast() {
  pattern::Pattern p("mixed-precision-layernorm");
  pattern::ValueRef h = p.Any("h");
  pattern::ValueRef c = p.Op("Cast", {h}).AllowExternalUses();
  pattern::ValueRef mean = p.Op("ReduceMean", {c}).AnyNumberOfInputs().AllowExternalUses().Capture("mean");
  p.Op("Sub", {c, mean}).Capture("sub");
  return p;
}

class MixedPrecisionLayerNormCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (!n.Is("ReduceMean") || n.num_inputs() < 1 || !n.input(0) || !n.output(0)) return false;
    for (const Use& use : n.output(0)->uses()) {
      pattern::Match m;
      if (!pattern::Matcher(pattern_, kSub).MatchAt(use.node, m) || m.node("mean") != &n) continue;
      const Value* h = m.value("h");
      const int32_t from = a.types.ElemType(h);  // exporters often annotate nothing inside
      if (from != onnx::TensorProto::FLOAT16 && from != onnx::TensorProto::BFLOAT16) return false;
      *detail = absl::StrCat("the mean of '", h->name(), "' (", DataTypeNameLower(from),
                             ") cast to float, subtracted by '", NodeName(*m.node("sub")), "'");
      return true;
    }
    return false;
  }

 private:
  static constexpr int kSub = 2;  // the pattern's ops: Cast, ReduceMean, Sub
  const pattern::Pattern pattern_ = CenteredCast();
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<MixedPrecisionLayerNormCondition>();
}

}  // namespace

extern const ConditionKind kMixedPrecisionLayerNorm = {
    "mixed-precision-layernorm", "mixed-precision-layernorm",
    "(on ReduceMean) the mean of a hand-written LayerNorm computed on Cast(float16/bfloat16 x) and subtracted from it",
    "fix-layernorm", Parse};

}  // namespace onnxsurgeon::target
