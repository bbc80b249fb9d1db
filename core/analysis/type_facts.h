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
// Symbolic dims: what the model's small integer and bool vectors compute up to a symbol
// (the symbolic analysis, core/shape/symbolic.h), walked on first need (Symbolic()).
//
// Kept current through the Rewriter's listener (RewriteFacts forwards the driver's events,
// core/rewrite/facts.h): a node a rewrite creates is typed by its op's local shape rule from
// what is known of its inputs, on first need. Facts of existing values stay true because
// rewrites keep what every value computes; the types set on the model's values that a
// rewrite may have made decidable (below a node whose inputs it changed) are dropped by
// ForgetBelowRewrites, and between passes Refresh re-infers them from the graph inputs.
//
// A pass whose rules read the types set on the model's values asks for them with Ensure,
// naming what it still lacks and which sources may fill it in: passes do not run the
// local shape rules or onnx inference themselves.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/model.h"
#include "core/ir/shape.h"
#include "core/rewrite/rewriter.h"
#include "core/shape/symbolic.h"
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
  // The symbolic analysis leaves out the subgraphs that fail whenever they run for the
  // shapes the model has (core/shape/contradictions.h): what a pass that turns the vectors
  // it decides into constants reads (resolve-shapes).
  bool symbolic_skips_failing_subgraphs = false;
};

// Where Ensure finds the types a pass lacks, cheapest first.
enum class TypeSources {
  kLocalRules,          // the op table's local rules only: no onnx inference
  kLocalRulesThenOnnx,  // the local rules; onnx inference only if a type is still missing
  kOnnx,                // onnx inference only
  kOnnxAfresh,          // drop the in-memory types that are not static (ForgetInferred), onnx
                        // inference from the graph inputs, then the local rules for what it left
  kReinfer,             // onnx inference and the local rules in rounds (ReinferShapes)
};

// What a pass asks Ensure for: the sources, and how onnx inference runs and whether the
// types it sets are saved (InferShapesOptions::record_value_info).
struct TypeRequest {
  TypeSources sources = TypeSources::kLocalRulesThenOnnx;
  InferShapesOptions infer;
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
  // What the small integer and bool vectors of the model's main graph, its subgraphs and its
  // local functions compute, element by element, and the dims that follow from them
  // (ComputedShape): the symbolic analysis, one walk on first need over the graphs in their
  // node order (a pass that needs every vector described sorts them first); values made
  // later are read on demand.
  const SymbolicShapes& Symbolic() const;

  // ---- what callers tell ---------------------------------------------------------------
  // Given a value that replaces `old`. Execute gives it old's type if it has none.
  void Alias(const Value* old, const Value* replacement);
  // Given a node and the opset its signature follows. Execute runs the op's onnx schema
  // inference (the table's fallback for ops without a local rule, and for opsets the graph
  // does not import yet) and records its output types where they have none.
  void InferBySchema(const Node& node, const std::string& domain, int64_t opset);

  // ---- the types set on the model's values (the first source above) --------------------
  // Given a model, the pass's question "is a type I read still missing?" and a request.
  // Execute nothing when it says no; else the request's sources in order, asking again
  // between two (kLocalRulesThenOnnx). Result the number of values that gained a type; an
  // error only from onnx inference (kOnnxAfresh still runs the local rules after it).
  static StatusOr<int> Ensure(Model& model, absl::FunctionRef<bool(const Model&)> missing, const TypeRequest& request);
  // The question of a pass that wants every type there is to find.
  static bool AnyMissing(const Model&) { return true; }
  // Given a model rewritten since its types were inferred or declared. Execute drops the
  // in-memory types that are not fully static (ForgetInferred); then, when some declared
  // type (value_info, graph outputs) has a dim that is not static, re-infers in memory from
  // the graph inputs (onnx inference and the local rules, ReinferShapes) with refine_types:
  // every value gets what inference knows now, and a declared type takes the static sizes
  // it adds. What infer-shapes(reset=true) does for a later rewrite to read, without
  // dropping what a declaration knows that inference does not (a custom op's output, a
  // symbolic dim). Result the number of declared types refined (what the saved model
  // shows); an error only from onnx inference.
  static StatusOr<int> Refresh(Model& model);
  // Given a model. Execute drops the in-memory types (set without record_value_info) that
  // are not fully static: node outputs of the main graph, its subgraphs and the local
  // functions that are neither graph outputs nor in value_info. A static type stays true
  // under rewrites; a dim left unknown or symbolic before a fold may be decidable now.
  // Declared types stay: a reload sees them too. Result the number of types dropped.
  static int ForgetInferred(Model& model);
  // Given the rewrites this object was told of (NodeModified) since it was built or last
  // asked. Execute the same as ForgetInferred for the outputs of the nodes whose inputs a
  // rewrite changed (alive ones) and, transitively, for the values computed from them.
  // Result the number of such nodes (0: no rewrite changed a node's inputs).
  int ForgetBelowRewrites();

  // ---- the Rewriter's listener ---------------------------------------------------------
  void NodeCreated(Node* node) override { created_.insert(node); }
  void NodeErased(Node* node) override {
    created_.erase(node);
    modified_.erase(node);
  }
  void NodeModified(Node* node) override {
    if (modified_.insert(node).second) modified_order_.push_back(node);
  }

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
  mutable std::unique_ptr<SymbolicShapes> symbolic_;  // walked on first need
  absl::flat_hash_set<const Node*> created_;          // made by rewrites since this was built
  // Nodes whose inputs rewrites changed since this was built (alive ones), in first-changed order.
  absl::flat_hash_set<Node*> modified_;
  std::vector<Node*> modified_order_;
  mutable absl::flat_hash_set<const Node*> typing_;  // created nodes being typed (a cycle guard)
};

}  // namespace onnxsurgeon
