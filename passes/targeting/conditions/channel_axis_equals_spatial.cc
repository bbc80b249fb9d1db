// channel-axis-equals-spatial: axis=1 over rank-4 tensors whose channel dim equals a spatial
// dim (static), where an input is computed, through any ops but a Conv, from an Add of two
// computed values. onnx2tf's NCHW -> NHWC layout guess cannot tell those axes apart, and only
// its Add (onnx2tf/ops/Add.py's brute-force transposition search) was measured to pick the
// wrong one: Concats of Conv outputs, graph inputs, upsampled Convs, Mul and Sub of Convs and
// an Add of a constant bias matched (targets/probes/tflite_models.py concat group).
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "core/ir/node.h"
#include "passes/targeting/conditions/common.h"

namespace onnxsurgeon::target {
namespace {

// Nodes walked back from one Concat input before the walk gives up and counts it as reached.
constexpr int kMaxWalk = 64;

// Known only at run time: a graph input or a value computed from one.
bool IsComputed(const Value* v) { return v && !IsConstant(v); }

// Whether `v` is computed from an Add of two computed values through ops other than Conv
// (which computes its own layout), or the walk runs past kMaxWalk nodes (counted as yes).
bool ReachesComputedAdd(const Value* v) {
  std::vector<const Node*> stack;
  std::unordered_set<const Node*> seen;
  if (IsComputed(v) && v->producer()) stack.push_back(v->producer());
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second || n->Is("Conv")) continue;
    if (static_cast<int>(seen.size()) > kMaxWalk) return true;
    if ((n->Is("Add") || n->Is("Sum")) && n->num_inputs() >= 2 && IsComputed(n->input(0)) && IsComputed(n->input(1)))
      return true;
    for (const Value* in : n->inputs())
      if (IsComputed(in) && in->producer()) stack.push_back(in->producer());
  }
  return false;
}

class ChannelAxisEqualsSpatialCondition : public Condition {
 public:
  bool Holds(const Node& n, const ConditionAnalyses&, std::string* detail) const override {
    const Attribute* a = n.FindAttribute("axis");
    if (!a || (a->proto().i() != 1 && a->proto().i() != -3)) return false;
    bool after_add = false;
    for (const Value* in : n.inputs()) after_add = after_add || ReachesComputedAdd(in);
    if (!after_add) return false;
    return AnyTensor(n, [&](const Value& v) {
      const auto& t = v.type()->tensor_type();
      if (!t.has_shape() || t.shape().dim_size() != 4) return false;
      const auto& d = t.shape().dim();
      if (!d[1].has_dim_value() || d[1].dim_value() <= 1) return false;
      for (int i : {2, 3}) {
        if (d[i].has_dim_value() && d[i].dim_value() == d[1].dim_value()) {
          *detail = absl::StrCat("axis 1 of '", v.name(), "' ", ShapeText(v), " has the size of its axis ", i,
                                 ", an input computed from an Add");
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
    "axis=1 over a rank-4 tensor whose dim 1 equals dim 2 or 3 (static), an input computed (through any ops but a "
    "Conv) from an Add of two computed values: NCHW and NHWC cannot be told apart",
    "", Parse};

}  // namespace onnxsurgeon::target
