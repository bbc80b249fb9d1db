// Downgrade adapters for attributes judged by value (adapters_by_value.cc). Internal to
// passes/opset; registered in adapters.cc.
#pragma once

#include "passes/opset/step.h"

namespace onnxsurgeon::opset {

// ReduceSum-13 -> 11, Reduce*-18 -> 13: noop_with_empty_axes judged by the axes (constant
// non-empty: dropped; empty: Identity; computed at run time: refused).
Status ReduceNoopWithEmptyAxesDown(StepContext& ctx);
// AveragePool-10 -> 7, MaxPool-10 -> 8: ceil_mode dropped where ceil and floor give the same size.
Status PoolCeilModeDown(StepContext& ctx);
// MaxPool-8 -> 1: storage_order, which only orders the Indices output.
Status MaxPoolStorageOrderDown(StepContext& ctx);
// QuantizeLinear-19 -> 13: saturate, which only matters for float8 outputs.
Status QuantizeSaturateDown(StepContext& ctx);
// QuantizeLinear/DequantizeLinear-21 -> 19: stored 4-bit weights widened to 8 bits
// (adapters_quant.h); block_size and other 4- and 16-bit values refused.
Status QuantizeLinear21Down(StepContext& ctx);
// QuantizeLinear/DequantizeLinear-13 -> 10: per-axis scales refused.
Status QuantizeLinear13Down(StepContext& ctx);
// TopK-11 -> 10: largest=0 as TopK of the negated input (floating point); sorted=0 kept sorted.
Status TopKDown(StepContext& ctx);
// ArgMax/ArgMin-12 -> 11: select_last_index=1 as the first index of the reversed axis.
Status ArgSelectLastIndexDown(StepContext& ctx);

}  // namespace onnxsurgeon::opset
