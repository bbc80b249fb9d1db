// The dynamic quantizer's matmuls (com.microsoft), their quantization kept, in standard ops:
//   DynamicQuantizeMatMul(A, B, b_scale[, b_zero_point[, bias]])          (opset >= 11)
//     Aq, a_scale, a_zero_point = DynamicQuantizeLinear(A)               (uint8, as onnxruntime)
//     Y = Cast(MatMulInteger(Aq, B, a_zero_point, b_zero_point), float) * (a_scale * b_scale) (+ bias)
//   MatMulIntegerToFloat(A, B, a_scale, b_scale[, a_zero_point[, b_zero_point[, bias]]])  (opset >= 10)
//     Y = Cast(MatMulInteger(A, B, a_zero_point, b_zero_point), float) * (a_scale * b_scale) (+ bias)
//   b_scale / b_zero_point: scalars or per column [N], as MatMulInteger's b_zero_point.
// Refused: an output type that is not float (Cast to it would change the rounding).
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"

namespace onnxsurgeon::contrib {
namespace {

struct QuantMatMulPlan {
  int32_t type;  // Y's
};

class QuantMatMulRule : public NodeRule<QuantMatMulPlan> {
 public:
  QuantMatMulRule(std::string name, std::string op, bool dynamic)
      : NodeRule(std::move(name), std::move(op), kMsDomain), dynamic_(dynamic) {}

 protected:
  Verdict<QuantMatMulPlan> Check(Node* node, RewriteFacts& facts) const override {
    const size_t required = dynamic_ ? 3 : 4;
    for (size_t i = 0; i < required; ++i)
      if (!node->input(i)) return Refuse(absl::StrCat("input ", i, " is missing"));
    if (node->num_inputs() > (dynamic_ ? 5u : 7u)) return Refuse("too many inputs");
    const int64_t opset = node->graph()->OpsetVersion("");
    if (opset < (dynamic_ ? 11 : 10))
      return Refuse(dynamic_ ? "opset < 11 (DynamicQuantizeLinear)" : "opset < 10 (MatMulInteger)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    QuantMatMulPlan plan{ElemTypeOfAny(*node, {dynamic_ ? 2 : 3}, {0}, types)};
    if (plan.type != onnx::TensorProto::FLOAT)
      return Refuse(absl::StrCat("the output is ", TypeName(plan.type), ", not float"));
    return plan;
  }

  Status Replace(Node* node, QuantMatMulPlan plan, Rewriter& rw) const override {
    Value* a = node->input(0);
    Value* a_scale;
    Value* a_zero;
    Value* b_scale;
    Value* b_zero;
    Value* bias;
    if (dynamic_) {
      Node* q = rw.Create("DynamicQuantizeLinear", {a}, {}, 3);
      a = q->output(0);
      a_scale = q->output(1);
      a_zero = q->output(2);
      b_scale = node->input(2);
      b_zero = node->input(3);
      bias = node->input(4);
    } else {
      a_scale = node->input(2);
      b_scale = node->input(3);
      a_zero = node->input(4);
      b_zero = node->input(5);
      bias = node->input(6);
    }
    Value* acc = rw.Op("MatMulInteger", {a, node->input(1), a_zero, b_zero});
    Value* y = rw.Op("Cast", {acc}, {Rewriter::AttrInt("to", plan.type)});
    y = rw.Op("Mul", {y, rw.Op("Mul", {a_scale, b_scale})});
    if (bias) y = rw.Op("Add", {y, bias});
    return rw.ReplaceNode(node, {y});
  }

 private:
  bool dynamic_;
};

}  // namespace

std::vector<ContribRule> MakeQuantRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"DynamicQuantizeMatMul",
                   std::make_unique<QuantMatMulRule>("lower-dynamic-quantize-matmul", "DynamicQuantizeMatMul", true)});
  rules.push_back({"MatMulIntegerToFloat",
                   std::make_unique<QuantMatMulRule>("lower-matmul-integer-to-float", "MatMulIntegerToFloat", false)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
