// convert-float16's precision rule: where float16 storage loses more than the values'
// own rounding (see docs/passes/convert-float16.md, "Precision: cancellation").
#pragma once

#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/ir/graph.h"

namespace onnxsurgeon::passes::fp16 {

// The largest cancellation a BatchNormalization may have and still read float16: its
// input x sits near the channel's mean, and x - mean keeps |x| / |x - mean| times float16's
// relative rounding (2^-11). At one standard deviation that ratio is
// kappa = (|mean| + sd) / sd; above 4 the normalized output loses two bits more than
// storing it in float16 does.
constexpr double kMaxBatchNormCancellation = 4.0;

// Nodes that must compute in float32 for precision, with the reason: every inference
// BatchNormalization (constant statistics) of `g` and its bodies whose kappa exceeds
// kMaxBatchNormCancellation, and the node that makes its input (so the input is not
// rounded to float16 before the subtraction); and every node upstream of a dynamic
// quantizer's float input (DynamicQuantizeLinear, com.microsoft DynamicQuantizeLSTM and
// DynamicQuantizeMatMul), which quantizes from the value's own range.
absl::flat_hash_map<const Node*, std::string> PrecisionKeeps(const Graph& g);

}  // namespace onnxsurgeon::passes::fp16
