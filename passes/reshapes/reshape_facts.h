// Facts about Reshapes and 2-D products shared by fuse-reshapes' rules (reshape-noop,
// reshape-chain, matmul-add-gemm), flatten-region, and the ops written as Reshapes
// (transpose-to-reshape, flatten-to-reshape: as_reshape.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes::reshapes {

bool IsOp(const Node* n, std::string_view op);
Shape StaticShape(const std::vector<int64_t>& v);

// The shape input of a Reshape (opset >= 5) as constants, or nullopt.
std::optional<std::vector<int64_t>> ShapeInput(const Node& reshape);
bool AllowZero(const Node& reshape);

// The output shape of Reshape(input shaped `in`, `s`): onnx's rule
// (shape_rules::ReshapeShape), and where that leaves the -1 unknown, the one dim_param left
// after cancelling equal dims of input and output. Nullopt when `s` is invalid for `in`.
std::optional<Shape> ResolveReshape(const Shape& in, const std::vector<int64_t>& s, bool allowzero);

// Where `out` is `in` with dims of size 1 inserted (and nothing else changed), the output
// positions of the inserted dims, ascending (Unsqueeze's axes); else nullopt. Every dim of
// `in` must be provably the same as its counterpart (static and equal, or one dim_param),
// every inserted dim a static 1, and at least one dim inserted.
std::optional<std::vector<int64_t>> InsertedUnitAxes(const Shape& in, const Shape& out);

// Where Transpose `transpose` only moves dims of size 1 (the dims above 1 keep their order,
// so every element keeps its row-major offset), the shape of the equal Reshape: the output
// dims, -1 for the one dynamic dim allowed. Else nullopt and why (unknown shape, a dynamic
// unit candidate, dims above 1 reordered, more than one dynamic dim, a dim of size 0, the
// identity permutation).
std::optional<std::vector<int64_t>> TransposeAsReshape(const Node& transpose, std::string* why);

// Flatten(x, axis) as the Reshape it is: x in row-major order as [prod(dims[:axis]),
// prod(dims[axis:])]. The input's rank must be known; one side may hold dynamic dims (it
// becomes -1). Else nullopt and why (unknown shape, axis out of range, a side of size 0,
// which Reshape would read as "copy", both sides dynamic).
std::optional<std::vector<int64_t>> FlattenAsReshape(const Node& flatten, std::string* why);
// The same for the input shaped `x_shape` (nullopt: unknown): what flatten-to-reshape would
// decide once the types are those (the flatten-axis-not-one condition's remedy asks it).
std::optional<std::vector<int64_t>> FlattenAsReshape(const Node& flatten, const std::optional<Shape>& x_shape,
                                                     std::string* why);

// The shapes of a Reshape with a constant shape input and known input rank: what
// InsertedUnitAxes reads (`out` from ResolveReshape, never from the output's annotation).
struct ReshapeShapes {
  Shape in, out;
};
// The shapes, or why they are not known (the shape input is computed, the input's rank is
// unknown, the shape is invalid for the input, an output dim stays unknown).
std::optional<ReshapeShapes> KnownReshapeShapes(const Node& reshape, std::string* why);

// The shape of `v`: a Reshape's output is derived from its shape input and its input (a
// stale annotation would mislead every rule here); otherwise ShapeOf.
std::optional<Shape> ShapeOfValue(const Value* v);
std::optional<std::vector<int64_t>> StaticOf(const Value* v);

// Records a type on `v` in memory (not in value_info: nothing is saved that was not there).
void SetType(Value* v, int32_t elem_type, const std::vector<int64_t>& dims);

// Why Add(MatMul(A, B), C) cannot become Gemm when A is shaped `a` (empty: it can).
std::string GemmBlocker(const Node& matmul, const Node& add, const std::optional<Shape>& a);

// Ops flatten-region runs on a 2-D view: unary elementwise, binary elementwise.
bool IsUnary(const std::string& op);
bool IsBinary(const std::string& op);

}  // namespace onnxsurgeon::passes::reshapes
