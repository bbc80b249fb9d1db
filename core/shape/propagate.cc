#include "core/shape/propagate.h"

#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/shape/rules.h"

namespace onnxsurgeon {
namespace {

using shape_rules::TensorType;

int32_t ElemTypeOf(const Value* v) {
  if (const onnx::TypeProto* t = v->type()) return t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
  if (const Tensor* t = v->initializer()) return t->meta().data_type();
  if (auto c = GetConstant(v)) return c->data_type;
  return 0;
}

onnx::TypeProto ToProto(const TensorType& t) {
  onnx::TypeProto proto;
  auto* tensor = proto.mutable_tensor_type();
  tensor->set_elem_type(t.elem);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : t.shape) {
    auto* dim = shape->add_dim();
    if (d.is_static()) dim->set_dim_value(d.value);
    else if (d.is_symbolic()) dim->set_dim_param(d.symbol);
  }
  return proto;
}

bool Untyped(const Value* v) { return v && !v->has_type(); }

}  // namespace

absl::flat_hash_map<const Value*, onnx::TypeProto> PropagatedTypes(const Graph& graph) {
  absl::flat_hash_map<const Value*, TensorType> known;  // what the rules gave so far
  auto type_of = [&known](const Value* v) -> std::optional<TensorType> {
    if (auto it = known.find(v); it != known.end()) return it->second;
    int32_t elem = ElemTypeOf(v);
    auto shape = ShapeOf(v);
    if (elem == 0 || !shape) return std::nullopt;
    return TensorType{elem, std::move(*shape)};
  };
  absl::flat_hash_map<const Value*, onnx::TypeProto> out;
  for (Node* n : graph.nodes()) {
    if (std::none_of(n->outputs().begin(), n->outputs().end(), Untyped)) continue;
    auto types = shape_rules::InferNode(*n, type_of);
    for (size_t i = 0; i < types.size() && i < n->num_outputs(); ++i) {
      Value* v = n->output(i);
      if (!types[i] || !Untyped(v)) continue;
      out.emplace(v, ToProto(*types[i]));
      known.emplace(v, std::move(*types[i]));
    }
  }
  return out;
}

int PropagateShapes(Model& model, const InferShapesOptions& options) {
  if (!model.has_graph()) return 0;
  auto types = PropagatedTypes(model.graph());
  int gained = 0;
  // Node order, so value_info entries (record_value_info) come out deterministic.
  for (Node* n : model.graph().nodes())
    for (Value* v : n->outputs())
      if (auto it = types.find(v); it != types.end() && AdoptType(v, it->second, options)) ++gained;
  return gained;
}

StatusOr<int> EnsureShapes(Model& model, const InferShapesOptions& options,
                           absl::FunctionRef<bool(const Model&)> needs) {
  if (!needs(model)) return 0;
  int gained = PropagateShapes(model, options);
  if (!needs(model)) return gained;
  OS_ASSIGN_OR_RETURN(int inferred, InferShapes(model, options));
  return gained + inferred;
}

bool HasUntypedOutputs(const Model& model) {
  for (Node* n : model.graph().AllNodesRecursive())
    if (std::any_of(n->outputs().begin(), n->outputs().end(), Untyped)) return true;
  return false;
}

}  // namespace onnxsurgeon
