// The activations onnxruntime's transformer optimizer writes, lowered to standard ops
// (constants in x's element type):
//   Gelu(X)             (com.microsoft)  Gelu-20 at opset >= 20, else 0.5 x (1 + Erf(x / sqrt 2))
//   BiasGelu(A, B)                       Gelu of A + B, as above
//   FastGelu(X[, bias])                  the tanh form of X (+ bias): Gelu-20<approximate="tanh">
//                                        at opset >= 20, else passes/lowering/gelu.h's kTanh
//   QuickGelu(X)<alpha=1.702>            X * Sigmoid(alpha * X)
//   BiasAdd(X, bias, skip)               X + bias + skip
//   BiasSplitGelu(X, bias)               s = X + bias, halves a, b of its last axis: a * Gelu(b)
//                                        (the erf form; the last dim static and even)
//   GemmFastGelu(X, W[, bias])           FastGelu of MatMul(X, W) (+ bias): the MatMul and
//                                        FastGelu the optimizer fused (fusion_gemmfastgelu.py;
//                                        onnxruntime has a ROCm kernel only)
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/gelu.h"

namespace onnxsurgeon::contrib {
namespace {

enum class Kind { kGelu, kBiasGelu, kFastGelu, kQuickGelu, kBiasAdd };

struct ActivationPlan {
  std::vector<Value*> operands;  // summed into x (x, then the bias operands)
  int32_t type;
  float alpha;  // QuickGelu
};

class ActivationRule : public NodeRule<ActivationPlan> {
 public:
  ActivationRule(std::string name, std::string op, Kind kind, int arity_min, int arity_max, bool gelu_op)
      : NodeRule(std::move(name), std::move(op), kMsDomain),
        kind_(kind),
        min_(arity_min),
        max_(arity_max),
        gelu_op_(gelu_op) {}

 protected:
  Verdict<ActivationPlan> Check(Node* node, RewriteFacts& facts) const override {
    const int n = static_cast<int>(node->num_inputs());
    if (n > max_) return Refuse(absl::StrCat("more than ", max_, " inputs"));
    ActivationPlan plan{{}, 0, 1.702f};
    for (int i = 0; i < n; ++i) {
      if (node->input(i)) plan.operands.push_back(node->input(i));
      else if (i < min_) return Refuse(absl::StrCat("input ", i, " is missing"));
    }
    if (static_cast<int>(plan.operands.size()) < min_) return Refuse(absl::StrCat("fewer than ", min_, " inputs"));
    plan.type = ElemTypeOfAny(*node, {0, 1, 2}, {0}, facts.Get<TypeFacts>());
    if (plan.type == 0) return Refuse("the element type of X is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("X is ", TypeName(plan.type), ", not a float type"));
    plan.alpha = FloatAttr(*node, "alpha", 1.702f);
    return plan;
  }

  Status Replace(Node* node, ActivationPlan plan, Rewriter& rw) const override {
    const int64_t opset = node->graph()->OpsetVersion("");
    Value* x = plan.operands[0];
    for (size_t i = 1; i < plan.operands.size(); ++i) x = rw.Op("Add", {x, plan.operands[i]});
    Value* y = nullptr;
    switch (kind_) {
      case Kind::kBiasAdd: y = x; break;
      case Kind::kQuickGelu: {
        Value* scaled = x;
        if (plan.alpha != 1.0f) {
          OS_ASSIGN_OR_RETURN(Value * alpha, rw.ScalarFloat(plan.alpha, plan.type));
          scaled = rw.Op("Mul", {x, alpha});
        }
        y = rw.Op("Mul", {x, rw.Op("Sigmoid", {scaled})});
        break;
      }
      case Kind::kGelu:
      case Kind::kBiasGelu:
      case Kind::kFastGelu: {
        const bool tanh = kind_ == Kind::kFastGelu;
        if (opset >= 20 && gelu_op_) {
          y = rw.Op("Gelu", {x}, {Rewriter::AttrString("approximate", tanh ? "tanh" : "none")});
        } else {
          OS_ASSIGN_OR_RETURN(
              y, lowering::EmitGelu(rw, x, plan.type, tanh ? lowering::GeluForm::kTanh : lowering::GeluForm::kErf));
        }
        break;
      }
    }
    return rw.ReplaceNode(node, {y});
  }

 private:
  Kind kind_;
  int min_, max_;
  bool gelu_op_;
};

// ---- BiasSplitGelu ------------------------------------------------------------------

struct SplitGeluPlan {
  int64_t half;
  int32_t type;
};

class BiasSplitGeluRule : public NodeRule<SplitGeluPlan> {
 public:
  explicit BiasSplitGeluRule(bool gelu_op)
      : NodeRule("lower-bias-split-gelu", "BiasSplitGelu", kMsDomain), gelu_op_(gelu_op) {}

 protected:
  Verdict<SplitGeluPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || node->num_inputs() > 2) return Refuse("does not have its 2 inputs");
    if (node->graph()->OpsetVersion("") < 10) return Refuse("opset < 10 (Slice with inputs)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    SplitGeluPlan plan{0, ElemTypeOfAny(*node, {0, 1}, {0}, types)};
    if (plan.type == 0) return Refuse("the element type of X is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("X is ", TypeName(plan.type), ", not a float type"));
    std::optional<std::vector<int64_t>> bias = types.Dims(node->input(1));
    if (!bias || bias->size() != 1 || (*bias)[0] <= 0 || (*bias)[0] % 2 != 0)
      return Refuse("the bias' length is not static and even");
    plan.half = (*bias)[0] / 2;
    return plan;
  }

  Status Replace(Node* node, SplitGeluPlan plan, Rewriter& rw) const override {
    Value* x = rw.Op("Add", {node->input(0), node->input(1)});
    auto half = [&](int64_t begin) {
      return rw.Op("Slice", {x, rw.Int64s({begin}), rw.Int64s({begin + plan.half}), rw.Int64s({-1})});
    };
    Value* left = half(0);
    Value* right = half(plan.half);
    Value* gelu = nullptr;
    if (node->graph()->OpsetVersion("") >= 20 && gelu_op_) {
      gelu = rw.Op("Gelu", {right});
    } else {
      OS_ASSIGN_OR_RETURN(gelu, lowering::EmitGelu(rw, right, plan.type, lowering::GeluForm::kErf));
    }
    return rw.ReplaceNode(node, {rw.Op("Mul", {left, gelu})});
  }

 private:
  bool gelu_op_;
};

// ---- GemmFastGelu --------------------------------------------------------------------

class GemmFastGeluRule : public NodeRule<int32_t> {  // the plan: the element type
 public:
  explicit GemmFastGeluRule(bool gelu_op)
      : NodeRule("lower-gemm-fast-gelu", "GemmFastGelu", kMsDomain), gelu_op_(gelu_op) {}

 protected:
  Verdict<int32_t> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || node->num_inputs() > 3) return Refuse("does not have X and W");
    const int32_t type = ElemTypeOfAny(*node, {0, 1, 2}, {0}, facts.Get<TypeFacts>());
    if (type == 0) return Refuse("the element type of X is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(type)) return Refuse(absl::StrCat("X is ", TypeName(type), ", not a float type"));
    return type;
  }

  Status Replace(Node* node, int32_t type, Rewriter& rw) const override {
    Value* x = rw.Op("MatMul", {node->input(0), node->input(1)});
    if (node->input(2)) x = rw.Op("Add", {x, node->input(2)});
    Value* y = nullptr;
    if (node->graph()->OpsetVersion("") >= 20 && gelu_op_) {
      y = rw.Op("Gelu", {x}, {Rewriter::AttrString("approximate", "tanh")});
    } else {
      OS_ASSIGN_OR_RETURN(y, lowering::EmitGelu(rw, x, type, lowering::GeluForm::kTanh));
    }
    return rw.ReplaceNode(node, {y});
  }

 private:
  bool gelu_op_;
};

}  // namespace

std::vector<ContribRule> MakeActivationRules(bool gelu_op) {
  std::vector<ContribRule> rules;
  auto add = [&](const char* op, const char* name, Kind kind, int min, int max) {
    rules.push_back({op, std::make_unique<ActivationRule>(name, op, kind, min, max, gelu_op)});
  };
  add("Gelu", "lower-gelu", Kind::kGelu, 1, 1);
  add("FastGelu", "lower-fast-gelu", Kind::kFastGelu, 1, 2);
  add("BiasGelu", "lower-bias-gelu", Kind::kBiasGelu, 2, 2);
  add("QuickGelu", "lower-quick-gelu", Kind::kQuickGelu, 1, 1);
  add("BiasAdd", "lower-bias-add", Kind::kBiasAdd, 3, 3);
  rules.push_back({"BiasSplitGelu", std::make_unique<BiasSplitGeluRule>(gelu_op)});
  rules.push_back({"GemmFastGelu", std::make_unique<GemmFastGeluRule>(gelu_op)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
