// constant-scatter-after-gemm (on ScatterND): ScatterND(data, indices, updates) with constant
// indices whose data a Gemm computes. rknn-toolkit2 builds a Gemm as a conv, and its conv
// rules then fail on the slices it makes of a constant-index ScatterND (after MatMul or Conv
// it builds).
#include "absl/strings/str_cat.h"
#include "core/pattern/matcher.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

pattern::Pattern ScatterIntoGemm() {
  pattern::Pattern p("constant-scatter-after-gemm");
  pattern::ValueRef data = p.Op("Gemm", {p.Any(), p.Any()}).AnyNumberOfInputs().AllowExternalUses().Capture("gemm");
  pattern::ValueRef indices = p.Where(
      p.Any("indices"), [](const Value* v, std::string*) { return IsConstant(v); }, "constant indices");
  p.Op("ScatterND", {data, indices, p.Any()}).AnyNumberOfInputs();
  return p;
}

class ConstantScatterAfterGemmCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    pattern::Match m;
    if (!n.Is("ScatterND") || !pattern::Matcher(pattern_, kScatter).MatchAt(const_cast<Node*>(&n), m)) return false;
    *detail = absl::StrCat("constant indices '", m.value("indices")->name(), "', data computed by Gemm '",
                           NodeName(*m.node("gemm")), "'");
    return true;
  }

 private:
  static constexpr int kScatter = 1;  // the pattern's ops: Gemm, ScatterND
  const pattern::Pattern pattern_ = ScatterIntoGemm();
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<ConstantScatterAfterGemmCondition>();
}

}  // namespace

extern const ConditionKind kConstantScatterAfterGemm = {"constant-scatter-after-gemm", "constant-scatter-after-gemm",
                                                        "(on ScatterND) constant indices, and data computed by a Gemm",
                                                        "rewrite-constant-scatternd", Parse};

}  // namespace onnxsurgeon::target
