// The quantizer's integer Gemm and Conv (com.microsoft), their quantization kept:
//   QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point[, C[, y_scale, y_zero_point]])
//       <alpha, transA, transB>                                               (opset >= 10)
//     Y = Gemm<alpha, beta = alpha, transA, transB>(DequantizeLinear(A), DequantizeLinear(B),
//                                                   Cast(C, float) * (a_scale * b_scale))
//     then QuantizeLinear(Y, y_scale, y_zero_point) when y_scale is given (else Y is float).
//     b_scale / b_zero_point per column ([N], opset >= 13): DequantizeLinear<axis = transB ? 0 : 1>.
//     onnxruntime accumulates in int32 and requantizes by one multiplier: float output within
//     float rounding, quantized output one step off on 1 of 19,200 elements, equal elsewhere
//     (measured: tests/python/test_lower_contrib_qops.py).
//   QLinearConv (com.microsoft, onnxruntime's NHWC form): the standard QLinearConv (same
//     kernel in onnxruntime: exact); channels_last=1 between Transposes to NCHW and back.
// Refused: QGemm with y_scale but no y_zero_point, a b_scale or b_zero_point of unknown shape
// or per column below opset 13, A or B not int8/uint8; QLinearConv with channels_last=1 and
// an input of unknown rank.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"

namespace onnxsurgeon::contrib {
namespace {

bool IsInt8Type(int32_t t) { return t == onnx::TensorProto::INT8 || t == onnx::TensorProto::UINT8; }

struct QGemmPlan {
  bool per_column = false;  // b_scale or b_zero_point has N > 1 elements
};

class QGemmRule : public NodeRule<QGemmPlan> {
 public:
  QGemmRule() : NodeRule("lower-qgemm", "QGemm", kMsDomain) {}

 protected:
  Verdict<QGemmPlan> Check(Node* node, RewriteFacts& facts) const override {
    for (size_t i : {0, 1, 3, 4})
      if (!node->input(i)) return Refuse(absl::StrCat("input ", i, " is missing"));
    if (node->num_inputs() > 9) return Refuse("too many inputs");
    const int64_t opset = node->graph()->OpsetVersion("");
    if (opset < 10) return Refuse("opset < 10 (QuantizeLinear, DequantizeLinear)");
    if (node->input(7) && !node->input(8)) return Refuse("y_scale without y_zero_point");
    if (!node->input(7) && node->input(8)) return Refuse("y_zero_point without y_scale");
    const TypeFacts& types = facts.Get<TypeFacts>();
    for (int i : {0, 3}) {
      const int32_t t = ElemTypeOfAny(*node, {i}, {}, types);
      if (!IsInt8Type(t)) return Refuse(absl::StrCat("input ", i, " is ", TypeName(t), ", not int8 or uint8"));
    }
    QGemmPlan plan;
    for (size_t i : {4, 5}) {
      if (!node->input(i)) continue;
      std::optional<std::vector<int64_t>> dims = types.Dims(node->input(i));
      if (!dims) return Refuse(absl::StrCat("the shape of input ", i, " (B's quantization) is unknown"));
      int64_t n = 1;
      for (int64_t d : *dims) n = d < 0 ? -1 : n * d;
      if (n < 0) return Refuse(absl::StrCat("the shape of input ", i, " (B's quantization) is not static"));
      plan.per_column = plan.per_column || n > 1;
    }
    if (plan.per_column && opset < 13) return Refuse("B quantized per column below opset 13 (DequantizeLinear axis)");
    return plan;
  }

  Status Replace(Node* node, QGemmPlan plan, Rewriter& rw) const override {
    const float alpha = FloatAttr(*node, "alpha", 1.0f);
    const int64_t trans_b = IntAttr(*node, "transB", 0);
    Value* a = rw.Op("DequantizeLinear", {node->input(0), node->input(1), node->input(2)});
    std::vector<onnx::AttributeProto> b_attrs;
    if (plan.per_column) b_attrs.push_back(Rewriter::AttrInt("axis", trans_b != 0 ? 0 : 1));
    Value* b = rw.Op("DequantizeLinear", {node->input(3), node->input(4), node->input(5)}, b_attrs);
    std::vector<Value*> gemm_inputs = {a, b};
    std::vector<onnx::AttributeProto> attrs = {Rewriter::AttrFloat("alpha", alpha),
                                               Rewriter::AttrInt("transA", IntAttr(*node, "transA", 0)),
                                               Rewriter::AttrInt("transB", trans_b)};
    if (Value* c = node->input(6)) {  // int32, quantized with a_scale * b_scale and zero point 0
      Value* cf = rw.Op("Cast", {c}, {Rewriter::AttrInt("to", onnx::TensorProto::FLOAT)});
      gemm_inputs.push_back(rw.Op("Mul", {cf, rw.Op("Mul", {node->input(1), node->input(4)})}));
      attrs.push_back(Rewriter::AttrFloat("beta", alpha));  // onnxruntime scales C with the product
    }
    Value* y = rw.Op("Gemm", gemm_inputs, attrs);
    if (node->input(7)) y = rw.Op("QuantizeLinear", {y, node->input(7), node->input(8)});
    return rw.ReplaceNode(node, {y});
  }
};

struct QLinearConvPlan {
  int64_t rank = 0;  // with channels_last: the input's rank (Transposes)
};

class QLinearConvRule : public NodeRule<QLinearConvPlan> {
 public:
  QLinearConvRule() : NodeRule("lower-qlinear-conv", "QLinearConv", kMsDomain) {}

 protected:
  Verdict<QLinearConvPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (node->graph()->OpsetVersion("") < 10) return Refuse("opset < 10 (QLinearConv)");
    if (node->num_outputs() != 1) return Refuse("not one output");
    QLinearConvPlan plan;
    if (IntAttr(*node, "channels_last", 0) == 0) return plan;
    plan.rank = facts.Get<TypeFacts>().Rank(node->input(0));
    if (plan.rank < 3) return Refuse("channels_last=1 with an input of unknown rank (or below 3)");
    return plan;
  }

  Status Replace(Node* node, QLinearConvPlan plan, Rewriter& rw) const override {
    std::vector<onnx::AttributeProto> attrs;
    for (const Attribute& a : node->attributes())
      if (a.name() != "channels_last") attrs.push_back(a.proto());
    std::vector<Value*> inputs;
    for (size_t i = 0; i < node->num_inputs(); ++i) inputs.push_back(node->input(i));
    if (plan.rank == 0) return rw.ReplaceNode(node, {rw.Op("QLinearConv", inputs, attrs)});
    std::vector<int64_t> to_first = {0, plan.rank - 1}, to_last = {0};
    for (int64_t d = 1; d + 1 < plan.rank; ++d) to_first.push_back(d);
    for (int64_t d = 2; d < plan.rank; ++d) to_last.push_back(d);
    to_last.push_back(1);
    inputs[0] = rw.Op("Transpose", {inputs[0]}, {Rewriter::AttrInts("perm", to_first)});
    Value* y = rw.Op("QLinearConv", inputs, attrs);
    return rw.ReplaceNode(node, {rw.Op("Transpose", {y}, {Rewriter::AttrInts("perm", to_last)})});
  }
};

}  // namespace

std::vector<ContribRule> MakeQGemmRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"QGemm", std::make_unique<QGemmRule>()});
  rules.push_back({"QLinearConv", std::make_unique<QLinearConvRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
