// Element types and ranks of values, for lowerings that must emit constants in x's type
// or know which axes they reduce.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/ir/model.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"
#include "core/ir/value.h"

namespace onnxsurgeon::lowering {

// Element types: ElementType in core/ir/shape.h.

// The rank of `value` (ShapeOf: initializer or Constant dims, or its type), or -1 when unknown.
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
