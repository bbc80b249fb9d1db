// The op table: per op of the default domain, what the analyses and constant evaluation
// know of it, so each op family says it once (core/shape/ops/<family>.cc, and the kernel
// files of core/eval) instead of every analysis dispatching on the op's name in a chain
// of its own.
//
//   shape     output types from the input types (PropagatedTypes, core/shape/propagate.h)
//   symbolic  the element list of a small integer vector it computes (SymbolicShapes,
//             core/shape/symbolic.h)
//   data      the elements of a small integer vector it computes, as onnx's data
//             propagation follows them (shape operands: shape_rules::ShapeData)
//   ints      the elements of an integer vector it computes when all are known numbers,
//             negative ones included (a Reshape target's -1: shape_rules::IntData)
//   computed  its output's shape from the symbolic analysis' vector of its shape operand
//             (Expand, Reshape, ConstantOfShape: SymbolicShapes::ComputedShape)
// Constant evaluation's kernels are keyed by the same op and looked up in core/eval
// (eval::FindKernel), which sits below this table.
// Ops without a local rule fall back on onnx's schema inference (TypeFacts::InferBySchema,
// core/analysis/type_facts.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/shape/rules.h"
#include "core/shape/rules_internal.h"
#include "core/shape/symbolic.h"

namespace onnxsurgeon::shape_ops {

using shape_rules::TensorType;
using shape_rules::TypeLookup;
using Out = std::vector<std::optional<TensorType>>;

// What a shape rule reads: the node, its inputs' types (every present input known, an
// absent optional one empty; input 0 present), the operand values through `type_of`, and
// the default domain's opset of the node's graph.
struct ShapeInput {
  const Node& node;
  const std::vector<TensorType>& ins;
  TypeLookup type_of;
  int64_t opset;

  const TensorType& x() const { return ins[0]; }
  // Out with output 0 of element type `elem` and shape `s`, where both are known.
  Out One(std::optional<TensorType> t) const;
  Out Typed(int32_t elem, std::optional<Shape> s) const;
  Out None() const { return Out(node.num_outputs()); }
};
using ShapeRule = Out (*)(const ShapeInput&);

// What a symbolic rule reads: the node (one output) and the analysis so far.
struct SymbolicInput {
  Node* node;
  const SymbolicShapes& facts;
  int64_t opset;

  const SymbolicVector* In(size_t i) const { return facts.VectorOf(node->input(i)); }
};
using SymbolicRule = std::optional<SymbolicVector> (*)(const SymbolicInput&);

// What a data rule reads: the node computing the vector asked about, the operands' types,
// and how deep the walk is (ShapeData gives up past a depth).
struct DataInput {
  const Node& node;
  TypeLookup type_of;
  int depth;

  // The elements of input i, one level deeper.
  std::optional<Shape> Operand(size_t i) const { return shape_rules::ShapeData(node.input(i), type_of, depth + 1); }
};
using DataRule = std::optional<Shape> (*)(const DataInput&);

// What an ints rule reads: the node computing the vector asked about (its output 0), the
// operands' types, and how deep the walk is.
struct IntsInput {
  const Node& node;
  TypeLookup type_of;
  int depth;

  // The elements of input i, one level deeper.
  std::optional<std::vector<int64_t>> Operand(size_t i) const {
    return shape_rules::IntData(node.input(i), type_of, depth + 1);
  }
  // What the data rule finds static of the output (IntData's answer for ops without a rule).
  std::optional<std::vector<int64_t>> StaticData() const {
    return StaticDims(shape_rules::ShapeData(node.output(0), type_of, depth));
  }
};
using IntsRule = std::optional<std::vector<int64_t>> (*)(const IntsInput&);

// A computed-shape rule reads what a symbolic rule does; nullopt: the analysis does not
// decide the shape (ComputedShape then gives the declared one).
using ComputedShapeRule = std::optional<Shape> (*)(const SymbolicInput&);

struct OpRules {
  ShapeRule shape = nullptr;
  // The shape rule reads no input type (Constant): it runs even when inputs are unknown.
  bool shape_reads_no_inputs = false;
  SymbolicRule symbolic = nullptr;
  DataRule data = nullptr;
  IntsRule ints = nullptr;
  ComputedShapeRule computed = nullptr;
};

// The rules of `op_type` in the default domain, or null when it has none.
const OpRules* FindOpRules(std::string_view op_type);

// What a family's registration fills in.
class OpTable {
 public:
  void Shape(std::initializer_list<std::string_view> ops, ShapeRule rule, bool reads_no_inputs = false);
  void Symbolic(std::initializer_list<std::string_view> ops, SymbolicRule rule);
  void Data(std::initializer_list<std::string_view> ops, DataRule rule);
  void Ints(std::initializer_list<std::string_view> ops, IntsRule rule);
  void Computed(std::initializer_list<std::string_view> ops, ComputedShapeRule rule);
  const OpRules* Find(std::string_view op_type) const;

 private:
  OpRules& Slot(std::string_view op);
  std::vector<std::pair<std::string_view, OpRules>> rules_;  // sorted by op once built
  absl::flat_hash_map<std::string_view, size_t> slots_;      // while building: op -> index
  friend const OpTable& TheOpTable();
  void Seal();
};

// One registration per op family (core/shape/ops/).
void RegisterElementwise(OpTable& table);  // unary, broadcasting, comparison, Cast, Where
void RegisterTensorOps(OpTable& table);    // Shape, Reshape, Concat, Gather, ...: layout and indexing
void RegisterLinalg(OpTable& table);       // MatMul, Gemm
void RegisterReduce(OpTable& table);       // Reduce*
void RegisterNn(OpTable& table);           // Conv, pooling, normalization
void RegisterData(OpTable& table);         // Constant, ConstantOfShape, Slice, Scatter*, Trilu

}  // namespace onnxsurgeon::shape_ops
