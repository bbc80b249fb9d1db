// Shapes of values as passes may rely on them: static sizes, and symbolic sizes that
// onnx shape inference (or the model's own annotations) proved equal by giving them the
// same dim_param.
//
// A shape comes from, in this order: an initializer's dims, a Constant node's tensor,
// the value's type (graph input/output/value_info entry, or what InferShapes recorded).
// Two dims are the same size when both are static and equal, or both carry the same
// non-empty dim_param: onnx shape inference only repeats a symbol it has proved equal.
//
// One exception to ONNX's "one dim_param is one size everywhere in a model": the same
// dim_param on two graph inputs of the main graph. Runtimes do not check it, and real
// models break it: optimum's merged decoders declare attention_mask as [batch_size,
// sequence_length] beside input_ids [batch_size, sequence_length], and feed it past +
// sequence long on the cached branch. So a graph input's dims are its own: a dim_param
// an earlier input already has reads as `<dim_param>@<input name>` (InputSymbol), here
// and in what onnx inference derives from the inputs (core/interop), and a rewrite never
// relies on two inputs being the same size because their declarations say so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/value.h"

namespace onnxsurgeon {

struct Dim {
  int64_t value = -1;  // >= 0 when static
  std::string symbol;  // dim_param, when symbolic

  static Dim Static(int64_t v) { return {v, {}}; }
  static Dim Symbolic(std::string s) { return {-1, std::move(s)}; }

  bool is_static() const { return value >= 0; }
  bool is_symbolic() const { return value < 0 && !symbol.empty(); }
  bool is_unknown() const { return value < 0 && symbol.empty(); }
  // True when both are provably the same size (unknown dims are never the same).
  bool SameAs(const Dim& other) const;
  std::string ToString() const;  // "4", "batch" or "?"
};

using Shape = std::vector<Dim>;

// The TensorProto element type of `value` (its type; an initializer's or a Constant
// node's data), 0 when unknown.
int32_t ElementType(const Value* value);

// The shape of `value`, or nullopt when not even its rank is known.
std::optional<Shape> ShapeOf(const Value* value);
// The symbol a main-graph input's dim_param stands for: `dim_param` itself, or
// `<dim_param>@<input name>` when an earlier input of the main graph declares the same
// dim_param (see above). Any other value: `dim_param`.
std::string InputSymbol(const Value* value, const std::string& dim_param);
// True when `symbol` (as analyses see it) is `dim_param` as declared: equal, or
// InputSymbol's `<dim_param>@<input name>`.
bool SymbolDeclaredAs(std::string_view symbol, std::string_view dim_param);
// The shape a type declares (what ShapeOf reads from a value's type), or nullopt when it
// is not a tensor type with a shape. The one reader of TensorShapeProto dims.
std::optional<Shape> ShapeOfType(const onnx::TypeProto* type);
// The sizes of `shape`, -1 where a dim is not static.
std::vector<int64_t> DimsOrMinusOne(const Shape& shape);
// The static dims of `value`, or nullopt when its rank or any dim is not static.
std::optional<std::vector<int64_t>> StaticShapeOf(const Value* value);
// The dims of `shape` when all are static, else nullopt.
std::optional<std::vector<int64_t>> StaticDims(const std::optional<Shape>& shape);

// True when both are tensor types with shapes that cannot describe one value: different
// ranks, or a dim both give as a size (>= 0) with different sizes. (A declared type that
// contradicts what the graph computes is stale: onnxruntime runs the model with a warning.)
bool ShapesContradict(const onnx::TypeProto& declared, const onnx::TypeProto& computed);

// True when both shapes have the same rank and every dim is SameAs its counterpart.
bool SameShape(const Shape& a, const Shape& b);
// Product of the dims when all are static, else nullopt.
std::optional<int64_t> NumElements(const Shape& shape);
std::string ShapeToString(const Shape& shape);  // "[batch,8,?]"

}  // namespace onnxsurgeon
