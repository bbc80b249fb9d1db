#include "passes/contrib/common.h"

#include <cctype>

#include "onnx/onnx_pb.h"

namespace onnxsurgeon::contrib {

const std::vector<std::string>& LoweredOpTypes() {
  static const std::vector<std::string> ops = {"SkipLayerNormalization",
                                               "SkipSimplifiedLayerNormalization",
                                               "SimplifiedLayerNormalization",
                                               "LayerNormalization",
                                               "Gelu",
                                               "FastGelu",
                                               "BiasGelu",
                                               "QuickGelu",
                                               "BiasAdd",
                                               "FusedMatMul",
                                               "RotaryEmbedding",
                                               "MatMulNBits",
                                               "Attention",
                                               "MultiHeadAttention",
                                               "EmbedLayerNormalization",
                                               "GroupQueryAttention",
                                               "BiasSplitGelu",
                                               "FusedConv",
                                               "DynamicQuantizeMatMul",
                                               "MatMulIntegerToFloat",
                                               "QLinearAdd",
                                               "QLinearMul",
                                               "QLinearSigmoid",
                                               "QLinearLeakyRelu",
                                               "QLinearGlobalAveragePool",
                                               "QLinearConcat",
                                               "QLinearAveragePool",
                                               "QLinearWhere",
                                               "QLinearSoftmax",
                                               "QGemm",
                                               "QLinearConv",
                                               "GatherBlockQuantized",
                                               "MatMulBnb4",
                                               "QAttention",
                                               "QEmbedLayerNormalization",
                                               "DynamicQuantizeLSTM",
                                               "GroupNorm",
                                               "SkipGroupNorm",
                                               "RelativePositionBias",
                                               "GatedRelativePositionBias",
                                               "NhwcConv",
                                               "GemmFastGelu"};
  return ops;
}

bool OutputUsed(const Node& node, size_t i) { return node.output(i) && node.output(i)->HasUsers(); }

int32_t ElemTypeOfAny(const Node& node, const std::vector<int>& inputs, const std::vector<int>& outputs,
                      const TypeFacts& types) {
  for (int i : inputs)
    if (Value* v = node.input(i))
      if (int32_t t = types.ElemType(v)) return t;
  for (int i : outputs)
    if (Value* v = node.output(i))
      if (int32_t t = types.ElemType(v)) return t;
  return 0;
}

float FloatAttr(const Node& node, const char* name, float fallback) {
  const Attribute* a = node.FindAttribute(name);
  return a ? a->f(fallback) : fallback;
}

int64_t IntAttr(const Node& node, const char* name, int64_t fallback) {
  const Attribute* a = node.FindAttribute(name);
  return a ? a->i(fallback) : fallback;
}

std::string TypeName(int32_t elem_type) {
  if (elem_type == 0) return "unknown";
  std::string name = onnx::TensorProto::DataType_Name(static_cast<onnx::TensorProto::DataType>(elem_type));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace onnxsurgeon::contrib
