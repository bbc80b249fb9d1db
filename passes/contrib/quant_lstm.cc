// DynamicQuantizeLSTM (com.microsoft; onnxruntime's quantize_dynamic writes it for LSTM):
// LSTM with int8/uint8 weights, W [D, input, 4H] and R [D, H, 4H] (transposed against LSTM's),
// their scales and zero points per direction [D] or per direction and column [D, 4H].
// Lowered only with inexact=true: onnxruntime's kernel runs its GEMMs in 8 bits, X and each
// step's hidden state quantized on the fly (measured up to 0.0031 from the float LSTM on the
// dequantized weights, outputs in (-1, 1), tests/python/test_lower_contrib_quant_lstm.py); the
// lowering is that float LSTM, the int8 weights kept as constants:
//   Given:   %y, %yh, %yc = DynamicQuantizeLSTM<hidden_size=16>(%x, %w, %r, %b, , %h0, %c0, , %ws, %wz, %rs, %rz)
//   Result:  %wf = Transpose<perm=[0, 2, 1]>((Cast(%w) - Reshape(Cast(%wz), [0, 1, -1])) * Reshape(%ws, [0, 1, -1]))
//            (%rf likewise)   %y, %yh, %yc = LSTM<hidden_size=16>(%x, %wf, %rf, %b, , %h0, %c0)
// Refused: without inexact=true (named), an X that is not float, scales of unknown rank.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"

namespace onnxsurgeon::contrib {
namespace {

struct QuantLstmPlan {
  int32_t type;
};

class DynamicQuantizeLstmRule : public NodeRule<QuantLstmPlan> {
 public:
  explicit DynamicQuantizeLstmRule(bool inexact)
      : NodeRule("lower-dynamic-quantize-lstm", "DynamicQuantizeLSTM", kMsDomain), inexact_(inexact) {}

 protected:
  Verdict<QuantLstmPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!inexact_)
      return Refuse(
          "onnxruntime quantizes X and each hidden state per step: the float LSTM differs within its "
          "quantization (inexact=true lowers it)");
    for (int i : {0, 1, 2, 8, 10})
      if (!node->input(i)) return Refuse("lacks X, W, R or their scales");
    if (node->num_inputs() > 12 || node->num_outputs() > 3) return Refuse("more than 12 inputs or 3 outputs");
    const TypeFacts& types = facts.Get<TypeFacts>();
    QuantLstmPlan plan{ElemTypeOfAny(*node, {0, 3, 8}, {0}, types)};
    if (plan.type != onnx::TensorProto::FLOAT) return Refuse(absl::StrCat("X is ", TypeName(plan.type), ", not float"));
    for (int i : {8, 10})
      if (int64_t rank = types.Rank(node->input(i)); rank != 1 && rank != 2)
        return Refuse("a scale of unknown rank or not [D] / [D, 4H]");
    return plan;
  }

  Status Replace(Node* node, QuantLstmPlan plan, Rewriter& rw) const override {
    // [D] or [D, 4H] -> [D, 1, 1] or [D, 1, 4H], against the weight [D, rows, 4H].
    auto per_column = [&](Value* v) { return rw.Op("Reshape", {v, rw.Int64s({0, 1, -1})}); };
    auto to_float = [&](Value* v) { return rw.Op("Cast", {v}, {Rewriter::AttrInt("to", plan.type)}); };
    auto dequantize = [&](int weight, int scale, int zero_point) {
      Value* w = to_float(node->input(weight));
      if (Value* zp = node->input(zero_point)) w = rw.Op("Sub", {w, per_column(to_float(zp))});
      w = rw.Op("Mul", {w, per_column(node->input(scale))});
      return rw.Op("Transpose", {w}, {Rewriter::AttrInts("perm", {0, 2, 1})});
    };
    std::vector<Value*> inputs = {node->input(0), dequantize(1, 8, 9), dequantize(2, 10, 11)};
    for (int i = 3; i <= 7; ++i) inputs.push_back(node->input(i));
    while (!inputs.back()) inputs.pop_back();
    std::vector<onnx::AttributeProto> attrs;
    for (const Attribute& a : node->attributes()) attrs.push_back(a.proto());
    Node* lstm = rw.Create("LSTM", inputs, attrs, 3);
    std::vector<Value*> out = {lstm->output(0), lstm->output(1), lstm->output(2)};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }

 private:
  bool inexact_;
};

}  // namespace

std::vector<ContribRule> MakeQuantLstmRules(bool inexact) {
  std::vector<ContribRule> rules;
  rules.push_back({"DynamicQuantizeLSTM", std::make_unique<DynamicQuantizeLstmRule>(inexact)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
