#include "core/ir/clone.h"

#include "core/ir/model.h"

namespace onnxsurgeon {
namespace {

StatusOr<Value*> Mapped(const Value* v, const ValueMap& map, const Node& user) {
  if (!v) return nullptr;
  auto it = map.find(v);
  if (it != map.end()) return it->second;
  return absl::InvalidArgumentError(absl::StrCat("cloning node '", user.name(), "' (", user.op_type(), "): its input '",
                                                 v->name(), "' has no counterpart"));
}

Status CloneGraphInto(MutationKey key, const Graph& source, Graph& clone, ValueMap& map, const AttributeFilter& filter);

StatusOr<Attribute> CloneAttribute(MutationKey key, const Attribute& a, Node* owner, ValueMap& map,
                                   const AttributeFilter& filter, bool& keep) {
  onnx::AttributeProto proto = a.proto();
  keep = !filter || filter(a, proto);
  Attribute out(std::move(proto));
  out.set_first_graph_in_g(a.first_graph_in_g());
  for (const auto& g : a.graphs()) {
    auto sub = std::make_unique<Graph>(owner->graph()->model(), GraphKind::kSubgraph);
    Graph* raw = sub.get();
    out.mutable_graphs().push_back(std::move(sub));
    // parent_node_ is set when the attribute is attached (Node::SetAttribute); the clone
    // needs it earlier so names resolve against the enclosing scope.
    OS_RETURN_IF_ERROR(CloneGraphInto(key, *g, *raw, map, filter));
  }
  return out;
}

Status CloneGraphInto(MutationKey key, const Graph& source, Graph& clone, ValueMap& map,
                      const AttributeFilter& filter) {
  clone.mutable_proto() = source.proto();
  clone.mutable_proto().set_name(source.name());
  for (Value* in : source.inputs()) {
    onnx::ValueInfoProto info = in->info() ? *in->info() : onnx::ValueInfoProto();
    OS_ASSIGN_OR_RETURN(Value * v, clone.AddInput(key, clone.UniqueName(in->name()), std::move(info)));
    map[in] = v;
  }
  for (Value* init : source.initializers()) {
    if (init->IsGraphInput()) {
      OS_RETURN_IF_ERROR(clone.AddInitializer(key, map[init]->name(), *init->initializer()).status());
      continue;
    }
    OS_ASSIGN_OR_RETURN(Value * v, clone.AddInitializer(key, clone.UniqueName(init->name()), *init->initializer()));
    map[init] = v;
  }
  for (Node* n : source.nodes()) OS_RETURN_IF_ERROR(CloneNode(key, *n, clone, nullptr, map, {}, filter).status());
  for (Value* out : source.outputs()) {
    OS_ASSIGN_OR_RETURN(Value * v, Mapped(out, map, *source.parent_node()));
    clone.AddOutput(key, v);
  }
  return absl::OkStatus();
}

}  // namespace

StatusOr<Node*> CloneNode(MutationKey key, const Node& source, Graph& destination, Node* insert_before, ValueMap& map,
                          std::string_view name_prefix, const AttributeFilter& filter) {
  std::vector<Value*> inputs;
  for (Value* in : source.inputs()) {
    OS_ASSIGN_OR_RETURN(Value * v, Mapped(in, map, source));
    inputs.push_back(v);
  }
  std::string hint = absl::StrCat(std::string(name_prefix), source.name().empty() ? source.op_type() : source.name());
  Node* clone = destination.CreateNode(key, source.op_type(), inputs, 0, source.domain(), insert_before, hint);
  std::string name = clone->name();
  clone->mutable_proto() = source.proto();
  clone->mutable_proto().set_name(name);
  for (Value* out : source.outputs()) {
    if (!out) {
      clone->AddOmittedOutput(key);
      continue;
    }
    Value* v = clone->AddOutput(key, destination.UniqueName(absl::StrCat(std::string(name_prefix), out->name())));
    if (out->info()) *v->mutable_info() = *out->info();
    map[out] = v;
  }
  for (const Attribute& a : source.attributes()) {
    bool keep = true;
    // Subgraph clones must see this node as their parent while they resolve names.
    OS_ASSIGN_OR_RETURN(Attribute copy, CloneAttribute(key, a, clone, map, filter, keep));
    if (keep) clone->SetAttribute(key, std::move(copy));
  }
  return clone;
}

}  // namespace onnxsurgeon
