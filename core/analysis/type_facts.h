// TypeFacts: the one place passes, rules, the opset converter's adapters and the target
// check ask what a value is: its element type, rank, static and symbolic dims, constant
// value. Keyed by Value*, never by name: same-named values of sibling subgraphs (If
// branches, Loop bodies) are different values.
//
// Sources, in order: the value's initializer; its own type (annotation, or what an
// inference run set on it); facts recorded here (onnx inference of the whole model when
// built up front, schema inference of nodes made later, aliases). Then, when derivation
// is on, what is derived on first need without changing the model: a Cast's `to` and a
// CastLike's second input's type, the op table's local shape rules (core/shape/op_table.h,
// PropagatedTypes) once over the model, and for element types they leave open onnx shape
// inference once on an exported copy (large weights as metadata only).
//
// Kept current through the Rewriter's listener (RewriteFacts forwards the driver's events,
// core/rewrite/facts.h): a node a rewrite creates is typed by its op's local shape rule from
// what is known of its inputs, on first need. Facts of existing values stay true because
// rewrites keep what every value computes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/constant.h"
#include "core/ir/model.h"
#include "core/ir/shape.h"
#include "core/rewrite/rewriter.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

struct TypeFactsOptions {
  // Derive what the initializer, the value's own type and the recorded facts leave open
  // (Cast/CastLike, local rules, onnx inference), lazily. Off for the opset converter: the
  // model's opset imports change while it converts, so the graph can no longer answer; it
  // infers up front and records what its steps create.
  bool derive = true;
  // Run onnx inference on the whole model now (data propagation on) and record every type
  // it finds, graph inputs of subgraphs and initializers included.
  bool infer_up_front = false;
};

class TypeFacts : public RewriteListener {
 public:
  // Given a model that outlives this object. Execute nothing unless infer_up_front.
  explicit TypeFacts(const Model& model, TypeFactsOptions options = {});

  // ---- questions ------------------------------------------------------------------------
  // The value's own type, else a recorded one; null when neither exists.
  const onnx::TypeProto* Find(const Value* v) const;
  // TensorProto data type, 0 when unknown.
  int32_t ElemType(const Value* v) const;
  // Rank, -1 when unknown. (onnx inference is not asked: ranks come from annotations and
  // the local rules.)
  int64_t Rank(const Value* v) const;
  // Static and symbolic dims; nullopt when the rank is unknown.
  std::optional<Shape> DimsOf(const Value* v) const;
  // Static dims, -1 for a dim that is not static; nullopt when the rank is unknown.
  std::optional<std::vector<int64_t>> Dims(const Value* v) const;
  // The value's elements when it is a constant (initializer or Constant node).
  std::optional<ConstantData> ConstantValue(const Value* v) const { return GetConstant(v); }

  // ---- what callers tell ---------------------------------------------------------------
  // Given a value that replaces `old`. Execute gives it old's type if it has none.
  void Alias(const Value* old, const Value* replacement);
  // Given a node and the opset its signature follows. Execute runs the op's onnx schema
  // inference (the table's fallback for ops without a local rule, and for opsets the graph
  // does not import yet) and records its output types where they have none.
  void InferBySchema(const Node& node, const std::string& domain, int64_t opset);

  // ---- the Rewriter's listener ---------------------------------------------------------
  void NodeCreated(Node* node) override { created_.insert(node); }
  void NodeErased(Node* node) override { created_.erase(node); }

 private:
  void InferUpFront();
  const onnx::TypeProto* Derived(const Value* v) const;  // local rules, created nodes' too
  const onnx::TypeProto* DerivedForCreated(const Value* v) const;
  int32_t ElemType(const Value* v, bool with_inference) const;
  int32_t InferredElemType(const Value* v) const;  // onnx inference, once

  const Model& model_;
  TypeFactsOptions options_;
  absl::flat_hash_map<const Value*, onnx::TypeProto> recorded_;
  // Derived on first need (mutable: questions are const).
  mutable bool propagated_once_ = false;
  mutable absl::flat_hash_map<const Value*, onnx::TypeProto> propagated_;
  mutable bool inferred_once_ = false;
  mutable absl::flat_hash_map<const Value*, int32_t> inferred_;
  absl::flat_hash_set<const Node*> created_;         // made by rewrites since this was built
  mutable absl::flat_hash_set<const Node*> typing_;  // created nodes being typed (a cycle guard)
};

}  // namespace onnxsurgeon
