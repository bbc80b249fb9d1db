#include "core/inspect/quantization.h"

#include <initializer_list>

#include "absl/strings/match.h"
#include "core/ir/constant.h"
#include "core/ir/domains.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {
namespace {
using Types = onnx::TensorProto;

int64_t QuantizedBytes(const Value* v) {
  if (v == nullptr) return 0;
  auto td = GetConstantTypeAndDims(v);
  if (!td) return 0;
  int64_t bits = 0;
  switch (td->first) {
    case Types::INT8:
    case Types::UINT8: bits = 8; break;
    case Types::INT16:
    case Types::UINT16: bits = 16; break;
    case Types::INT4:
    case Types::UINT4: bits = 4; break;
    case Types::INT32:  // the int32 biases DequantizeLinear reads
      bits = 32;
      break;
    default: return 0;
  }
  int64_t elements = 1;
  for (int64_t d : td->second) elements *= d;
  return (elements * bits + 7) / 8;
}

}  // namespace

QuantizationStats CountQuantization(const Model& model) {
  QuantizationStats s;
  for (const Graph* g : model.AllGraphs()) {
    for (const Node* n : g->nodes()) {
      const std::string_view domain = CanonicalDomain(n->domain());
      const bool onnx = domain.empty(), ms = n->domain() == "com.microsoft";
      if (!onnx && !ms) continue;
      auto weights = [&](std::initializer_list<size_t> ids) {
        for (size_t i : ids) s.weight_bytes += QuantizedBytes(n->input(i));
      };
      const std::string& op = n->op_type();
      if (op == "QuantizeLinear") {
        ++s.q;
      } else if (op == "DequantizeLinear") {
        ++s.dq;
        weights({0});
      } else if (op == "QLinearConv") {
        ++s.qoperator;
        weights({3});
      } else if (op == "QLinearMatMul" || op == "MatMulInteger" || op == "ConvInteger") {
        ++s.qoperator;
        weights(op == "QLinearMatMul" ? std::initializer_list<size_t>{0, 3} : std::initializer_list<size_t>{0, 1});
      } else if (op == "MatMulNBits" || op == "MatMulIntegerToFloat" || op == "DynamicQuantizeMatMul" ||
                 op == "GatherBlockQuantized") {
        ++s.qoperator;
        weights({op == "GatherBlockQuantized" ? size_t{0} : size_t{1}});
      } else if (absl::StartsWith(op, "QLinear") || op == "DynamicQuantizeLinear" || op == "QGemm" ||
                 op == "QAttention" || op == "DynamicQuantizeLSTM" || op == "QOrderedMatMul") {
        ++s.qoperator;
      }
    }
  }
  return s;
}

}  // namespace onnxsurgeon
