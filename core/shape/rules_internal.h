// Families of rules split out of rules.cc, one file each; InferNode dispatches to them.
#pragma once

#include <optional>
#include <vector>

#include "core/shape/rules.h"

namespace onnxsurgeon::shape_rules {

using Out = std::vector<std::optional<TensorType>>;

// Given a node and its input types (every present input known; an absent one is empty).
// Execute nothing. Result nullopt when the op is not of the family; else one entry per
// output, nullopt where the rule does not decide it.
// Conv, MaxPool, AveragePool, Global*Pool, BatchNormalization, InstanceNormalization.
std::optional<Out> InferNn(const Node& n, const std::vector<TensorType>& ins);
// Slice, ConstantOfShape, and ops shaped like one input (Trilu, Scatter*, GatherElements).
std::optional<Out> InferData(const Node& n, const std::vector<TensorType>& ins, TypeLookup type_of);

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
