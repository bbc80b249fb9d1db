// The normalizations onnxruntime's transformer optimizer writes, lowered to standard ops.
//
//   SkipLayerNormalization(input, skip, gamma[, beta[, bias]]) -> output[, mean, inv_std_var,
//   input_skip_bias_sum]   (com.microsoft)
//     s = input + skip (+ bias); output = LayerNorm over the last axis of s (epsilon: the
//     attribute, default 1e-12); mean / inv_std_var: its statistics, float, last dim kept;
//     input_skip_bias_sum = s.
//     opset >= 17: s's Adds, then LayerNormalization-17; below, the decomposed form
//     (passes/lowering/layer_norm.h). In float16/bfloat16 the sum and the normalization
//     are computed in float, as onnxruntime's kernel does, and cast back.
//   SkipSimplifiedLayerNormalization(input, skip, gamma[, bias]) (com.microsoft): the same
//     with RMS normalization (passes/lowering/rms_norm.h) and no beta; its `mean` output has
//     no meaning (onnxruntime leaves it unset), so a node whose mean is read is refused.
//   SimplifiedLayerNormalization(X, scale) -> Y[, inv_std_var]   (default domain, where
//     onnxruntime registers it): RMS normalization over axis..-1, in stash_type.
//   LayerNormalization in the default domain below opset 17: onnxruntime's own
//     LayerNormalization-1 (the standard op only exists from 17): the decomposed form.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"
#include "passes/lowering/rms_norm.h"

namespace onnxsurgeon::contrib {
namespace {

constexpr float kSkipEpsilon = 1e-12f;  // SkipLayerNormalization's default epsilon

// Why a float type could not be found, or "" when `type` is one.
std::string WhyNotFloat(int32_t type, const char* what) {
  if (type == 0) return absl::StrCat("the element type of ", what, " is unknown (run infer-shapes first)");
  if (!lowering::IsFloatType(type)) return absl::StrCat(what, " is ", TypeName(type), ", not a float type");
  return "";
}

// ---- SkipLayerNormalization, SkipSimplifiedLayerNormalization --------------------------

struct SkipPlan {
  Value* input;
  Value* skip;
  Value* gamma;
  Value* beta;  // null: none (always null when simplified)
  Value* bias;  // null: none
  float epsilon;
  int32_t type;
};

class SkipNormRule : public NodeRule<SkipPlan> {
 public:
  SkipNormRule(std::string name, std::string op, bool simplified, bool layernorm_op)
      : NodeRule(std::move(name), std::move(op), kMsDomain), simplified_(simplified), layernorm_op_(layernorm_op) {}

 protected:
  Verdict<SkipPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || !node->input(2)) return Refuse("lacks input, skip or gamma");
    SkipPlan plan{node->input(0), node->input(1), node->input(2), nullptr, nullptr, kSkipEpsilon, 0};
    if (simplified_) {
      plan.bias = node->input(3);
      if (node->num_inputs() > 4) return Refuse("more than 4 inputs");
      if (OutputUsed(*node, 1)) return Refuse("its mean output is read: onnxruntime does not define it for RMS norm");
    } else {
      plan.beta = node->input(3);
      plan.bias = node->input(4);
      if (node->num_inputs() > 5) return Refuse("more than 5 inputs");
    }
    if (node->num_outputs() > 4) return Refuse("more than 4 outputs");
    plan.epsilon = FloatAttr(*node, "epsilon", kSkipEpsilon);
    plan.type = ElemTypeOfAny(*node, {0, 1, 2, 3, 4}, {0, 3}, facts.Get<TypeFacts>());
    if (std::string why = WhyNotFloat(plan.type, "input"); !why.empty()) return Refuse(why);
    return plan;
  }

  Status Replace(Node* node, SkipPlan plan, Rewriter& rw) const override {
    const int64_t opset = node->graph()->OpsetVersion("");
    // float16 / bfloat16: onnxruntime's kernel sums and normalizes in float (rounding the
    // sum first would move the result by a few ulps); the results are cast back.
    constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
    const bool wide = plan.type != kFloat;
    auto up = [&](Value* v) { return wide && v ? rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kFloat)}) : v; };
    auto down = [&](Value* v) { return wide ? rw.Op("Cast", {v}, {Rewriter::AttrInt("to", plan.type)}) : v; };
    Value* sum = rw.Op("Add", {up(plan.input), up(plan.skip)});
    if (plan.bias) sum = rw.Op("Add", {sum, up(plan.bias)});
    const bool want_mean = OutputUsed(*node, 1), want_inv = OutputUsed(*node, 2);
    std::vector<Value*> out(4, nullptr);
    if (OutputUsed(*node, 3)) out[3] = down(sum);
    if (simplified_) {
      lowering::RmsNormSpec spec{sum, plan.gamma, {-1}, plan.epsilon, kFloat, plan.type, kFloat};
      OS_ASSIGN_OR_RETURN(lowering::RmsNormParts parts, lowering::EmitRmsNorm(rw, spec, opset, want_inv));
      out[0] = parts.y;
      out[2] = parts.inv_std_dev;
    } else if (opset >= 17 && layernorm_op_) {
      const int outputs = want_inv ? 3 : want_mean ? 2 : 1;
      Node* ln = rw.Create("LayerNormalization", {sum, up(plan.gamma), up(plan.beta)},
                           {Rewriter::AttrInt("axis", -1), Rewriter::AttrFloat("epsilon", plan.epsilon)}, outputs);
      out[0] = down(ln->output(0));
      if (want_mean) out[1] = ln->output(1);
      if (want_inv) out[2] = ln->output(2);
    } else {
      lowering::LayerNormSpec spec;
      spec.x = sum;
      spec.scale = up(plan.gamma);
      spec.bias = up(plan.beta);
      spec.epsilon = plan.epsilon;
      spec.elem_type = kFloat;
      OS_ASSIGN_OR_RETURN(lowering::LayerNormParts parts,
                          lowering::EmitLayerNormDecomposition(rw, spec, opset, want_inv));
      out[0] = down(parts.y);
      if (want_mean) out[1] = parts.mean;
      out[2] = parts.inv_std_dev;
    }
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }

 private:
  bool simplified_;
  bool layernorm_op_;
};

// ---- SimplifiedLayerNormalization ----------------------------------------------------

class SimplifiedNormRule : public NodeRule<lowering::RmsNormSpec> {
 public:
  SimplifiedNormRule() : NodeRule("lower-simplified-layernorm", "SimplifiedLayerNormalization", "") {}

 protected:
  Verdict<lowering::RmsNormSpec> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1)) return Refuse("lacks X or scale");
    if (node->num_inputs() > 2 || node->num_outputs() > 2) return Refuse("more than 2 inputs or outputs");
    const TypeFacts& types = facts.Get<TypeFacts>();
    lowering::RmsNormSpec spec;
    spec.x = node->input(0);
    spec.scale = node->input(1);
    spec.epsilon = FloatAttr(*node, "epsilon", 1e-5f);
    spec.stash_type = static_cast<int32_t>(IntAttr(*node, "stash_type", 1));
    if (!lowering::IsFloatType(spec.stash_type))
      return Refuse(absl::StrCat("stash_type ", spec.stash_type, " is not a float type"));
    spec.elem_type = ElemTypeOfAny(*node, {0}, {}, types);
    spec.scale_type = ElemTypeOfAny(*node, {1}, {0}, types);
    if (std::string why = WhyNotFloat(spec.elem_type, "X"); !why.empty()) return Refuse(why);
    if (std::string why = WhyNotFloat(spec.scale_type, "scale"); !why.empty()) return Refuse(why);
    auto axes = lowering::NormalizedAxes(IntAttr(*node, "axis", -1), types.Rank(spec.x));
    if (!axes.ok()) return Refuse(std::string(axes.status().message()));
    spec.axes = *axes;
    return spec;
  }

  Status Replace(Node* node, lowering::RmsNormSpec spec, Rewriter& rw) const override {
    OS_ASSIGN_OR_RETURN(lowering::RmsNormParts parts,
                        lowering::EmitRmsNorm(rw, spec, node->graph()->OpsetVersion(""), OutputUsed(*node, 1)));
    std::vector<Value*> out = {parts.y, parts.inv_std_dev};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }
};

// ---- LayerNormalization-1 (default domain, opset < 17) -----------------------------------

class LayerNorm1Rule : public NodeRule<lowering::LayerNormSpec> {
 public:
  LayerNorm1Rule() : NodeRule("lower-layernorm-1", "LayerNormalization", "") {}

 protected:
  Verdict<lowering::LayerNormSpec> Check(Node* node, RewriteFacts& facts) const override {
    if (node->graph()->OpsetVersion("") >= 17) return Refuse("");  // the standard op
    if (!node->input(0) || !node->input(1)) return Refuse("lacks X or Scale");
    const TypeFacts& types = facts.Get<TypeFacts>();
    lowering::LayerNormSpec spec;
    spec.x = node->input(0);
    spec.scale = node->input(1);
    spec.bias = node->input(2);
    spec.axis = IntAttr(*node, "axis", -1);
    spec.epsilon = FloatAttr(*node, "epsilon", 1e-5f);
    spec.stash_type = static_cast<int32_t>(IntAttr(*node, "stash_type", 1));
    if (!lowering::IsFloatType(spec.stash_type))
      return Refuse(absl::StrCat("stash_type ", spec.stash_type, " is not a float type"));
    spec.elem_type = ElemTypeOfAny(*node, {0}, {}, types);
    if (std::string why = WhyNotFloat(spec.elem_type, "X"); !why.empty()) return Refuse(why);
    int32_t scale_type = ElemTypeOfAny(*node, {1, 2}, {0}, types);
    if (scale_type != 0 && scale_type != spec.elem_type)
      return Refuse(absl::StrCat("Scale is ", TypeName(scale_type), " and X ", TypeName(spec.elem_type),
                                 ": mixed types are not lowered"));
    spec.rank = types.Rank(spec.x);
    if (auto axes = lowering::NormalizedAxes(spec.axis, spec.rank); !axes.ok())
      return Refuse(std::string(axes.status().message()));
    return spec;
  }

  Status Replace(Node* node, lowering::LayerNormSpec spec, Rewriter& rw) const override {
    const bool want_inv = OutputUsed(*node, 2);
    OS_ASSIGN_OR_RETURN(lowering::LayerNormParts parts,
                        lowering::EmitLayerNormDecomposition(rw, spec, node->graph()->OpsetVersion(""), want_inv));
    std::vector<Value*> out = {parts.y, parts.mean, parts.inv_std_dev};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }
};

}  // namespace

std::vector<ContribRule> MakeNormRules(bool layernorm_op) {
  std::vector<ContribRule> rules;
  rules.push_back(
      {"SkipLayerNormalization",
       std::make_unique<SkipNormRule>("lower-skip-layernorm", "SkipLayerNormalization", false, layernorm_op)});
  rules.push_back({"SkipSimplifiedLayerNormalization",
                   std::make_unique<SkipNormRule>("lower-skip-simplified-layernorm", "SkipSimplifiedLayerNormalization",
                                                  true, layernorm_op)});
  rules.push_back({"SimplifiedLayerNormalization", std::make_unique<SimplifiedNormRule>()});
  rules.push_back({"LayerNormalization", std::make_unique<LayerNorm1Rule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
