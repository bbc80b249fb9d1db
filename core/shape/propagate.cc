#include "core/shape/propagate.h"

#include "absl/container/flat_hash_set.h"

#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/shape/rules.h"

namespace onnxsurgeon {
namespace {

using shape_rules::TensorType;

// No type, or a tensor type without a shape (what onnx writes where it gives up on one).
bool Untyped(const Value* v) {
  return v && (!v->has_type() || (v->type()->has_tensor_type() && !v->type()->tensor_type().has_shape()));
}

}  // namespace

onnx::TypeProto TypeProtoOf(const shape_rules::TensorType& t) {
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

namespace {

using Known = absl::flat_hash_map<const Value*, TensorType>;

const Graph* Branch(const Node& n, std::string_view name) {
  const Attribute* a = n.FindAttribute(name);
  return a && a->graphs().size() == 1 ? a->graphs()[0].get() : nullptr;
}

// onnx's If rule: each output typed like both branches' (same element type and rank), a
// dim kept where the two are provably the same size, unknown where they differ.
std::vector<std::optional<TensorType>> IfTypes(const Node& n, shape_rules::TypeLookup type_of) {
  std::vector<std::optional<TensorType>> out(n.num_outputs());
  const Graph* then_branch = Branch(n, "then_branch");
  const Graph* else_branch = Branch(n, "else_branch");
  if (!then_branch || !else_branch || then_branch->outputs().size() != out.size() ||
      else_branch->outputs().size() != out.size())
    return out;
  for (size_t i = 0; i < out.size(); ++i) {
    auto a = type_of(then_branch->outputs()[i]);
    auto b = type_of(else_branch->outputs()[i]);
    if (!a || !b || a->elem != b->elem || a->shape.size() != b->shape.size()) continue;
    for (size_t d = 0; d < a->shape.size(); ++d)
      if (!a->shape[d].SameAs(b->shape[d])) a->shape[d] = Dim{};
    out[i] = std::move(a);
  }
  return out;
}

// Loop's loop-carried outputs (onnx leaves them shapeless): the final value of carried
// value i is its initial value (no iteration) or the body's output 1+i of the last one, so
// it has their element type and rank, and a dim where the two are provably the same size
// (a value the body carries unchanged keeps its initial shape). Scan outputs are left to
// onnx.
std::vector<std::optional<TensorType>> LoopTypes(const Node& n, shape_rules::TypeLookup type_of) {
  std::vector<std::optional<TensorType>> out(n.num_outputs());
  const Graph* body = Branch(n, "body");
  if (!body || n.num_inputs() < 2) return out;
  const size_t carried = n.num_inputs() - 2;
  if (body->outputs().size() < 1 + carried) return out;
  for (size_t i = 0; i < carried && i < out.size(); ++i) {
    const Value* init = n.input(2 + i);
    if (!init) continue;
    auto a = type_of(init);
    auto b = type_of(body->outputs()[1 + i]);
    if (!a || !b || a->elem != b->elem || a->shape.size() != b->shape.size()) continue;
    for (size_t d = 0; d < a->shape.size(); ++d)
      if (!a->shape[d].SameAs(b->shape[d])) a->shape[d] = Dim{};
    out[i] = std::move(a);
  }
  return out;
}

// Types `graph`'s nodes in order, entering subgraphs before the node that holds them: a
// body reads outer values typed above, If's outputs are its branches' and Loop's carried
// outputs its initial values' and body outputs'. Body inputs keep the types they declare
// (Scan outputs are left to onnx).
void Walk(const Graph& graph, Known& known, absl::flat_hash_map<const Value*, onnx::TypeProto>& out) {
  auto type_of = [&known](const Value* v) -> std::optional<TensorType> {
    if (auto it = known.find(v); it != known.end()) return it->second;
    int32_t elem = ElementType(v);
    auto shape = ShapeOf(v);
    if (elem == 0 || !shape) return std::nullopt;
    return TensorType{elem, std::move(*shape)};
  };
  for (Node* n : graph.nodes()) {
    for (Graph* sub : n->subgraphs()) Walk(*sub, known, out);
    if (std::none_of(n->outputs().begin(), n->outputs().end(), Untyped)) continue;
    auto types = n->Is("If")     ? IfTypes(*n, type_of)
                 : n->Is("Loop") ? LoopTypes(*n, type_of)
                                 : shape_rules::InferNode(*n, type_of);
    for (size_t i = 0; i < types.size() && i < n->num_outputs(); ++i) {
      Value* v = n->output(i);
      if (!types[i] || !Untyped(v)) continue;
      out.emplace(v, TypeProtoOf(*types[i]));
      known.emplace(v, std::move(*types[i]));
    }
  }
}

}  // namespace

absl::flat_hash_map<const Value*, onnx::TypeProto> PropagatedTypes(const Graph& graph) {
  Known known;  // what the rules gave so far
  absl::flat_hash_map<const Value*, onnx::TypeProto> out;
  Walk(graph, known, out);
  return out;
}

int PropagateShapes(Model& model, const InferShapesOptions& options) {
  if (!model.has_graph()) return 0;
  auto types = PropagatedTypes(model.graph());
  int gained = 0;
  // Node order, so value_info entries (record_value_info) come out deterministic.
  for (Node* n : model.graph().AllNodesRecursive())
    for (Value* v : n->outputs())
      if (auto it = types.find(v); it != types.end() && AdoptType(v, it->second, options)) ++gained;
  return gained;
}

StatusOr<int> ReinferShapes(Model& model, const InferShapesOptions& options) {
  OS_ASSIGN_OR_RETURN(int gained, InferShapes(model, options));
  InferShapesOptions fill = options;
  fill.drop_value_info = false;
  fill.replace_types = false;
  constexpr int kMaxRounds = 8;  // each round types at least one more value; real chains need 2-3
  for (int round = 0; round < kMaxRounds && HasUntypedOutputs(model); ++round) {
    int local = PropagateShapes(model, fill);
    if (local == 0) break;
    OS_ASSIGN_OR_RETURN(int inferred, InferShapes(model, fill));
    gained += local + inferred;
  }
  return gained;
}

bool HasUntypedOutputs(const Model& model) {
  for (Node* n : model.graph().AllNodesRecursive())
    if (std::any_of(n->outputs().begin(), n->outputs().end(), Untyped)) return true;
  return false;
}

}  // namespace onnxsurgeon
