// channels-first-layernorm (on ReduceMean): mean = ReduceMean(x) over axes without x's last
// axis, and Sub(x, mean): the head of a LayerNorm over the channels of an NCHW tensor
// (ConvNeXt's LayerNorm2d). The structure is a pattern rooted at the Sub.
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/pattern/matcher.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

pattern::Pattern Centered() {
  pattern::Pattern p("channels-first-layernorm");
  pattern::ValueRef x = p.Any("x");
  pattern::ValueRef mean = p.Op("ReduceMean", {x}).AnyNumberOfInputs().AllowExternalUses().Capture("mean");
  p.Op("Sub", {x, mean});
  return p;
}

// The axes of a ReduceMean: its attribute (before opset 18) or its constant input.
std::optional<std::vector<int64_t>> AxesOf(const Node& n) {
  if (const Attribute* a = n.FindAttribute("axes"))
    return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
  if (n.num_inputs() > 1 && n.input(1)) return ConstantInt64s(n.input(1));
  return std::nullopt;
}

class ChannelsFirstLayerNormCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses& a, std::string* detail) const override {
    if (!n.Is("ReduceMean") || n.num_inputs() < 1 || !n.input(0) || !n.output(0)) return false;
    const Value* x = n.input(0);
    std::optional<std::vector<int64_t>> axes = AxesOf(n);
    if (!axes || axes->empty()) return false;
    const int64_t rank = a.types.Rank(x);
    for (int64_t axis : *axes) {
      if (axis == -1 || (rank >= 0 && axis == rank - 1)) return false;
      if (axis >= 0 && rank < 0) return false;  // cannot tell whether it is the last axis
    }
    for (const Use& use : n.output(0)->uses()) {
      pattern::Match m;
      if (!pattern::Matcher(pattern_, kSub).MatchAt(use.node, m) || m.node("mean") != &n) continue;
      *detail = absl::StrCat("a LayerNorm over axes [", absl::StrJoin(*axes, ","), "] of '", x->name(),
                             "', not its last axis");
      return true;
    }
    return false;
  }

 private:
  static constexpr int kSub = 1;  // the pattern's ops: ReduceMean, Sub
  const pattern::Pattern pattern_ = Centered();
};

StatusOr<std::unique_ptr<const Condition>> Parse(absl::string_view) {
  return std::make_unique<ChannelsFirstLayerNormCondition>();
}

}  // namespace

extern const ConditionKind kChannelsFirstLayerNorm = {
    "channels-first-layernorm", "channels-first-layernorm",
    "(on ReduceMean) the mean of a hand-written LayerNorm over axes that exclude the last one (NCHW channels)",
    "canonical-layernorm", Parse};

}  // namespace onnxsurgeon::target
