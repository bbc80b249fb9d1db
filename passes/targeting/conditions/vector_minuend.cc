// vector-minuend (on Sub): Sub(c, y) with c a constant of rank >= 1 below y's rank (beta -
// mean * scale in a hand-written LayerNorm): onnx2tf's explicit broadcast of c fails.
#include "absl/strings/str_cat.h"
#include "core/pattern/matcher.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

pattern::Pattern ConstantMinusValue() {
  pattern::Pattern p("vector-minuend");
  pattern::ValueRef c = p.Where(
      p.Any("c"), [](const Value* v, std::string*) { return IsConstant(v); }, "a constant");
  p.Op("Sub", {c, p.Any("y")});
  return p;
}

class VectorMinuendCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    pattern::Match m;
    if (!n.Is("Sub") || !pattern::Matcher(pattern_, 0).MatchAt(const_cast<Node*>(&n), m)) return false;
    const int64_t c = a.types.Rank(m.value("c")), y = a.types.Rank(m.value("y"));
    if (c < 1 || y < 0 || c >= y) return false;
    *detail = absl::StrCat("constant '", m.value("c")->name(), "' of rank ", c, " minus '", m.value("y")->name(),
                           "' of rank ", y);
    return true;
  }

 private:
  const pattern::Pattern pattern_ = ConstantMinusValue();
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<VectorMinuendCondition>();
}

}  // namespace

extern const ConditionKind kVectorMinuend = {
    "vector-minuend", "vector-minuend",
    "(on Sub) a constant first input of rank >= 1 below the second's rank (a LayerNorm's beta - mean * scale)",
    "fix-layernorm", Parse};

}  // namespace onnxsurgeon::target
