// QLinearSoftmax (com.microsoft) in its QDQ form, on request only (inexact=true):
//   QLinearSoftmax(X, X_scale, x_zero_point, y_scale, y_zero_point)<opset, axis>
//     Y = QuantizeLinear(Softmax(DequantizeLinear(X, X_scale, x_zero_point)),
//                        1 / Floor(1 / y_scale), y_zero_point)
// onnxruntime's kernel reads exp from a 256-entry table (double, stored as float), sums in
// float and multiplies by Floor(1 / y_scale) (not 1 / y_scale: the output scale is
// 1 / Floor(1 / y_scale), kept here). The float Softmax rounds in another order: measured
// one quantization step off on 3 of 5.3 million elements (rows of 64 and 512, int8 and
// uint8, tests/python/test_lower_contrib_qops.py), equal elsewhere; hence opt-in.
// The node's `opset` attribute picks the semantics: below 13 Softmax over the dims from
// `axis` on (coerced to 2-D, default axis 1), from 13 over `axis` alone (default -1); the
// lowering writes the model opset's Softmax with the same meaning (Flatten and Reshape back
// where needed).
// Refused: without inexact=true; a type that is not int8/uint8; y_zero_point missing; a
// single-axis softmax on a model below opset 13 unless the axis is the last of a known rank.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"

namespace onnxsurgeon::contrib {
namespace {

enum class SoftmaxForm { kSame, kLastAxis, kFlatten };

struct QLinearSoftmaxPlan {
  SoftmaxForm form;
  int64_t axis;  // the node's axis (kSame, kFlatten)
  int32_t type;
};

class QLinearSoftmaxRule : public NodeRule<QLinearSoftmaxPlan> {
 public:
  explicit QLinearSoftmaxRule(bool inexact)
      : NodeRule("lower-qlinear-softmax", "QLinearSoftmax", kMsDomain), inexact_(inexact) {}

 protected:
  Verdict<QLinearSoftmaxPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!inexact_)
      return Refuse(
          "onnxruntime computes it by lookup table: the QDQ form differs by up to one quantization step "
          "(lower-contrib-ops(inexact=true) lowers it)");
    const int64_t opset = node->graph()->OpsetVersion("");
    if (opset < 10) return Refuse("opset < 10 (QuantizeLinear, DequantizeLinear)");
    if (!node->input(0) || !node->input(1) || !node->input(3)) return Refuse("X, X_scale or y_scale is missing");
    if (!node->input(4)) return Refuse("y_zero_point is missing");
    const Attribute* node_opset = node->FindAttribute("opset");
    if (!node_opset) return Refuse("lacks the opset attribute");
    const bool flatten = node_opset->i() < 13;  // the node's semantics
    const TypeFacts& types = facts.Get<TypeFacts>();
    QLinearSoftmaxPlan plan{SoftmaxForm::kSame, IntAttr(*node, "axis", flatten ? 1 : -1),
                            ElemTypeOfAny(*node, {0, 4}, {0}, types)};
    if (plan.type != onnx::TensorProto::INT8 && plan.type != onnx::TensorProto::UINT8)
      return Refuse(absl::StrCat("the quantized type is ", TypeName(plan.type), ", not int8 or uint8"));
    if (flatten == (opset < 13)) return plan;
    // The model's Softmax means the other thing: the same over the last axis only.
    const int64_t rank = types.Rank(node->input(0));
    if (rank > 0 && (plan.axis == -1 || plan.axis == rank - 1)) {
      plan.form = SoftmaxForm::kLastAxis;
      return plan;
    }
    if (flatten) {
      plan.form = SoftmaxForm::kFlatten;
      return plan;
    }
    return Refuse("a single-axis softmax not over the last axis of a known rank, below opset 13");
  }

  Status Replace(Node* node, QLinearSoftmaxPlan plan, Rewriter& rw) const override {
    Value* x = rw.Op("DequantizeLinear", {node->input(0), node->input(1), node->input(2)});
    Value* y = nullptr;
    if (plan.form == SoftmaxForm::kSame) {
      y = rw.Op("Softmax", {x}, {Rewriter::AttrInt("axis", plan.axis)});
    } else if (plan.form == SoftmaxForm::kLastAxis) {
      y = rw.Op("Softmax", {x}, {Rewriter::AttrInt("axis", -1)});
    } else {  // opset >= 13, the node's 2-D coercion
      Value* flat = rw.Op("Flatten", {x}, {Rewriter::AttrInt("axis", plan.axis)});
      Value* soft = rw.Op("Softmax", {flat}, {Rewriter::AttrInt("axis", -1)});
      y = rw.Op("Reshape", {soft, rw.Op("Shape", {x})});
    }
    // onnxruntime multiplies by Floor(1 / y_scale): the output scale it really uses.
    Value* scale = rw.Op("Reciprocal", {rw.Op("Floor", {rw.Op("Reciprocal", {node->input(3)})})});
    return rw.ReplaceNode(node, {rw.Op("QuantizeLinear", {y, scale, node->input(4)})});
  }

 private:
  bool inexact_;
};

}  // namespace

std::vector<ContribRule> MakeQLinearSoftmaxRules(bool inexact) {
  std::vector<ContribRule> rules;
  rules.push_back({"QLinearSoftmax", std::make_unique<QLinearSoftmaxRule>(inexact)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
