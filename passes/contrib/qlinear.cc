// The QLinear contrib ops (com.microsoft) as their standard QDQ form (opset >= 10): each
// quantized operand dequantized, the float op, the result quantized again:
//   QLinearAdd / QLinearMul(A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point)
//     C = QuantizeLinear(Add / Mul(DequantizeLinear(A, ...), DequantizeLinear(B, ...)), C_scale, C_zero_point)
//   QLinearSigmoid(X, X_scale, X_zero_point, Y_scale, Y_zero_point): Sigmoid between
//   QLinearLeakyRelu(X, X_scale, X_zero_point, Y_scale, Y_zero_point)<alpha = 0.01>: LeakyRelu between
//   QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point): GlobalAveragePool (NCHW)
//   QLinearConcat(Y_scale, Y_zero_point, X1, X1_scale, X1_zero_point, ...)<axis>: Concat between
//   QLinearAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point)<pooling attributes>:
//     AveragePool between, its attributes kept (NCHW)
//   QLinearWhere(condition, X, x_scale, x_zero_point, Y, y_scale, y_zero_point, z_scale, z_zero_point):
//     Where(condition, ...) between (onnxruntime requantizes X and Y by tables built the same
//     way: exact)
// A missing zero point is 0 of the operand's type. onnxruntime's kernels compute in float
// too, but round in their own order (and by lookup table for Sigmoid / LeakyRelu): results
// may differ from its kernel by one quantization step.
// Refused: QLinearGlobalAveragePool / QLinearAveragePool with channels_last=1, an operand
// type that is not int8/uint8 (or unknown).
#include "absl/strings/str_cat.h"
#include "core/ir/tensor.h"
#include "passes/contrib/common.h"

namespace onnxsurgeon::contrib {
namespace {

struct Operand {
  size_t x, scale, zero;  // input indices
};

struct QLinearSpec {
  std::string op;                 // the float op between
  std::vector<Operand> operands;  // empty: QLinearConcat's (X, scale, zero point) triples from input 2
  size_t y_scale, y_zero;         // input indices of the output's quantization
  bool condition = false;         // input 0 goes to the float op first, as it is (Where's)
  bool keep_attributes = false;   // the float op takes the node's attributes (but channels_last)
};

struct QLinearPlan {
  int32_t type;  // the quantized type (int8 / uint8)
};

class QLinearRule : public NodeRule<QLinearPlan> {
 public:
  QLinearRule(std::string name, std::string op, QLinearSpec spec)
      : NodeRule(std::move(name), std::move(op), kMsDomain), spec_(std::move(spec)) {}

 protected:
  Verdict<QLinearPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (node->graph()->OpsetVersion("") < 10) return Refuse("opset < 10 (QuantizeLinear, DequantizeLinear)");
    if (IntAttr(*node, "channels_last", 0) != 0) return Refuse("channels_last=1 is not lowered");
    std::vector<Operand> operands = Operands(*node);
    if (operands.empty()) return Refuse("has no operand");
    for (const Operand& o : operands)
      if (!node->input(o.x) || !node->input(o.scale)) return Refuse("an operand or its scale is missing");
    if (!node->input(spec_.y_scale)) return Refuse("the output scale is missing");
    if (spec_.condition && !node->input(0)) return Refuse("the condition is missing");
    const TypeFacts& types = facts.Get<TypeFacts>();
    QLinearPlan plan{ElemTypeOfAny(*node, {static_cast<int>(operands[0].x)}, {0}, types)};
    if (plan.type != onnx::TensorProto::INT8 && plan.type != onnx::TensorProto::UINT8)
      return Refuse(absl::StrCat("the quantized type is ", TypeName(plan.type), ", not int8 or uint8"));
    return plan;
  }

  Status Replace(Node* node, QLinearPlan plan, Rewriter& rw) const override {
    Value* zero = nullptr;  // 0 of the quantized type, for missing zero points
    auto zero_point = [&](size_t i) -> StatusOr<Value*> {
      if (Value* z = node->input(i)) return z;
      if (!zero) {
        OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromInt64s(plan.type, {}, {0}));
        OS_ASSIGN_OR_RETURN(zero, rw.Constant(std::move(t), "zero_point"));
      }
      return zero;
    };
    std::vector<Value*> floats;
    for (const Operand& o : Operands(*node)) {
      OS_ASSIGN_OR_RETURN(Value * z, zero_point(o.zero));
      floats.push_back(rw.Op("DequantizeLinear", {node->input(o.x), node->input(o.scale), z}));
    }
    if (spec_.condition) floats.insert(floats.begin(), node->input(0));
    std::vector<onnx::AttributeProto> attrs;
    if (spec_.keep_attributes)
      for (const Attribute& a : node->attributes())
        if (a.name() != "channels_last") attrs.push_back(a.proto());
    if (spec_.op == "Concat") attrs.push_back(Rewriter::AttrInt("axis", IntAttr(*node, "axis", 0)));
    if (spec_.op == "LeakyRelu") attrs.push_back(Rewriter::AttrFloat("alpha", FloatAttr(*node, "alpha", 0.01f)));
    Value* y = rw.Op(spec_.op, floats, attrs);
    OS_ASSIGN_OR_RETURN(Value * yz, zero_point(spec_.y_zero));
    return rw.ReplaceNode(node, {rw.Op("QuantizeLinear", {y, node->input(spec_.y_scale), yz})});
  }

 private:
  std::vector<Operand> Operands(const Node& node) const {
    if (!spec_.operands.empty()) return spec_.operands;
    std::vector<Operand> triples;  // QLinearConcat
    for (size_t i = 2; i + 1 < node.num_inputs(); i += 3) triples.push_back({i, i + 1, i + 2});
    return triples;
  }

  QLinearSpec spec_;
};

}  // namespace

std::vector<ContribRule> MakeQLinearRules() {
  std::vector<ContribRule> rules;
  auto add = [&](const char* op, const char* name, QLinearSpec spec) {
    rules.push_back({op, std::make_unique<QLinearRule>(name, op, std::move(spec))});
  };
  add("QLinearAdd", "lower-qlinear-add", {"Add", {{0, 1, 2}, {3, 4, 5}}, 6, 7});
  add("QLinearMul", "lower-qlinear-mul", {"Mul", {{0, 1, 2}, {3, 4, 5}}, 6, 7});
  add("QLinearSigmoid", "lower-qlinear-sigmoid", {"Sigmoid", {{0, 1, 2}}, 3, 4});
  add("QLinearLeakyRelu", "lower-qlinear-leaky-relu", {"LeakyRelu", {{0, 1, 2}}, 3, 4});
  add("QLinearGlobalAveragePool", "lower-qlinear-global-average-pool", {"GlobalAveragePool", {{0, 1, 2}}, 3, 4});
  add("QLinearConcat", "lower-qlinear-concat", {"Concat", {}, 0, 1});
  add("QLinearAveragePool", "lower-qlinear-average-pool", {"AveragePool", {{0, 1, 2}}, 3, 4, false, true});
  add("QLinearWhere", "lower-qlinear-where", {"Where", {{1, 2, 3}, {4, 5, 6}}, 7, 8, true});
  return rules;
}

}  // namespace onnxsurgeon::contrib
