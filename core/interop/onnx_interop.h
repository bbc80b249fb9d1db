// Bridges to onnx's own C++ library: the text format, the checker and shape inference.
// Each converts through ModelProto, so it costs a copy of the model; use it in tests,
// --verify-each and reports, not inside a pass's inner loop.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// ONNX text format, e.g. `<ir_version: 10, opset_import: ["" : 18]> g (float[N] X) => (float[N] Y) { Y = Relu(X) }`.
StatusOr<std::unique_ptr<Model>> ParseModelText(std::string_view text);
std::string PrintModelText(const Model& model);

// onnx::checker::check_model (full_check also runs strict shape inference).
Status CheckModel(const Model& model, bool full_check = true);
Status CheckModelProto(const onnx::ModelProto& proto, bool full_check = true);
// The same checks on a proto the caller gives up: strict shape inference runs on it in
// place (onnx's check_model copies the whole model first, to leave the caller's as it was).
Status CheckModelProto(onnx::ModelProto&& proto, bool full_check = true);

struct InferShapesOptions {
  bool data_propagation = true;
  // Record gained types as value_info entries (saved with the model). Passes that only
  // need types to decide set this false: types are known in memory, the saved model's
  // value_info is left as the user had it.
  bool record_value_info = true;
  // Initializers larger than this reach shape inference as type and dims only; their
  // bytes matter only to data propagation of small shape tensors, and copying weights
  // would make inference cost as much as saving the model.
  int64_t max_payload_bytes = 4096;
  // Infer from the inputs afresh: drop the model's value_info first (after the input
  // shapes changed, the old entries would contradict the new ones).
  bool drop_value_info = false;
  // Overwrite the types values already have (graph inputs and initializers excepted),
  // not only fill in missing ones: after the input shapes changed, old types are stale.
  bool replace_types = false;
  // Also replace a type a value already has (declared in value_info, a graph output's, or
  // inferred before) where the new one refines it: the same element type and rank, a
  // static size where the old one had an unknown or symbolic dim, the old one elsewhere
  // as it was. Nothing known is lost; a dim the new type leaves open keeps the old one.
  bool refine_types = false;
  // Infer the main graph's outputs afresh: their declared shapes are left out of the copy
  // (element types stay), so what the graph computes is what comes back, and with
  // refine_types a declaration it contradicts is replaced (a stale one: fix-declared-shapes).
  bool drop_output_shapes = false;
  // With refine_types: the main graph inputs' symbols as analyses read them (InputSymbol);
  // a dim inference derives from one of them replaces the declared dim's symbol (Refined).
  const absl::flat_hash_set<std::string>* root_symbols = nullptr;
};

// Given a value and a type found for it (by onnx inference or the local rules).
// Execute sets it as InferShapes does: on a value without a type (with replace_types,
// on any value but a graph input or initializer), listed in value_info when
// record_value_info (graph outputs carry theirs in the output entry).
// With refine_types, a typed value takes only the static dims the new type adds (Refined),
// or the new type where it contradicts the old one (ShapesContradict: a stale declaration).
// Result true when the value took the type. A tensor type without a shape is not taken.
bool AdoptType(Value* value, const onnx::TypeProto& type, const InferShapesOptions& options);

// Runs onnx shape inference and sets every inferred type on values that had none.
// Result the number of values that gained a type.
StatusOr<int> InferShapes(Model& model, const InferShapesOptions& options);

// The model exported and shape-inferred, leaving the model itself untouched (for callers
// that only read the inferred types). Values that share a name with a value of another
// graph (sibling If branches, a Loop body and its parent) are exported under names unique
// in the model (ScopeUniqueNames): onnx's inference keys data propagation by name across
// subgraphs, so a branch would otherwise read the other branch's shapes.
struct InferredModel {
  onnx::ModelProto proto;
  // The value of the main graph or a subgraph that `name` (as written in `proto`) names;
  // null for a name of no value (a function body's, or one inference made up).
  Value* ValueNamed(const std::string& name) const;
  // Given f(Value*, const onnx::TypeProto&). Execute calls it for every typed value_info
  // and output entry of the main graph and its subgraphs that names a value: each graph's
  // value_info, then its outputs, then its nodes' subgraphs in order.
  template <typename F>
  void ForEachType(F f) const {
    if (proto.has_graph()) ForEachTypeIn(proto.graph(), f);
  }

  absl::flat_hash_map<std::string, Value*> values;  // name in `proto` -> value

 private:
  template <typename F>
  void ForEachTypeIn(const onnx::GraphProto& g, F& f) const {
    for (const auto* list : {&g.value_info(), &g.output()})
      for (const onnx::ValueInfoProto& vi : *list)
        if (vi.has_type())
          if (Value* v = ValueNamed(vi.name())) f(v, vi.type());
    for (const onnx::NodeProto& n : g.node())
      for (const onnx::AttributeProto& a : n.attribute()) {
        if (a.has_g()) ForEachTypeIn(a.g(), f);
        for (const onnx::GraphProto& sub : a.graphs()) ForEachTypeIn(sub, f);
      }
  }
};
StatusOr<InferredModel> InferredCopy(const Model& model, const InferShapesOptions& options);
StatusOr<int> InferShapes(Model& model, bool data_propagation = true);

}  // namespace onnxsurgeon
