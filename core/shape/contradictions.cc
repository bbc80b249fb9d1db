#include "core/shape/contradictions.h"

#include <exception>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "core/io/exporter.h"
#include "onnx/shape_inference/implementation.h"

namespace onnxsurgeon {
namespace {

constexpr int64_t kInlineBytes = 4096;  // larger constants reach inference as type and dims

// What onnx's checker runs (core/interop CheckModelProto): strict, no data propagation.
bool CheckerInferencePasses(onnx::ModelProto proto) {
  try {
    onnx::ShapeInferenceOptions strict(/*check_type=*/true, /*error_mode=*/1, /*enable_data_propagation=*/false);
    onnx::shape_inference::InferShapes(proto, onnx::OpSchemaRegistry::Instance(), strict);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

// The values `g` (and the subgraphs nested in it) read from enclosing graphs, in first-read order.
std::vector<Value*> OuterReads(const Graph& g) {
  std::vector<Value*> reads;
  absl::flat_hash_set<Value*> seen;
  auto read = [&](Value* v) {
    if (v && !v->graph()->IsWithin(&g) && seen.insert(v).second) reads.push_back(v);
  };
  for (const Graph* sub : g.SelfAndSubgraphs()) {
    for (const Node* n : sub->nodes())
      for (Value* v : n->inputs()) read(v);
    for (Value* v : sub->outputs()) read(v);
  }
  return reads;
}

void SetTensor(const Tensor& t, const std::string& name, onnx::TensorProto* out) {
  if (t.has_raw_bytes() && static_cast<int64_t>(t.raw_size()) > kInlineBytes) {
    *out = t.meta();
    out->clear_raw_data();
    out->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* location = out->add_external_data();
    location->set_key("location");
    location->set_value("onnxsurgeon-types-only");
  } else {
    *out = t.ToProto(name);
  }
  out->set_name(name);
}

// The subgraph as a model of its own, or nullopt when an enclosing value it reads has no type.
std::optional<onnx::ModelProto> Alone(const Model& model, const Graph& g, const ValueNames& renamed) {
  auto name_of = [&](const Value* v) -> const std::string& {
    auto it = renamed.find(v);
    return it == renamed.end() ? v->name() : it->second;
  };
  onnx::ModelProto alone;
  alone.set_ir_version(model.proto().ir_version());
  *alone.mutable_opset_import() = model.proto().opset_import();
  for (const auto& f : model.functions()) *alone.add_functions() = ExportFunction(*f);  // a node may call one
  onnx::GraphProto* graph = alone.mutable_graph();
  *graph = ExportGraph(g, renamed.empty() ? nullptr : &renamed);
  for (Value* v : OuterReads(g)) {
    if (const Tensor* t = v->initializer(); t && !v->IsGraphInput()) {
      SetTensor(*t, name_of(v), graph->add_initializer());
      continue;
    }
    if (!v->has_type()) return std::nullopt;
    onnx::ValueInfoProto* input = graph->add_input();
    input->set_name(name_of(v));
    *input->mutable_type() = *v->type();
  }
  return alone;
}

// Replaces, in `g` and its nested graphs, the definitions of `constants` (by name) with
// initializers: a node whose outputs all became constants goes; another output keeps a
// name of its own.
void Substitute(onnx::GraphProto& g, const absl::flat_hash_map<std::string, const Tensor*>& constants) {
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (onnx::NodeProto& n : *g.mutable_node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) Substitute(*a.mutable_g(), constants);
      for (auto& sub : *a.mutable_graphs()) Substitute(sub, constants);
    }
    bool all = n.output_size() > 0;
    for (std::string& out : *n.mutable_output()) {
      auto it = constants.find(out);
      if (it == constants.end()) {
        all = all && out.empty();
        continue;
      }
      SetTensor(*it->second, out, g.add_initializer());
      out += "__folded_away";
    }
    if (!all) *kept.Add() = std::move(n);
  }
  *g.mutable_node() = std::move(kept);
  // A value_info of a value that became an initializer states what it is already.
}

}  // namespace

bool FoldingContradicts(const Model& model, const Graph& subgraph,
                        const absl::flat_hash_map<const Value*, Tensor>& constants) {
  if (constants.empty() || !subgraph.parent_graph()) return false;
  const ValueNames renamed = ScopeUniqueNames(model);
  std::optional<onnx::ModelProto> before = Alone(model, subgraph, renamed);
  if (!before || !CheckerInferencePasses(*before)) return false;
  absl::flat_hash_map<std::string, const Tensor*> by_name;
  for (const auto& [v, t] : constants) {
    auto it = renamed.find(v);
    by_name[it == renamed.end() ? v->name() : it->second] = &t;
  }
  onnx::ModelProto after = *std::move(before);
  Substitute(*after.mutable_graph(), by_name);
  return !CheckerInferencePasses(std::move(after));
}

absl::flat_hash_set<const Graph*> SubgraphsFailingForTheseShapes(const Model& model, const SymbolicShapes& shapes) {
  absl::flat_hash_set<const Graph*> failing;
  if (!model.has_graph()) return failing;
  for (const Node* holder : model.graph().nodes()) {
    for (const Graph* top : holder->subgraphs()) {
      absl::flat_hash_map<const Value*, Tensor> decided;
      for (const Graph* g : top->SelfAndSubgraphs())
        for (const Node* n : g->nodes()) {
          if (n->Is("Constant")) continue;
          for (Value* v : n->outputs()) {
            if (!v) continue;
            const SymbolicVector* vec = shapes.VectorOf(v);
            auto ints = shapes.Int64s(v);
            if (!vec || !ints) continue;
            std::vector<int64_t> dims;
            if (!vec->scalar) dims.push_back(static_cast<int64_t>(ints->size()));
            if (auto t = Tensor::FromInt64s(vec->dtype, dims, *ints); t.ok()) decided.emplace(v, *std::move(t));
          }
        }
      if (FoldingContradicts(model, *top, decided))
        for (const Graph* g : top->SelfAndSubgraphs()) failing.insert(g);
    }
  }
  return failing;
}

}  // namespace onnxsurgeon
