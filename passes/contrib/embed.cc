// EmbedLayerNormalization (com.microsoft): BERT's embeddings and their LayerNorm, as
// onnxruntime's CPU kernel computes them, in standard ops (opset >= 13):
//   e = Gather(word_embedding, input_ids) + Gather(position_embedding, positions)
//       (+ Gather(segment_embedding, segment_ids))        positions: position_ids, else [0, S)
//   output = LayerNormalization-17 of e over the last axis (opset >= 17; below, its
//            decomposition), gamma, beta, epsilon (default 1e-12)
//   mask_index = ReduceSum(Cast(Equal(mask, 1), int32), axis 1): each sequence's count of
//                ones, int32 [B] (zeros without a mask)
//   embedding_sum = e
//   Given:   %y, %m = EmbedLayerNormalization(%ids, %seg, %we, %pe, %se, %g, %b, %mask)
//   Result:  %e = Add(Add(Gather(%we, %ids), Gather(%pe, Range(0, S, 1))), Gather(%se, %seg))
//            %y = LayerNormalization<axis=-1>(%e, %g, %b)   %m = ReduceSum(Cast(Equal(%mask, 1)), [1])
// Refused: a node without word/position embeddings, gamma or beta; an element type that is
// not float; opset < 13.
// QEmbedLayerNormalization (the quantizer's): the same, each of word, position, segment
// embeddings, gamma and beta (inputs 2-6) a DequantizeLinear of its uint8/int8 table with
// its scale and zero point (inputs 8-12 and 13-17), the quantization kept; positions [0, S).
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/layer_norm.h"

namespace onnxsurgeon::contrib {
namespace {

struct EmbedPlan {
  float epsilon;
  int32_t type;
};

class EmbedLayerNormRule : public NodeRule<EmbedPlan> {
 public:
  EmbedLayerNormRule(bool layernorm_op, bool quantized)
      : NodeRule(quantized ? "lower-qembed-layernorm" : "lower-embed-layernorm",
                 quantized ? "QEmbedLayerNormalization" : "EmbedLayerNormalization", kMsDomain),
        layernorm_op_(layernorm_op),
        quantized_(quantized) {}

 protected:
  Verdict<EmbedPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(2) || !node->input(3) || !node->input(5) || !node->input(6))
      return Refuse("lacks input_ids, word or position embeddings, gamma or beta");
    if (quantized_) {
      if (node->num_inputs() > 18 || node->num_outputs() > 2) return Refuse("more than 18 inputs or 2 outputs");
      for (int i = 2; i <= 6; ++i)
        if (node->input(i) && !node->input(i + 6)) return Refuse(absl::StrCat("input ", i, " lacks its scale"));
    } else if (node->num_inputs() > 9 || node->num_outputs() > 3) {
      return Refuse("more than 9 inputs or 3 outputs");
    }
    if (node->input(4) && !node->input(1)) return Refuse("a segment embedding without segment_ids");
    if (node->graph()->OpsetVersion("") < 13) return Refuse("opset < 13 (ReduceSum and Unsqueeze with axes inputs)");
    EmbedPlan plan{FloatAttr(*node, "epsilon", 1e-12f),
                   quantized_ ? ElemTypeOfAny(*node, {8, 9, 11, 12}, {0}, facts.Get<TypeFacts>())
                              : ElemTypeOfAny(*node, {2, 3, 4, 5, 6}, {0, 2}, facts.Get<TypeFacts>())};
    if (plan.type == 0) return Refuse("the element type of the embeddings is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("the embeddings are ", TypeName(plan.type), ", not a float type"));
    return plan;
  }

  Status Replace(Node* node, EmbedPlan plan, Rewriter& rw) const override {
    const int64_t opset = node->graph()->OpsetVersion("");
    Value* ids = node->input(0);
    auto gather = [&](Value* table, Value* indices) {
      return rw.Op("Gather", {table, indices}, {Rewriter::AttrInt("axis", 0)});
    };
    // The tables: the quantized op's dequantized (scale at i + 6, zero point at i + 11).
    auto table = [&](int i) {
      if (!quantized_) return node->input(i);
      return rw.Op("DequantizeLinear", {node->input(i), node->input(i + 6), node->input(i + 11)});
    };
    Value* positions = quantized_ ? nullptr : node->input(8);
    if (!positions) {  // [0, S)
      Value* seq = rw.Op("Gather", {rw.Op("Shape", {ids}), rw.Int64s({1})});
      Value* zero = rw.Op("Squeeze", {rw.Int64s({0}), rw.Int64s({0})});
      Value* one = rw.Op("Squeeze", {rw.Int64s({1}), rw.Int64s({0})});
      positions = rw.Op("Range", {zero, rw.Op("Squeeze", {seq, rw.Int64s({0})}), one});
    }
    Value* sum = rw.Op("Add", {gather(table(2), ids), gather(table(3), positions)});
    if (node->input(4)) sum = rw.Op("Add", {sum, gather(table(4), node->input(1))});
    std::vector<Value*> out(3, nullptr);
    if (opset >= 17 && layernorm_op_) {
      out[0] = rw.Op("LayerNormalization", {sum, table(5), table(6)},
                     {Rewriter::AttrInt("axis", -1), Rewriter::AttrFloat("epsilon", plan.epsilon)});
    } else {
      lowering::LayerNormSpec spec;
      spec.x = sum;
      spec.scale = table(5);
      spec.bias = table(6);
      spec.epsilon = plan.epsilon;
      spec.elem_type = plan.type;
      OS_ASSIGN_OR_RETURN(lowering::LayerNormParts parts, lowering::EmitLayerNormDecomposition(rw, spec, opset, false));
      out[0] = parts.y;
    }
    if (OutputUsed(*node, 1)) {
      constexpr int32_t kInt32 = onnx::TensorProto::INT32;
      if (Value* mask = node->input(7)) {
        Value* ones = rw.Op("Equal", {mask, rw.Op("Cast", {rw.Int64s({1})}, {Rewriter::AttrInt("to", kInt32)})});
        Value* counted = rw.Op("Cast", {ones}, {Rewriter::AttrInt("to", kInt32)});
        out[1] = rw.Op("ReduceSum", {counted, rw.Int64s({1})}, {Rewriter::AttrInt("keepdims", 0)});
      } else {  // zeros [B]
        Value* batch = rw.Op("Gather", {rw.Op("Shape", {ids}), rw.Int64s({0})});
        Value* zeros = rw.Op("Mul", {rw.Op("Cast", {batch}, {Rewriter::AttrInt("to", kInt32)}),
                                     rw.Op("Cast", {rw.Int64s({0})}, {Rewriter::AttrInt("to", kInt32)})});
        out[1] = rw.Op("Expand", {zeros, batch});
      }
    }
    if (OutputUsed(*node, 2)) out[2] = sum;
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }

 private:
  bool layernorm_op_;
  bool quantized_;
};

}  // namespace

std::vector<ContribRule> MakeEmbedRules(bool layernorm_op) {
  std::vector<ContribRule> rules;
  rules.push_back({"EmbedLayerNormalization", std::make_unique<EmbedLayerNormRule>(layernorm_op, false)});
  rules.push_back({"QEmbedLayerNormalization", std::make_unique<EmbedLayerNormRule>(layernorm_op, true)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
