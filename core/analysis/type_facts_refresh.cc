// TypeFacts' write side: keeping the types set on the model's values current after
// rewrites and filling them in for a pass (core/analysis/type_facts.h: Ensure, Refresh,
// ForgetInferred, ForgetBelowRewrites).
#include "absl/container/flat_hash_set.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/shape.h"
#include "core/shape/propagate.h"

namespace onnxsurgeon {
namespace {

bool FullyStaticType(const onnx::TypeProto& t) {
  if (!t.has_tensor_type()) return true;  // sequences, maps, optionals: left as they are
  if (!t.tensor_type().has_shape()) return false;
  for (const auto& d : t.tensor_type().shape().dim())
    if (!d.has_dim_value() || d.dim_value() < 0) return false;
  return true;
}

int ForgetInGraph(Graph& g) {
  int dropped = 0;
  for (Node* n : g.nodes()) {
    for (Graph* sub : n->subgraphs()) dropped += ForgetInGraph(*sub);
    for (Value* v : n->outputs()) {
      if (!v || !v->has_type() || v->in_value_info() || v->IsGraphOutput() || FullyStaticType(*v->type())) continue;
      v->mutable_info()->clear_type();
      ++dropped;
    }
  }
  return dropped;
}

// The outputs of `nodes` and, transitively, the values computed from them.
int ForgetBelow(const std::vector<Node*>& nodes) {
  absl::flat_hash_set<const Node*> seen;
  std::vector<Node*> work;
  for (Node* n : nodes)
    if (n && seen.insert(n).second) work.push_back(n);
  int dropped = 0;
  while (!work.empty()) {
    Node* n = work.back();
    work.pop_back();
    for (Value* v : n->outputs()) {
      if (!v || v->in_value_info() || v->IsGraphOutput()) continue;
      if (v->has_type()) {
        if (FullyStaticType(*v->type())) continue;
        v->mutable_info()->clear_type();
        ++dropped;
      }
      for (const Use& u : v->uses())
        if (seen.insert(u.node).second) work.push_back(u.node);
    }
  }
  return dropped;
}

}  // namespace

int TypeFacts::ForgetInferred(Model& model) {
  int dropped = model.has_graph() ? ForgetInGraph(model.graph()) : 0;
  for (auto& f : model.functions()) dropped += ForgetInGraph(f->body());
  return dropped;
}

namespace {

// The value_info entries and graph outputs (node outputs of `g` and its subgraphs) whose
// declared shape has a dim that is not static: what inference may refine.
void OpenDeclaredShapes(const Graph& g, std::vector<std::pair<const Value*, std::string>>& out) {
  for (const Node* n : g.nodes()) {
    for (const Graph* sub : n->subgraphs()) OpenDeclaredShapes(*sub, out);
    for (const Value* v : n->outputs())
      if (v && v->has_type() && (v->in_value_info() || v->IsGraphOutput()) && v->type()->has_tensor_type() &&
          v->type()->tensor_type().has_shape() && !FullyStaticType(*v->type()))
        out.emplace_back(v, v->type()->SerializeAsString());
  }
}

}  // namespace

StatusOr<int> TypeFacts::Refresh(Model& model) {
  ForgetInferred(model);
  if (!model.has_graph()) return 0;
  std::vector<std::pair<const Value*, std::string>> open;
  OpenDeclaredShapes(model.graph(), open);
  // Nothing declared to refine: the rewrites infer what they read themselves (and a model
  // the local rules type never pays for onnx inference).
  if (open.empty()) return 0;
  InferShapesOptions options;
  options.record_value_info = false;  // types for the rewrites to read; declarations refined in place
  options.refine_types = true;
  options.drop_output_shapes = true;  // a stale declared output shape is corrected
  // Declared value_info out of the copy: what the graph computes from its inputs comes
  // back, and refines the declarations (a custom op's output keeps its own).
  options.drop_value_info = true;
  absl::flat_hash_set<std::string> roots;
  for (const Value* input : model.graph().inputs())
    if (auto shape = ShapeOf(input))
      for (const Dim& d : *shape)
        if (d.is_symbolic()) roots.insert(d.symbol);
  options.root_symbols = &roots;
  OS_RETURN_IF_ERROR(ReinferShapes(model, options).status());
  int refined = 0;
  for (const auto& [v, before] : open) refined += v->type()->SerializeAsString() != before;
  return refined;
}

StatusOr<int> TypeFacts::Ensure(Model& model, absl::FunctionRef<bool(const Model&)> missing,
                                const TypeRequest& request) {
  if (!missing(model)) return 0;
  const InferShapesOptions& infer = request.infer;
  switch (request.sources) {
    case TypeSources::kLocalRules: return PropagateShapes(model, infer);
    case TypeSources::kLocalRulesThenOnnx: {
      int gained = PropagateShapes(model, infer);
      if (!missing(model)) return gained;
      OS_ASSIGN_OR_RETURN(int inferred, InferShapes(model, infer));
      return gained + inferred;
    }
    case TypeSources::kOnnx: return InferShapes(model, infer);
    case TypeSources::kOnnxAfresh: {
      ForgetInferred(model);
      StatusOr<int> inferred = InferShapes(model, infer);
      int local = PropagateShapes(model, infer);  // what onnx left untyped, the local rules may type
      if (!inferred.ok()) return inferred.status();
      return *inferred + local;
    }
    case TypeSources::kReinfer: return ReinferShapes(model, infer);
  }
  return 0;
}

int TypeFacts::ForgetBelowRewrites() {
  std::vector<Node*> nodes;
  absl::flat_hash_set<Node*> seen;
  for (Node* n : modified_order_)
    if (modified_.contains(n) && seen.insert(n).second) nodes.push_back(n);
  modified_.clear();
  modified_order_.clear();
  if (!nodes.empty()) ForgetBelow(nodes);
  return static_cast<int>(nodes.size());
}

}  // namespace onnxsurgeon
