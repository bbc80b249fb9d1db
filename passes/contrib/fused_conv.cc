// FusedConv (com.microsoft): Conv, plus the sum input Z, then the activation onnxruntime's
// Conv fusions fold in, as standard ops:
//   y = activation(Conv(X, W[, B]) (+ Z))      Conv's attributes as given
//   activation: Relu, Tanh, Sigmoid, LeakyRelu<alpha = params[0]>, Clip(min = params[0],
//   max = params[1]), HardSigmoid<alpha = params[0], beta = params[1]>, or none
// Refused: another activation, too few activation_params, a type that is not float.
//
// NhwcConv (com.microsoft; CUDA only in onnxruntime), what the transformer optimizer writes
// for a UNet's Conv (fusion_nhwc_conv.py): X [N, spatial..., C], W [M, spatial..., C/group]
// (the Conv's weight transposed so), B; Conv's attributes. Lowered to the Conv it came from:
//   y = Transpose(Conv(Transpose(X, to NCHW), Transpose(W, to NCHW), B), to NHWC)
// (the Transposes meet the optimizer's own, which simplify removes).
// Refused: X or W of unknown rank, ranks that differ or below 3, a type that is not float.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

struct FusedConvPlan {
  std::string activation;
  std::vector<float> params;
  int32_t type;
};

class FusedConvRule : public NodeRule<FusedConvPlan> {
 public:
  FusedConvRule() : NodeRule("lower-fused-conv", "FusedConv", kMsDomain) {}

 protected:
  Verdict<FusedConvPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1)) return Refuse("lacks X or W");
    if (node->num_inputs() > 4 || node->num_outputs() > 1) return Refuse("more than 4 inputs or 1 output");
    FusedConvPlan plan;
    if (const Attribute* a = node->FindAttribute("activation")) plan.activation = a->s();
    if (const Attribute* a = node->FindAttribute("activation_params"))
      plan.params.assign(a->proto().floats().begin(), a->proto().floats().end());
    static const std::vector<std::pair<std::string, size_t>> kActivations = {
        {"", 0}, {"Relu", 0}, {"Tanh", 0}, {"Sigmoid", 0}, {"LeakyRelu", 1}, {"Clip", 2}, {"HardSigmoid", 2}};
    auto it = std::find_if(kActivations.begin(), kActivations.end(),
                           [&](const auto& a) { return a.first == plan.activation; });
    if (it == kActivations.end()) return Refuse(absl::StrCat("activation ", plan.activation, " is not lowered"));
    if (plan.params.size() < it->second)
      return Refuse(absl::StrCat("activation ", plan.activation, " needs ", it->second, " activation_params"));
    plan.type = ElemTypeOfAny(*node, {0, 1, 2, 3}, {0}, facts.Get<TypeFacts>());
    if (plan.type == 0) return Refuse("the element type of X is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("X is ", TypeName(plan.type), ", not a float type"));
    return plan;
  }

  Status Replace(Node* node, FusedConvPlan plan, Rewriter& rw) const override {
    std::vector<onnx::AttributeProto> conv_attrs;
    for (const Attribute& a : node->attributes())
      if (a.name() != "activation" && a.name() != "activation_params") conv_attrs.push_back(a.proto());
    Value* y = rw.Op("Conv", {node->input(0), node->input(1), node->input(2)}, conv_attrs);
    if (Value* z = node->input(3)) y = rw.Op("Add", {y, z});
    const std::string& act = plan.activation;
    if (act == "Relu" || act == "Tanh" || act == "Sigmoid") {
      y = rw.Op(act, {y});
    } else if (act == "LeakyRelu") {
      y = rw.Op("LeakyRelu", {y}, {Rewriter::AttrFloat("alpha", plan.params[0])});
    } else if (act == "HardSigmoid") {
      y = rw.Op("HardSigmoid", {y},
                {Rewriter::AttrFloat("alpha", plan.params[0]), Rewriter::AttrFloat("beta", plan.params[1])});
    } else if (act == "Clip") {
      if (node->graph()->OpsetVersion("") < 11) {
        y = rw.Op("Clip", {y},
                  {Rewriter::AttrFloat("min", plan.params[0]), Rewriter::AttrFloat("max", plan.params[1])});
      } else {
        OS_ASSIGN_OR_RETURN(Value * lo, rw.ScalarFloat(plan.params[0], plan.type));
        OS_ASSIGN_OR_RETURN(Value * hi, rw.ScalarFloat(plan.params[1], plan.type));
        y = rw.Op("Clip", {y, lo, hi});
      }
    }
    return rw.ReplaceNode(node, {y});
  }
};

class NhwcConvRule : public NodeRule<int64_t> {  // the plan: X's rank
 public:
  NhwcConvRule() : NodeRule("lower-nhwc-conv", "NhwcConv", kMsDomain) {}

 protected:
  Verdict<int64_t> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1)) return Refuse("lacks X or W");
    if (node->num_inputs() > 3 || node->num_outputs() > 1) return Refuse("more than 3 inputs or 1 output");
    const TypeFacts& types = facts.Get<TypeFacts>();
    const int32_t type = ElemTypeOfAny(*node, {0, 1, 2}, {0}, types);
    if (type == 0) return Refuse("the element type of X is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(type)) return Refuse(absl::StrCat("X is ", TypeName(type), ", not a float type"));
    const int64_t rank = types.Rank(node->input(0));
    if (rank < 3 || types.Rank(node->input(1)) != rank) return Refuse("X's or W's rank is unknown, below 3 or unequal");
    return rank;
  }

  Status Replace(Node* node, int64_t rank, Rewriter& rw) const override {
    std::vector<int64_t> to_first = {0, rank - 1}, to_last = {0};
    for (int64_t i = 1; i + 1 < rank; ++i) to_first.push_back(i);
    for (int64_t i = 2; i < rank; ++i) to_last.push_back(i);
    to_last.push_back(1);
    auto first = [&](Value* v) { return rw.Op("Transpose", {v}, {Rewriter::AttrInts("perm", to_first)}); };
    std::vector<onnx::AttributeProto> conv_attrs;
    for (const Attribute& a : node->attributes()) conv_attrs.push_back(a.proto());
    Value* y = rw.Op("Conv", {first(node->input(0)), first(node->input(1)), node->input(2)}, conv_attrs);
    return rw.ReplaceNode(node, {rw.Op("Transpose", {y}, {Rewriter::AttrInts("perm", to_last)})});
  }
};

}  // namespace

std::vector<ContribRule> MakeFusedConvRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"FusedConv", std::make_unique<FusedConvRule>()});
  rules.push_back({"NhwcConv", std::make_unique<NhwcConvRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
