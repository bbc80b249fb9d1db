// Symbolic shape analysis: what the small integer and bool vectors of a graph compute,
// element by element, when dims are only known up to a symbol.
//
// Exporters compute shapes at run time even where the answer is known up to a symbol:
// `x.view(x.size(0), -1)` becomes Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
// One walk per graph in topological order gives every small integer or bool vector (rank
// 0 or 1, at most kMaxElems elements) built from Shape, Size, Gather, Slice, Unsqueeze,
// Squeeze, Concat, Reshape, Identity, Cast, Add, Sub, Mul, Div, Equal, Not and Where a
// list of elements, each a constant or a symbol:
//   - a dim of a value's shape (a static size, a dim_param -- one dim_param is one size
//     everywhere in a model -- or, for an unknown dim, "dim i of that value"),
//   - element i of a vector the walk cannot see through (itself, and nothing else),
//   - an arithmetic expression of symbols (equal only to the same expression).
// Dims are sizes, so they are never negative; Equal(dim, -1) is decided false.
//
// The analysis only reads the graph. Its facts stay true while rewrites replace values by
// values that compute the same thing (as the resolve-shapes rules do): a value's vector
// is what it computes, whoever reads it. Values made after the walk (a rewrite's new
// constant) are read on demand: constants as constants, others as vectors of their own.
// This is the DataFlowSolver of MLIR's IntRangeOptimizations: the rules query it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/ir/shape.h"

namespace onnxsurgeon {

// One element of a vector: a constant, or a symbol (equal only to the same key).
struct SymbolicElem {
  bool is_const = false;
  int64_t c = 0;        // when is_const
  std::string key;      // when !is_const
  bool nonneg = false;  // provably >= 0

  static SymbolicElem Const(int64_t v) { return {true, v, {}, v >= 0}; }
  static SymbolicElem Sym(std::string key, bool nonneg) { return {false, 0, std::move(key), nonneg}; }
  std::string Key() const;
  // The dim this element stands for as a size: a constant >= 0 is static (a negative one
  // unknown), a dim_param its symbol, any other symbol a symbol of its own ("%" and its key).
  Dim AsDim() const;
  bool Same(const SymbolicElem& other) const {
    return is_const == other.is_const && (is_const ? c == other.c : key == other.key);
  }
};

// What the analysis knows of a small integer or bool value of rank 0 or 1.
struct SymbolicVector {
  int32_t dtype = 0;    // INT64, INT32 or BOOL
  bool scalar = false;  // rank 0 (one element) or rank 1
  std::vector<SymbolicElem> elems;

  bool AllConst() const;
  std::string Key() const;  // equal keys: equal element lists, dtype and rank
};

class SymbolicShapes {
 public:
  static constexpr size_t kMaxElems = 64;

  SymbolicShapes() = default;
  // The analysis of a model's main graph and local functions (RewriteFacts builds it so:
  // rules that compare dims ask it, core/rewrite/facts.h). It only reads the model.
  explicit SymbolicShapes(const Model& model);

  // Given a graph in topological order (subgraphs too). Execute reads it: every node's
  // subgraphs, then the node. Result the facts below cover its values.
  void Analyze(Graph& graph);

  // Given subgraphs. Execute: from now on the analysis describes no value of theirs (a
  // subgraph that fails for the shapes the model has: core/shape/contradictions.h).
  void Exclude(const absl::flat_hash_set<const Graph*>& graphs) { excluded_.insert(graphs.begin(), graphs.end()); }

  // ---- queries ----------------------------------------------------------------------
  // The vector `v` computes, or null when it is not a small integer/bool vector the
  // analysis can describe.
  const SymbolicVector* VectorOf(Value* v) const;
  // True when the walk derived `v`'s vector from its producer's op (rather than `v`
  // being a constant or a vector it cannot see through).
  bool IsComputed(const Value* v) const { return computed_.contains(v); }
  // The first value (in walk order, this graph or an enclosing one) whose element list
  // equals `v`'s; `v` itself when it is the first, or all constant, or not described.
  Value* FirstWithSameElements(Value* v) const;
  // The elements of `v` when all are constant integers (decided symbolically or not).
  std::optional<std::vector<int64_t>> Int64s(Value* v) const;
  // The single truth value of bool `v`, when every element is the same constant.
  std::optional<bool> UniformBool(Value* v) const;
  // The shape of `v` as far as known: a described vector's own (rank 0 or [n]), else the
  // value's shape (core/ir/shape.h).
  std::optional<Shape> ShapeFor(Value* v) const;

  // The element that stands for dim `i` of `v`, whose shape is `shape`.
  SymbolicElem DimOf(const Value* v, const Shape& shape, size_t i) const;
  // Element `i` of `v` as a symbol of its own: what a vector the analysis cannot see
  // through (or one element of it) stands for.
  SymbolicElem OwnElem(const Value* v, size_t i) const;

  // The shape of `v` as its producer computes it, for Expand, Reshape and ConstantOfShape
  // whose target vector the analysis describes; else the value's shape (core/ir/shape.h).
  // A dim read from another value's shape keeps that value's dim (its dim_param), so it
  // is SameAs that dim: exporters and onnx's inference give such dims fresh names of their
  // own (tf2onnx's unk__214 for what Shape(x)[0] gives, x's dim being unk__3), which the
  // declared shape alone cannot relate. An element the analysis only knows as an
  // expression stands as a symbol of its own ("%" and its key).
  std::optional<Shape> ComputedShape(Value* v) const;

 private:
  void Evaluate(Node* n);
  std::optional<SymbolicVector> Compute(Node* n) const;
  Value* Register(Value* v, const SymbolicVector& vec) const;

  // Memo of VectorOf (node map: pointers to vectors stay valid as it grows).
  mutable absl::node_hash_map<const Value*, std::optional<SymbolicVector>> vectors_;
  absl::flat_hash_set<const Value*> computed_;
  // The name of a value in element keys: a number in first-seen order, so keys (and what
  // depends on their order) do not change with where the allocator put the value.
  std::string IdOf(const Value* v) const;
  mutable absl::flat_hash_map<const Value*, size_t> ids_;
  absl::flat_hash_set<const Graph*> excluded_;
  // The first value of each element list, per graph.
  mutable absl::flat_hash_map<const Graph*, absl::flat_hash_map<std::string, Value*>> first_;
};

}  // namespace onnxsurgeon
