#include "core/rewrite/rewriter.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "core/ir/constant.h"

namespace onnxsurgeon {

Node* Rewriter::Create(std::string_view op_type, std::vector<Value*> inputs,
                       std::vector<onnx::AttributeProto> attributes, int num_outputs, std::string_view domain,
                       std::string_view name_hint) {
  Node* n = graph_->CreateNode(MutationKey(), op_type, inputs, num_outputs, domain, insert_before_,
                               name_hint.empty() ? absl::StrCat(rule_, "/", std::string(op_type)) : name_hint);
  for (auto& a : attributes) n->SetAttribute(MutationKey(), std::move(a));
  auto* meta = n->mutable_proto().add_metadata_props();
  meta->set_key(kProvenanceKey);
  meta->set_value(rule_);
  created_.insert(n);
  ImportDomain(*graph_, domain);
  if (listener_) listener_->NodeCreated(n);
  return n;
}

bool Rewriter::ImportDomain(Graph& graph, std::string_view domain, int64_t version) {
  Model* model = graph.model();
  if (!model || graph.OpsetVersion(domain) >= 0) return false;
  model->SetOpsetVersion(domain, version);
  if (const Function* owner = graph.root()->function()) {
    for (auto& f : model->mutable_functions()) {
      if (f.get() != owner) continue;
      auto* import = f->mutable_proto().add_opset_import();
      import->set_domain(std::string(domain));
      import->set_version(version);
    }
  }
  return true;
}

int64_t Rewriter::RemoveUncalledFunctions(Model& model, const absl::flat_hash_set<const Function*>* among) {
  absl::flat_hash_set<const Function*> called;
  std::vector<const Graph*> pending = {&model.graph()};  // AllNodesRecursive covers its subgraphs
  while (!pending.empty()) {
    const Graph* g = pending.back();
    pending.pop_back();
    for (Node* n : g->AllNodesRecursive()) {
      const Function* f = model.FindFunction(n->domain(), n->op_type(), n->proto().overload());
      if (f && called.insert(f).second) pending.push_back(&f->body());
    }
  }
  auto& functions = model.mutable_functions();
  size_t before = functions.size();
  std::erase_if(functions, [&](const std::unique_ptr<Function>& f) {
    return !called.contains(f.get()) && (!among || among->contains(f.get()));
  });
  return static_cast<int64_t>(before - functions.size());
}

std::vector<std::pair<int, std::string>> ReplacedValues(const Node& node) {
  std::vector<std::pair<int, std::string>> out;
  for (const auto& meta : node.proto().metadata_props()) {
    if (meta.key() != kReplacedKey) continue;
    for (absl::string_view line : absl::StrSplit(meta.value(), '\n', absl::SkipEmpty())) {
      size_t colon = line.find(':');
      int index = 0;
      if (colon == absl::string_view::npos || !absl::SimpleAtoi(line.substr(0, colon), &index)) continue;
      out.emplace_back(index, std::string(line.substr(colon + 1)));
    }
  }
  return out;
}

void Rewriter::RecordReplaced(const Value* from, const Value* to) {
  Node* producer = to->producer();
  if (!producer || !created_.contains(producer) || from == to) return;
  int index = -1;
  for (size_t i = 0; i < producer->num_outputs(); ++i)
    if (producer->output(i) == to) index = static_cast<int>(i);
  if (index < 0) return;
  // What `from` stood for: its own producer's record for it, else its name.
  std::string origin = from->name();
  if (const Node* p = from->producer()) {
    for (size_t i = 0; i < p->num_outputs(); ++i) {
      if (p->output(i) != from) continue;
      for (const auto& [k, name] : ReplacedValues(*p))
        if (k == static_cast<int>(i)) origin = name;
    }
  }
  std::string line = absl::StrCat(index, ":", origin);
  for (auto& meta : *producer->mutable_proto().mutable_metadata_props()) {
    if (meta.key() != kReplacedKey) continue;
    for (absl::string_view existing : absl::StrSplit(meta.value(), '\n'))
      if (existing == line) return;
    meta.set_value(absl::StrCat(meta.value(), "\n", line));
    return;
  }
  auto* meta = producer->mutable_proto().add_metadata_props();
  meta->set_key(kReplacedKey);
  meta->set_value(line);
}

Value* Rewriter::Op(std::string_view op_type, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes,
                    std::string_view domain) {
  return Create(op_type, std::move(inputs), std::move(attributes), 1, domain)->output(0);
}

StatusOr<Value*> Rewriter::Constant(Tensor tensor, std::string_view name_hint) {
  if (!graph_)
    return absl::FailedPreconditionError(absl::StrCat("rule '", rule_, "': a constant without an insertion point"));
  if (tensor.meta().data_type() == onnx::TensorProto::UNDEFINED) {
    return absl::InvalidArgumentError(
        absl::StrCat("rule '", rule_, "': constant '", std::string(name_hint), "' has no element type"));
  }
  if (graph_->kind() == GraphKind::kFunctionBody) return ConstantNode(tensor);
  return graph_->AddInitializer(MutationKey(), graph_->UniqueName(absl::StrCat(rule_, "/", std::string(name_hint))),
                                std::move(tensor));
}

Value* Rewriter::ConstantNode(const Tensor& tensor) {
  onnx::AttributeProto value;
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  *value.mutable_t() = tensor.ToProto("");
  return Create("Constant", {}, {std::move(value)})->output(0);
}

StatusOr<Value*> Rewriter::ScalarFloat(float v, int32_t data_type) {
  if (data_type != onnx::TensorProto::FLOAT && data_type != onnx::TensorProto::DOUBLE &&
      data_type != onnx::TensorProto::FLOAT16 && data_type != onnx::TensorProto::BFLOAT16) {
    return absl::InvalidArgumentError(absl::StrCat("rule '", rule_, "': a float scalar of element type ", data_type,
                                                   " (not float, double, float16 or bfloat16)"));
  }
  // One encoder (Tensor::FromDoubles): v is exact as a double, so float16 and bfloat16
  // are rounded once, to nearest even, as FloatToHalf does.
  OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromDoubles(data_type, {}, {static_cast<double>(v)}));
  return Constant(std::move(t), "scalar");
}

Value* Rewriter::Int64s(const std::vector<int64_t>& v) {
  Tensor t;
  t.mutable_meta().set_data_type(onnx::TensorProto::INT64);
  t.mutable_meta().add_dims(static_cast<int64_t>(v.size()));
  t.SetRawBytes(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t)));
  // Well-formed, under a fresh name: an initializer cannot be refused; should it be, a
  // Constant node carries the same tensor.
  if (graph_->kind() != GraphKind::kFunctionBody) {
    if (auto added = graph_->AddInitializer(MutationKey(), graph_->UniqueName(absl::StrCat(rule_, "/ints")), t);
        added.ok())
      return *added;
  }
  return ConstantNode(t);
}

Status Rewriter::ReplaceAllUsesWith(Value* from, Value* to, GraphOutputs outputs) {
  if (from->IsGraphOutput() && outputs == GraphOutputs::kRefuse) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rule '", rule_, "': '", from->name(), "' is a graph output; replacing it would change the model's interface"));
  }
  RecordReplaced(from, to);  // before a kKeepNames rename: the record names what `from` was
  std::vector<Use> moved = from->uses();
  if (from->IsGraphOutput() && outputs == GraphOutputs::kKeepNames) {
    // The model's output names are its interface. `to` can take the name over only if it
    // is a plain node output of the same graph; otherwise an Identity carries the name.
    bool can_take_name = to->graph() == from->graph() && to->producer() && !to->IsGraphOutput();
    if (!can_take_name) {
      for (const Use& u : moved) SetInput(u.node, u.input_index, to);
      Value* named = Op("Identity", {to});
      RecordReplaced(from, named);
      OS_RETURN_IF_ERROR(from->ReplaceAllUsesWith(MutationKey(), named, /*allow_graph_outputs=*/true));
      if (listener_) listener_->UseRemoved(from);
      return absl::OkStatus();
    }
  }
  OS_RETURN_IF_ERROR(from->ReplaceAllUsesWith(MutationKey(), to, /*allow_graph_outputs=*/true));
  if (listener_) {
    for (const Use& u : moved) listener_->NodeModified(u.node);
    listener_->UseRemoved(from);
  }
  return absl::OkStatus();
}

Status Rewriter::ReplaceNode(Node* node, const std::vector<Value*>& replacements) {
  for (size_t i = 0; i < node->num_outputs(); ++i) {
    Value* out = node->output(i);
    if (!out) continue;
    Value* with = i < replacements.size() ? replacements[i] : nullptr;
    if (with) {
      OS_RETURN_IF_ERROR(ReplaceAllUsesWith(out, with, GraphOutputs::kKeepNames));
    } else if (out->HasUsers()) {
      return absl::FailedPreconditionError(absl::StrCat("rule '", rule_, "' left output '", out->name(), "' of node '",
                                                        node->name(), "' without a replacement"));
    }
  }
  return EraseNode(node);
}

Status Rewriter::EraseNode(Node* node) {
  std::vector<Value*> inputs = node->inputs();
  created_.erase(node);
  if (listener_) listener_->NodeErased(node);
  Status s = node->graph()->EraseNode(MutationKey(), node);
  if (!s.ok()) return s;
  if (listener_)
    for (Value* v : inputs)
      if (v) listener_->UseRemoved(v);
  return absl::OkStatus();
}

int Rewriter::EraseDead(std::vector<Node*> candidates) {
  absl::flat_hash_set<Node*> alive(candidates.begin(), candidates.end());
  int erased = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    for (Node*& n : candidates) {
      if (!n || !alive.contains(n)) continue;
      bool used = std::any_of(n->outputs().begin(), n->outputs().end(), [](Value* v) { return v && v->HasUsers(); });
      if (used) continue;
      alive.erase(n);
      if (EraseNode(n).ok()) {
        ++erased;
        progress = true;
      }
      n = nullptr;
    }
  }
  return erased;
}

void Rewriter::SetInput(Node* node, size_t i, Value* value) {
  Value* old = node->input(i);
  node->SetInput(MutationKey(), i, value);
  if (listener_ && old != value) {
    listener_->NodeModified(node);
    if (old) listener_->UseRemoved(old);
  }
}

void Rewriter::AddInput(Node* node, Value* value) {
  node->AddInput(MutationKey(), value);
  if (listener_) listener_->NodeModified(node);
}

Value* Rewriter::AddOutput(Node* node, std::string name) {
  Value* v = node->AddOutput(MutationKey(), std::move(name));
  if (listener_) listener_->NodeModified(node);
  return v;
}

void Rewriter::RemoveInput(Node* node, size_t i) {
  Value* old = node->input(i);
  node->RemoveInput(MutationKey(), i);
  if (listener_) {
    listener_->NodeModified(node);
    if (old) listener_->UseRemoved(old);
  }
}

void Rewriter::SetAttribute(Node* node, onnx::AttributeProto attribute) {
  node->SetAttribute(MutationKey(), std::move(attribute));
  if (listener_) listener_->NodeModified(node);
}

bool Rewriter::RemoveAttribute(Node* node, std::string_view name) {
  bool removed = node->RemoveAttribute(MutationKey(), name);
  if (removed && listener_) listener_->NodeModified(node);
  return removed;
}

StatusOr<Node*> Rewriter::InsertAfter(Value* y, std::string_view op_type, std::vector<Value*> inputs,
                                      std::vector<onnx::AttributeProto> attributes, std::string_view domain) {
  Node* producer = y->producer();
  if (!producer) {
    return absl::InvalidArgumentError(absl::StrCat("rule '", rule_, "': '", y->name(), "' is not a node output"));
  }
  Node* saved_before = insert_before_;
  Graph* saved_graph = graph_;
  SetInsertionPointAfter(producer);
  // Made without y first, so that moving y's uses does not move its own.
  Node* n = Create(op_type, {}, std::move(attributes), 1, domain);
  insert_before_ = saved_before;
  graph_ = saved_graph;
  // The new node transforms y (a Cast after it), it does not stand for y: no record.
  created_.erase(n);
  Status moved = ReplaceAllUsesWith(y, n->output(0), GraphOutputs::kKeepNames);
  created_.insert(n);
  OS_RETURN_IF_ERROR(moved);
  for (Value* v : inputs) AddInput(n, v);
  return n;
}

StatusOr<Node*> Rewriter::DropOutputs(Node* node, size_t keep) {
  for (size_t i = keep; i < node->num_outputs(); ++i) {
    if (node->output(i) && node->output(i)->HasUsers()) {
      return absl::FailedPreconditionError(absl::StrCat("rule '", rule_, "': output ", i, " ('",
                                                        node->output(i)->name(), "') of node '", node->name(),
                                                        "' is still used"));
    }
  }
  bool trailing_only = true;
  for (size_t i = keep; i < node->num_outputs(); ++i) trailing_only &= node->output(i) == nullptr;
  if (trailing_only && node->num_outputs() <= keep) return node;
  if (!node->subgraphs().empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("rule '", rule_, "': cannot drop outputs of node '", node->name(), "', which has subgraphs"));
  }
  MutationKey key;
  Graph* g = node->graph();
  std::vector<Value*> inputs(node->inputs().begin(), node->inputs().end());
  Node* fresh = g->CreateNode(key, node->op_type(), inputs, 0, node->domain(), node, node->name());
  for (size_t i = 0; i < keep && i < node->num_outputs(); ++i) {
    if (node->output(i)) fresh->AddOutput(key);
    else fresh->AddOmittedOutput(key);
  }
  for (const Attribute& a : node->attributes()) fresh->SetAttribute(key, a.proto());
  std::string name = node->name();
  *fresh->mutable_proto().mutable_metadata_props() = node->proto().metadata_props();
  std::vector<Use> moved;
  for (size_t i = 0; i < keep && i < node->num_outputs(); ++i) {
    if (!node->output(i)) continue;
    moved.insert(moved.end(), node->output(i)->uses().begin(), node->output(i)->uses().end());
    OS_RETURN_IF_ERROR(node->output(i)->ReplaceAllUsesWith(key, fresh->output(i), true));
  }
  if (listener_) {
    for (const Use& u : moved) listener_->NodeModified(u.node);
    listener_->NodeErased(node);
  }
  OS_RETURN_IF_ERROR(g->EraseNode(key, node, /*force=*/true));
  fresh->set_name(name);
  if (listener_) listener_->NodeCreated(fresh);
  return fresh;
}

Status Rewriter::EraseNodeLeavingUses(Node* node) {
  std::vector<Value*> inputs = node->inputs();
  created_.erase(node);
  if (listener_) listener_->NodeErased(node);
  OS_RETURN_IF_ERROR(node->graph()->EraseNode(MutationKey(), node, /*force=*/true));
  if (listener_)
    for (Value* v : inputs)
      if (v) listener_->UseRemoved(v);
  return absl::OkStatus();
}

StatusOr<Node*> Rewriter::Clone(const Node& source, ValueMap& map, std::string_view name_prefix,
                                const AttributeFilter& filter) {
  if (!graph_)
    return absl::FailedPreconditionError(absl::StrCat("rule '", rule_, "': a clone without an insertion point"));
  OS_ASSIGN_OR_RETURN(Node * n, CloneNode(MutationKey(), source, *graph_, insert_before_, map, name_prefix, filter));
  if (listener_) listener_->NodeCreated(n);
  return n;
}

StatusOr<std::vector<Value*>> Rewriter::Inline(const Graph& body, ValueMap& map, std::string_view name_prefix) {
  if (!graph_)
    return absl::FailedPreconditionError(
        absl::StrCat("rule '", rule_, "': an inlined graph without an insertion point"));
  for (Node* n : body.AllNodesRecursive())
    for (Value* in : n->inputs())
      if (in && !in->graph()->IsWithin(&body)) map[in] = in;
  for (Value* out : body.outputs())
    if (!out->graph()->IsWithin(&body)) map[out] = out;
  for (Value* init : body.initializers()) {
    if (map.contains(init)) continue;
    OS_ASSIGN_OR_RETURN(Value * v,
                        AddInitializer(graph_,
                                       graph_->UniqueName(absl::StrCat(
                                           absl::string_view(name_prefix.data(), name_prefix.size()), init->name())),
                                       *init->initializer()));
    map[init] = v;
  }
  for (Node* n : body.nodes()) OS_RETURN_IF_ERROR(Clone(*n, map, name_prefix).status());
  std::vector<Value*> outputs;
  for (Value* out : body.outputs()) {
    auto it = map.find(out);
    outputs.push_back(it == map.end() ? nullptr : it->second);
  }
  return outputs;
}

StatusOr<Value*> Rewriter::AddGraphInput(Graph* graph, std::string name, onnx::ValueInfoProto info) {
  return graph->AddInput(MutationKey(), std::move(name), std::move(info));
}

Status Rewriter::RemoveGraphInput(Value* value) { return value->graph()->RemoveInput(MutationKey(), value); }

void Rewriter::AddGraphOutput(Graph* graph, Value* value) { graph->AddOutput(MutationKey(), value); }

void Rewriter::SetGraphOutput(Graph* graph, size_t i, Value* value) {
  Value* old = graph->outputs()[i];
  graph->SetOutput(MutationKey(), i, value);
  if (listener_ && old != value) listener_->UseRemoved(old);
}

void Rewriter::RemoveGraphOutput(Graph* graph, size_t i) {
  Value* old = graph->outputs()[i];
  graph->RemoveOutput(MutationKey(), i);
  if (listener_) listener_->UseRemoved(old);
}

StatusOr<Value*> Rewriter::AddInitializer(Graph* graph, std::string name, Tensor tensor) {
  return graph->AddInitializer(MutationKey(), std::move(name), std::move(tensor));
}

Status Rewriter::RemoveInitializer(Value* value) { return value->graph()->RemoveInitializer(MutationKey(), value); }

Status Rewriter::EraseValue(Value* value) { return value->graph()->EraseValue(MutationKey(), value); }

onnx::AttributeProto Rewriter::AttrInt(std::string name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(std::move(name));
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto Rewriter::AttrFloat(std::string name, float v) {
  onnx::AttributeProto a;
  a.set_name(std::move(name));
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

onnx::AttributeProto Rewriter::AttrInts(std::string name, const std::vector<int64_t>& v) {
  onnx::AttributeProto a;
  a.set_name(std::move(name));
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a.add_ints(x);
  return a;
}

onnx::AttributeProto Rewriter::AttrString(std::string name, std::string v) {
  onnx::AttributeProto a;
  a.set_name(std::move(name));
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(std::move(v));
  return a;
}

}  // namespace onnxsurgeon
