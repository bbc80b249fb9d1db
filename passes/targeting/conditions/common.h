// Small helpers the condition kinds share (how a value or node is named in a finding, what
// counts as a constant, argument parsing).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "core/ir/dtypes.h"
#include "core/ir/node.h"
#include "core/ir/shape.h"
#include "core/ir/status.h"
#include "core/ir/value.h"
#include "passes/targeting/conditions/condition.h"

namespace onnxsurgeon::target {

// An initializer that is not a graph input, or a Constant's output: known before run time.
bool IsConstant(const Value* v);
// Whether `v` is computed from tensor shapes and constants alone (Shape, Size, and arithmetic
// on them): converters fold it before anything runs. Past 64 levels a value counts as not
// derived (a fact then blocks: the safe side).
bool ShapeDerived(const Value* v);
// A value's shape as "[2,seq,?]", or "unknown shape".
std::string ShapeText(const Value& v);
// A node's name, or "<unnamed OP>".
std::string NodeName(const Node& n);
// Whether `f` holds for a tensor-typed input or output of `n` (inputs first).
bool AnyTensor(const Node& n, const std::function<bool(const Value&)>& f);

// The shape of `v` a remedy's dry run decides on: what the check knows (its TypeFacts); nullopt
// where the pass, which infers and sets shapes before it decides, may know more: the rank is
// unknown, or a dim is not static while the inputs are (or are given) static.
std::optional<Shape> RemedyShape(const Value* v, const RemedyContext& context);

// A non-negative integer argument ("input:1"), or an error naming the condition.
StatusOr<int64_t> ParseIndex(absl::string_view text, absl::string_view condition);
// An argument that must be present ("dtype:" needs a type).
Status NeedArgument(absl::string_view arguments, absl::string_view condition);

// The opset before the version of `n`'s op in force at its graph's opset (ReduceSum-13 ->
// 12), or -1 without a schema.
int64_t OpsetBeforeForm(const Node& n);

}  // namespace onnxsurgeon::target
