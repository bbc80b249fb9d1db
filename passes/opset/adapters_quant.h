// Downgrade adapters for quantized weights (adapters_quant.cc). Internal to passes/opset;
// called from adapters.cc's Q/DQ adapters.
#pragma once

#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// DequantizeLinear-21 -> 19 of a stored int4/uint4 weight (and zero point): the same
// integers as int8/uint8. Leaves every other node as it is (the caller refuses those).
Status WidenFourBitWeight(StepContext& ctx);

}  // namespace onnxsurgeon::opset
