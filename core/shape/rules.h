// The per-op rules behind PropagatedTypes (propagate.h).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::shape_rules {

// A tensor type with a known rank; dims may be static, symbolic or unknown.
struct TensorType {
  int32_t elem = 0;  // onnx::TensorProto::DataType, never 0
  Shape shape;
};

// The known type of an input value, or nullopt (no element type or no rank).
using TypeLookup = absl::FunctionRef<std::optional<TensorType>(const Value*)>;

// Given a node. Execute nothing. Result one entry per output: its type where a rule for
// the node's op decides it exactly, nullopt elsewhere (also for ops without a rule).
std::vector<std::optional<TensorType>> InferNode(const Node& node, TypeLookup type_of);

// onnx's Reshape rule for an input shaped `in` and a constant shape input `target`: 0
// copies the input dim (unless allowzero), -1 is the input's element count over the
// others when that is known (static), else an unknown dim. Nullopt when `target` is
// invalid for `in` (two -1s, a size below -1, a 0 past the input's rank, a count that
// does not divide).
std::optional<Shape> ReshapeShape(const Shape& in, const std::vector<int64_t>& target, bool allowzero);

// Multidirectional (numpy) broadcast of `shapes`. A dim is given only when decidable:
// one static size other than 1 (the others 1 or symbolic), or one symbol (the others 1);
// an unknown dim only where all others are 1. Otherwise nullopt: the whole result is
// left unknown rather than half-guessed.
std::optional<Shape> Broadcast(const std::vector<const Shape*>& shapes);

}  // namespace onnxsurgeon::shape_rules
