// What decompose-dynamic-quantize(to=float) decides: whether a DynamicQuantizeLinear and the
// MatMulInteger/ConvInteger nodes that read its output can be written in float arithmetic on
// the same integers, exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/node.h"

namespace onnxsurgeon::passes {

// A MatMulInteger or ConvInteger reading the quantized value, with its weight as float
// (W - w_zero_point: integers, exact).
struct IntegerConsumer {
  Node* node;
  std::vector<double> weight;
  std::vector<int64_t> dims;
};

struct FloatDynamicQuantPlan {
  std::vector<IntegerConsumer> consumers;
};

// Every partial sum of a float MatMul/Conv of (q - zp) by (W - w_zp) is an integer of at
// most 255 * sum |W - w_zp| over one output's weights; float32 holds integers exactly up
// to 2^24, so the float form is exact (in any summation order) while that sum is below it.
inline constexpr double kFloatExactIntegers = 16777216.0;

// The plan for the DynamicQuantizeLinear `dql`, or nullopt with `why` set: x is not
// float32, its quantized output is read by something other than a MatMulInteger or
// ConvInteger (input 0, with dql's zero point as a_zero_point) or is a graph output, a
// weight or weight zero point is not a constant int8/uint8, or the bound above is exceeded.
std::optional<FloatDynamicQuantPlan> PlanFloatDynamicQuant(const Node& dql, std::string* why);

}  // namespace onnxsurgeon::passes
