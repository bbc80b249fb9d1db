// What the rules of lower-contrib-ops share: the table of the ops they lower, and reading
// a contrib node's operands.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/type_facts.h"
#include "core/ir/node.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon::contrib {

inline constexpr const char* kMsDomain = "com.microsoft";

// The rules, one per op (lower-contrib-ops runs them; `ops` picks among them by op type).
//   norms.cc:        SkipLayerNormalization, SkipSimplifiedLayerNormalization,
//                    SimplifiedLayerNormalization, LayerNormalization (opset < 17)
//   activations.cc:  Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, BiasSplitGelu, GemmFastGelu
//   fused_conv.cc:   FusedConv, NhwcConv
//   quant.cc:        DynamicQuantizeMatMul, MatMulIntegerToFloat
//   quant_lstm.cc:   DynamicQuantizeLSTM (inexact=true only)
//   qlinear.cc:      QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
//                    QLinearGlobalAveragePool, QLinearConcat, QLinearAveragePool, QLinearWhere
//   qlinear_softmax.cc: QLinearSoftmax (inexact=true only)
//   qgemm.cc:        QGemm, QLinearConv (com.microsoft)
//   matmul.cc:       FusedMatMul, MatMulNBits
//   matmul_bnb4.cc:  MatMulBnb4
//   gather_block_quantized.cc: GatherBlockQuantized
//   rotary.cc:       RotaryEmbedding
//   attention.cc:    Attention, QAttention, MultiHeadAttention (attention_core.h: what the
//                    attention rules share)
//   embed.cc:        EmbedLayerNormalization, QEmbedLayerNormalization
//   gqa.cc:          GroupQueryAttention
//   group_norm.cc:   GroupNorm, SkipGroupNorm
//   rel_pos_bias.cc: RelativePositionBias, GatedRelativePositionBias
struct ContribRule {
  std::string op_type;  // the op it lowers (its domain is the rule's root domain)
  std::unique_ptr<RewriteRule> rule;
};
// `layernorm_op` / `gelu_op` false: never emit LayerNormalization / Gelu (a pass earlier in
// the pipeline lowered them on purpose), the decomposed forms instead.
std::vector<ContribRule> MakeNormRules(bool layernorm_op);
std::vector<ContribRule> MakeActivationRules(bool gelu_op);
// `dequantize`: MatMulNBits with float weights (the pass dequantizes them).
std::vector<ContribRule> MakeMatMulRules(bool dequantize);
// `dequantize`: float weights (tables) computed by the pass, as for MatMulNBits.
std::vector<ContribRule> MakeMatMulBnb4Rules(bool dequantize);
std::vector<ContribRule> MakeGatherBlockQuantizedRules(bool dequantize);
std::vector<ContribRule> MakeRotaryRules();
// The rotation of RotaryEmbedding (rotary.cc), shared with GroupQueryAttention's do_rotary:
// v [..., ..., ..., head_size] (rank 4), cos/sin [..., half] broadcastable against its
// rotary part; the first 2 * half channels rotate (halves, or interleaved pairs).
Value* EmitRotation(Rewriter& rw, Value* v, Value* cos, Value* sin, int64_t head_size, int64_t half, bool interleaved);
std::vector<ContribRule> MakeAttentionRules();
std::vector<ContribRule> MakeEmbedRules(bool layernorm_op);
std::vector<ContribRule> MakeGqaRules();
std::vector<ContribRule> MakeGroupNormRules();
std::vector<ContribRule> MakeRelPosBiasRules();
std::vector<ContribRule> MakeFusedConvRules();
std::vector<ContribRule> MakeQuantRules();
// `inexact`: lower it though onnxruntime quantizes its activations per step.
std::vector<ContribRule> MakeQuantLstmRules(bool inexact);
std::vector<ContribRule> MakeQLinearRules();
std::vector<ContribRule> MakeQGemmRules();
// `inexact`: lower it though onnxruntime's lookup-table kernel rounds differently.
std::vector<ContribRule> MakeQLinearSoftmaxRules(bool inexact);

// The op types the rules lower (the `ops` option's choices), in table order.
const std::vector<std::string>& LoweredOpTypes();

// True when output i exists and something reads it (a node or a graph output).
bool OutputUsed(const Node& node, size_t i);
// The element type the op's type parameter T stands for: the first known one among the
// given inputs and outputs (onnx inference does not type contrib ops' outputs, so an
// input's or an output's annotation, or an initializer, answers); 0 when none is known.
int32_t ElemTypeOfAny(const Node& node, const std::vector<int>& inputs, const std::vector<int>& outputs,
                      const TypeFacts& types);
// A float attribute, or `fallback` when absent.
float FloatAttr(const Node& node, const char* name, float fallback);
int64_t IntAttr(const Node& node, const char* name, int64_t fallback);
// "float16", "int32": a TensorProto data type's name for reasons.
std::string TypeName(int32_t elem_type);

}  // namespace onnxsurgeon::contrib
