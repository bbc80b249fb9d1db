// Helpers the op families share (core/shape/ops/*.cc); internal to core/shape.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/shape/op_table.h"

namespace onnxsurgeon::shape_ops {

// An axis in [-rank, rank) made non-negative; nullopt when out of range.
std::optional<int64_t> NormAxis(int64_t axis, int64_t rank);
// Axes from attribute "axes" (opset below `input_since`) or from constant input 1.
// nullopt when they cannot be read; an empty list when absent.
std::optional<std::vector<int64_t>> Axes(const Node& n, int64_t input_since);

// Integer arithmetic on vector elements.
bool IsIntType(int32_t t);
// True when `v` is representable in `dtype` (INT32, BOOL; INT64 always).
bool Fits(int32_t dtype, int64_t v);
// Given two elements and an operator (+ - * /). Result their combination (nullopt when
// not sound to express: overflow, division by zero).
std::optional<SymbolicElem> Arith(char op, const SymbolicElem& a, const SymbolicElem& b);

// The int64 vector (rank 1) the analysis describes for input i of the node, else null:
// the shape operand a computed-shape rule reads.
const SymbolicVector* ShapeOperand(const SymbolicInput& in, size_t i);

}  // namespace onnxsurgeon::shape_ops
