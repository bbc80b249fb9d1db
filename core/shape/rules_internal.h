// Data propagation the shape rules share (rules_data.cc); the rules themselves are in the
// op table (core/shape/op_table.h).
#pragma once

#include <optional>
#include <vector>

#include "core/shape/rules.h"

namespace onnxsurgeon::shape_rules {

using Out = std::vector<std::optional<TensorType>>;

// An initializer that is also a graph input: onnx reads its data, we may not (it can be
// overridden at run time), so rules that would fall back on "not constant" decide nothing.
bool Overridable(const Value* v);

// The elements of a 0-D/1-D int64 value as dims, as onnx's data propagation follows them
// from constants and Shape through Gather, Unsqueeze, Squeeze, Concat and Cast; nullopt
// when some element is not a static size or a symbol (then onnx may know more than we do),
// or the value is an initializer a graph input overrides.
std::optional<Shape> ShapeData(const Value* v, TypeLookup type_of, int depth = 0);

// The elements of a 0-D/1-D int64 value when all are known numbers, negative ones included
// (a Reshape target Concat(batch, [-1]), a Slice bound): constants, and what ShapeData
// finds static, joined through Concat, Unsqueeze, Squeeze, Identity and Cast to int64.
std::optional<std::vector<int64_t>> IntData(const Value* v, TypeLookup type_of, int depth = 0);

}  // namespace onnxsurgeon::shape_rules
