// What makes a model quantized, in numbers: Q/DQ nodes, QOperator nodes and the bytes of
// the quantized weights they read. The rewrite summary, `inspect`, the per-pass JSON
// report and fold-qdq give these before and after (a QDQ model stays one).
#pragma once

#include <cstdint>

#include "core/ir/model.h"

namespace onnxsurgeon {

struct QuantizationStats {
  int64_t q = 0;          // QuantizeLinear (ai.onnx, com.microsoft)
  int64_t dq = 0;         // DequantizeLinear (ai.onnx, com.microsoft)
  int64_t qoperator = 0;  // QLinear*, ConvInteger, MatMulInteger, DynamicQuantizeLinear, MatMulNBits, ...
  // Bytes of the constants these nodes read as quantized data: DequantizeLinear's x, the
  // integer weights of QLinearConv/QLinearMatMul/ConvInteger/MatMulInteger/MatMulNBits
  // (4-bit types at half a byte an element).
  int64_t weight_bytes = 0;
  bool any() const { return q + dq + qoperator > 0; }
};

// The main graph, subgraphs and function bodies.
QuantizationStats CountQuantization(const Model& model);

}  // namespace onnxsurgeon
