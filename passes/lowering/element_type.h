// Element types and ranks of values, for lowerings that must emit constants in x's type
// or know which axes they reduce.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/model.h"
#include "core/ir/node.h"
#include "core/ir/value.h"

namespace onnxsurgeon::lowering {

// The TensorProto element type of `value` (from its type or, for a constant, its data),
// or 0 when unknown.
int32_t ElementType(const Value* value);

// The rank of `value` (initializer dims or inferred shape), or -1 when unknown.
int64_t Rank(const Value* value);

// Given a model and an op type. Execute: when some node of that op (main graph) reads an
// input 0 whose element type is unknown, runs onnx shape inference once so the types are
// recorded (errors ignored: the caller then refuses those nodes with a reason).
// Result types known where inference could find them.
void InferTypesIfNeeded(Model& model, std::string_view op_type);

// Why a lowering that needs `value`'s element type refuses: "unknown" with a hint (in a
// function body, where parameters are untyped: inline the function first), or the type
// that is not a float type.
std::string WhyNotFloat(const Node& node, const Value* value);

// True for the float types Gelu/Erf lowerings emit constants for.
bool IsFloatType(int32_t elem_type);

}  // namespace onnxsurgeon::lowering
