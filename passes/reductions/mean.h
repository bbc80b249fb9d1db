// The mean of a tensor over some axes, in the forms exporters write it:
//
//   ReduceMean(v)                       axes as attribute (opset < 18) or input
//   GlobalAveragePool(v)                axes 2..rank-1
//   ReduceSum(v) * c  |  c * ReduceSum(v)   c = 1/N   (jax2tf + tf2onnx, tf.reduce_sum / n)
//   ReduceSum(v) / c                        c = N     (jnp.mean)
//
// where N is the number of elements reduced: the product of v's reduced dims, which must
// be static. c is a scalar constant of any float type, equal to 1/N (or N) within the
// rounding of that type (one unit in the last place): an fp16 1/768 is not exactly 1/768,
// and still means the mean. Shared by fix-layernorm (the LayerNorm's two means) and
// simplify's sum-to-mean rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/node.h"
#include "core/pattern/pattern.h"

namespace onnxsurgeon::reductions {

// Pattern: the mean of `v`, one of the forms above, captured as `capture` (the value the
// mean produces). The ReduceSum forms match any second operand; IsAverage checks it.
pattern::ValueRef MeanOf(pattern::Pattern& p, pattern::ValueRef v, std::string capture);

// The reduction node behind a value MeanOf matched: the ReduceMean, GlobalAveragePool or
// ReduceSum (the Mul/Div's operand), or null when `mean` is none of the forms.
const Node* ReductionOf(const Value* mean);

// The reduced axes of a Reduce* node, sorted, distinct and non-negative, for an input of
// rank `rank` (all axes when `axes` is empty or absent); nullopt when they are not
// constant, out of range, or the node reduces nothing (noop_with_empty_axes).
std::optional<std::vector<int64_t>> ReducedAxes(const Node& reduce, int64_t rank, std::string* why);

// N: how many elements of `summed` (the reduction's input, or a value of the same shape)
// each output of `reduce` sums; nullopt, saying why, when a reduced dim is not static.
std::optional<int64_t> ReducedCount(const Node& reduce, const Value* summed, std::string* why);

// True when `factor` is a scalar float constant that makes a sum over `n` elements its
// mean: 1/n when multiplying, n when dividing, within one unit in the last place of the
// factor's type. Otherwise false, saying why.
bool IsMeanFactor(const Value* factor, int64_t n, bool divides, std::string* why);

// Given a value MeanOf matched and a value with the shape of what it reduces (null: the
// reduction's own input). True when it is the mean: always for ReduceMean and
// GlobalAveragePool; for the ReduceSum forms when the factor is right for the static N.
bool IsAverage(const Value* mean, const Value* summed, std::string* why);

}  // namespace onnxsurgeon::reductions
