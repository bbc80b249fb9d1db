#include "core/rewrite/rewriter.h"

#include <algorithm>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "core/ir/constant.h"

namespace onnxsurgeon {

Node* Rewriter::Create(std::string_view op_type, std::vector<Value*> inputs,
                       std::vector<onnx::AttributeProto> attributes, int num_outputs, std::string_view domain) {
  Node* n = graph_->CreateNode(op_type, inputs, num_outputs, domain, insert_before_,
                               absl::StrCat(rule_, "/", std::string(op_type)));
  for (auto& a : attributes) n->SetAttribute(std::move(a));
  auto* meta = n->mutable_proto().add_metadata_props();
  meta->set_key(kProvenanceKey);
  meta->set_value(rule_);
  if (listener_) listener_->NodeCreated(n);
  return n;
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
  return graph_->AddInitializer(graph_->UniqueName(absl::StrCat(rule_, "/", std::string(name_hint))),
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
  Tensor t;
  t.mutable_meta().set_data_type(data_type);
  std::string bytes;
  if (data_type == onnx::TensorProto::FLOAT) {
    bytes.assign(reinterpret_cast<const char*>(&v), 4);
  } else if (data_type == onnx::TensorProto::DOUBLE) {
    double d = v;
    bytes.assign(reinterpret_cast<const char*>(&d), 8);
  } else if (data_type == onnx::TensorProto::FLOAT16 || data_type == onnx::TensorProto::BFLOAT16) {
    uint16_t h = data_type == onnx::TensorProto::FLOAT16 ? FloatToHalf(v) : FloatToBFloat16(v);
    bytes.assign(reinterpret_cast<const char*>(&h), 2);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("rule '", rule_, "': a float scalar of element type ", data_type,
                                                   " (not float, double, float16 or bfloat16)"));
  }
  t.SetRawBytes(std::move(bytes));
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
    if (auto added = graph_->AddInitializer(graph_->UniqueName(absl::StrCat(rule_, "/ints")), t); added.ok())
      return *added;
  }
  return ConstantNode(t);
}

Status Rewriter::ReplaceAllUsesWith(Value* from, Value* to, GraphOutputs outputs) {
  if (from->IsGraphOutput() && outputs == GraphOutputs::kRefuse) {
    return absl::FailedPreconditionError(absl::StrCat(
        "rule '", rule_, "': '", from->name(), "' is a graph output; replacing it would change the model's interface"));
  }
  std::vector<Use> moved = from->uses();
  if (from->IsGraphOutput() && outputs == GraphOutputs::kKeepNames) {
    // The model's output names are its interface. `to` can take the name over only if it
    // is a plain node output of the same graph; otherwise an Identity carries the name.
    bool can_take_name = to->graph() == from->graph() && to->producer() && !to->IsGraphOutput();
    if (!can_take_name) {
      for (const Use& u : moved) SetInput(u.node, u.input_index, to);
      Value* named = Op("Identity", {to});
      OS_RETURN_IF_ERROR(from->ReplaceAllUsesWith(named, /*allow_graph_outputs=*/true));
      if (listener_) listener_->UseRemoved(from);
      return absl::OkStatus();
    }
  }
  OS_RETURN_IF_ERROR(from->ReplaceAllUsesWith(to, /*allow_graph_outputs=*/true));
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
  if (listener_) listener_->NodeErased(node);
  Status s = node->graph()->EraseNode(node);
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
  node->SetInput(i, value);
  if (listener_ && old != value) {
    listener_->NodeModified(node);
    if (old) listener_->UseRemoved(old);
  }
}

void Rewriter::AddInput(Node* node, Value* value) {
  node->AddInput(value);
  if (listener_) listener_->NodeModified(node);
}

void Rewriter::RemoveInput(Node* node, size_t i) {
  Value* old = node->input(i);
  node->RemoveInput(i);
  if (listener_) {
    listener_->NodeModified(node);
    if (old) listener_->UseRemoved(old);
  }
}

void Rewriter::SetAttribute(Node* node, onnx::AttributeProto attribute) {
  node->SetAttribute(std::move(attribute));
  if (listener_) listener_->NodeModified(node);
}

bool Rewriter::RemoveAttribute(Node* node, std::string_view name) {
  bool removed = node->RemoveAttribute(name);
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
  OS_RETURN_IF_ERROR(ReplaceAllUsesWith(y, n->output(0), GraphOutputs::kKeepNames));
  for (Value* v : inputs) AddInput(n, v);
  return n;
}

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
