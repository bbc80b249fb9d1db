// GroupNorm and SkipGroupNorm (com.microsoft), what onnxruntime's transformer optimizer
// writes for diffusion UNets/VAEs (model_type="unet"/"vae"), lowered to standard ops.
// onnxruntime has CUDA (and DirectML) kernels only; the semantics followed are the CUDA
// kernel's (onnxruntime/contrib_ops/cuda/diffusion/group_norm.cc, group_norm_impl_kernel.cuh):
//   X [N, H, W, C] (channels_last=1), gamma, beta [C], groups G, epsilon, activation 0 or 1:
//   per (n, group) of C / G channels: y = (x - mean) / sqrt(var + epsilon) * gamma + beta,
//   statistics in float; activation=1: y * Sigmoid(y) (SiLU); float16 in, float16 out.
//   SkipGroupNorm(X, gamma, beta, skip[, bias]) -> Y[, S]: s = X + skip (+ bias) in X's
//   type (skip [N, H, W, C], [N, 1, 1, C] or [N, C]), S = s, Y = GroupNorm(s); the sum is
//   taken in NCHW (skip transposed, or [N, C] reshaped to [N, C, 1, 1]), S transposed back.
// The form is the one torch's exporter writes for nn.GroupNorm (the optimizer's own
// pattern): Transpose to NCHW, Reshape [N, G, -1], InstanceNormalization (scale 1, bias 0),
// Reshape back, Mul gamma, Add beta (as [C, 1, 1]), then Sigmoid/Mul, Transpose to NHWC;
// float16 is computed in float between Casts. The Transposes meet the optimizer's own
// (NCHW <-> NHWC around the op), which simplify removes.
//   Given:   %y = GroupNorm<groups=2, activation=1>(%x, %gamma, %beta)    x [1, 4, 4, 8]
//   Result:  %t = Transpose<perm=[0, 3, 1, 2]>(%x)
//            %n = Reshape(InstanceNormalization(Reshape(%t, [0, 2, -1]), ones, zeros), Shape(%t))
//            %a = Add(Mul(%n, Reshape(%gamma, [-1, 1, 1])), Reshape(%beta, [-1, 1, 1]))
//            %y = Transpose<perm=[0, 2, 3, 1]>(Mul(%a, Sigmoid(%a)))
// The kernel sums x and x^2 in one pass (var = E[x^2] - mean^2); InstanceNormalization
// subtracts the mean first, as the op's definition and the torch module the optimizer
// replaced do: equal within float rounding on ordinary inputs; where a group's mean is 100
// times its spread and more, the kernel's sums cancel (tests/python/test_lower_contrib_norms.py
// measures it) and the lowering keeps the definition's value.
// channels_last=0 (what the optimizer writes with group_norm_channels_last=False: the op in
// place of the NCHW pattern, X [N, C, H, W]) is the same without the Transposes; onnxruntime's
// CUDA kernel refuses it, the schema and the optimizer's fusion define it.
// Refused: SkipGroupNorm with channels_last=0 (skip's shapes are defined for NHWC only),
// activation other than 0/1, groups < 1, X of unknown rank or not 4-D, a static C not
// divisible by groups, skip of unknown rank or not 2-/4-D, element types unknown or not
// float/float16, opset < 6.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

struct GroupNormPlan {
  int64_t groups;
  float epsilon;
  bool silu;
  int32_t type;        // X's (T)
  int32_t gamma_type;  // gamma's and beta's (M)
  int64_t skip_rank;   // SkipGroupNorm: 2 or 4; GroupNorm: 0
  bool channels_last;  // NHWC (the default), else NCHW
};

class GroupNormRule : public NodeRule<GroupNormPlan> {
 public:
  GroupNormRule(std::string name, std::string op, bool skip)
      : NodeRule(std::move(name), std::move(op), kMsDomain), skip_(skip) {}

 protected:
  Verdict<GroupNormPlan> Check(Node* node, RewriteFacts& facts) const override {
    const size_t max_inputs = skip_ ? 5 : 3;
    if (!node->input(0) || !node->input(1) || !node->input(2) || (skip_ && !node->input(3)))
      return Refuse(skip_ ? "lacks X, gamma, beta or skip" : "lacks X, gamma or beta");
    if (node->num_inputs() > max_inputs) return Refuse(absl::StrCat("more than ", max_inputs, " inputs"));
    if (node->num_outputs() > (skip_ ? 2u : 1u)) return Refuse("more outputs than the op has");
    GroupNormPlan plan{};
    plan.channels_last = IntAttr(*node, "channels_last", 1) != 0;
    if (skip_ && !plan.channels_last)
      return Refuse("channels_last=0: the op defines skip's shapes for NHWC only, and no kernel runs it");
    plan.groups = IntAttr(*node, "groups", 0);
    if (plan.groups < 1) return Refuse("groups is missing or < 1");
    const int64_t activation = IntAttr(*node, "activation", -1);
    if (activation != 0 && activation != 1)
      return Refuse(absl::StrCat("activation ", activation, " is not 0 (none) or 1 (SiLU)"));
    plan.silu = activation == 1;
    plan.epsilon = FloatAttr(*node, "epsilon", 1e-5f);
    if (node->graph()->OpsetVersion("") < 6) return Refuse("opset < 6 (InstanceNormalization-6)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    plan.type = ElemTypeOfAny(*node, skip_ ? std::vector<int>{0, 3, 4} : std::vector<int>{0}, {0, 1}, types);
    plan.gamma_type = ElemTypeOfAny(*node, {1, 2}, {}, types);
    for (auto [t, what] : {std::pair{plan.type, "X"}, std::pair{plan.gamma_type, "gamma"}}) {
      if (t == 0) return Refuse(absl::StrCat("the element type of ", what, " is unknown (run infer-shapes first)"));
      if (t != onnx::TensorProto::FLOAT && t != onnx::TensorProto::FLOAT16)
        return Refuse(absl::StrCat(what, " is ", TypeName(t), ", not float or float16"));
    }
    std::optional<std::vector<int64_t>> x = types.Dims(node->input(0));
    if (!x || x->size() != 4) return Refuse("X's rank is unknown or not 4");
    const int64_t channels = (*x)[plan.channels_last ? 3 : 1];
    if (channels > 0 && channels % plan.groups != 0)
      return Refuse(absl::StrCat("C = ", channels, " is not divisible by groups = ", plan.groups));
    if (skip_) {
      plan.skip_rank = types.Rank(node->input(3));
      if (plan.skip_rank != 2 && plan.skip_rank != 4) return Refuse("skip's rank is unknown or not 2 or 4");
    }
    return plan;
  }

  Status Replace(Node* node, GroupNormPlan plan, Rewriter& rw) const override {
    constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
    auto to_float = [&](Value* v, int32_t type) {
      return type == kFloat ? v : rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kFloat)});
    };
    const std::vector<int64_t> to_first = {0, 3, 1, 2}, to_last = {0, 2, 3, 1};
    Value* x = node->input(0);
    if (plan.channels_last) x = rw.Op("Transpose", {x}, {Rewriter::AttrInts("perm", to_first)});
    Value* sum = nullptr;
    if (skip_) {  // in NCHW (the Transposes meet the producers'), in X's type as the kernel
      Value* skip = node->input(3);
      skip = plan.skip_rank == 2 ? rw.Op("Reshape", {skip, rw.Int64s({0, -1, 1, 1})})
                                 : rw.Op("Transpose", {skip}, {Rewriter::AttrInts("perm", to_first)});
      x = rw.Op("Add", {x, skip});
      if (node->input(4)) x = rw.Op("Add", {x, rw.Op("Reshape", {node->input(4), rw.Int64s({-1, 1, 1})})});
      if (OutputUsed(*node, 1)) sum = rw.Op("Transpose", {x}, {Rewriter::AttrInts("perm", to_last)});
    }
    Value* nchw = to_float(x, plan.type);
    std::vector<double> ones(plan.groups, 1.0), zeros(plan.groups, 0.0);
    OS_ASSIGN_OR_RETURN(Tensor one_t, Tensor::FromDoubles(kFloat, {plan.groups}, ones));
    OS_ASSIGN_OR_RETURN(Tensor zero_t, Tensor::FromDoubles(kFloat, {plan.groups}, zeros));
    OS_ASSIGN_OR_RETURN(Value * scale, rw.Constant(std::move(one_t), "ones"));
    OS_ASSIGN_OR_RETURN(Value * shift, rw.Constant(std::move(zero_t), "zeros"));
    Value* grouped = rw.Op("Reshape", {nchw, rw.Int64s({0, plan.groups, -1})});
    Value* normed =
        rw.Op("InstanceNormalization", {grouped, scale, shift}, {Rewriter::AttrFloat("epsilon", plan.epsilon)});
    Value* y = rw.Op("Reshape", {normed, rw.Op("Shape", {nchw})});
    auto per_channel = [&](Value* v) {
      return rw.Op("Reshape", {to_float(v, plan.gamma_type), rw.Int64s({-1, 1, 1})});
    };
    y = rw.Op("Add", {rw.Op("Mul", {y, per_channel(node->input(1))}), per_channel(node->input(2))});
    if (plan.silu) y = rw.Op("Mul", {y, rw.Op("Sigmoid", {y})});
    if (plan.type != kFloat) y = rw.Op("Cast", {y}, {Rewriter::AttrInt("to", plan.type)});
    if (plan.channels_last) y = rw.Op("Transpose", {y}, {Rewriter::AttrInts("perm", to_last)});
    std::vector<Value*> out = {y, sum};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }

 private:
  bool skip_;
};

}  // namespace

std::vector<ContribRule> MakeGroupNormRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"GroupNorm", std::make_unique<GroupNormRule>("lower-group-norm", "GroupNorm", false)});
  rules.push_back({"SkipGroupNorm", std::make_unique<GroupNormRule>("lower-skip-group-norm", "SkipGroupNorm", true)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
