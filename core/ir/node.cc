#include "core/ir/node.h"

#include "core/ir/graph.h"
#include "core/ir/model.h"

namespace onnxsurgeon {

bool Node::Is(std::string_view op_type, std::string_view domain) const {
  return proto_.op_type() == op_type && CanonicalDomain(proto_.domain()) == CanonicalDomain(domain);
}

void Node::SetInput(MutationKey, size_t i, Value* value) {
  if (i >= inputs_.size()) inputs_.resize(i + 1, nullptr);
  if (inputs_[i] == value) return;
  if (inputs_[i]) inputs_[i]->RemoveUse(this, static_cast<int>(i));
  inputs_[i] = value;
  if (value) value->AddUse(this, static_cast<int>(i));
}

void Node::AddInput(MutationKey, Value* value) {
  inputs_.push_back(value);
  if (value) value->AddUse(this, static_cast<int>(inputs_.size() - 1));
}

void Node::RemoveInput(MutationKey, size_t i) {
  if (i >= inputs_.size()) return;
  for (size_t k = i; k < inputs_.size(); ++k)
    if (inputs_[k]) inputs_[k]->RemoveUse(this, static_cast<int>(k));
  inputs_.erase(inputs_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = i; k < inputs_.size(); ++k)
    if (inputs_[k]) inputs_[k]->AddUse(this, static_cast<int>(k));
}

Value* Node::AddOutput(MutationKey, std::string name) {
  if (name.empty()) {
    name = graph_->UniqueName(proto_.name().empty() ? proto_.op_type() : proto_.name());
  } else if (graph_->FindValue(name)) {
    name = graph_->UniqueName(name);  // never shadow an existing value
  }
  Value* v = graph_->NewValue(std::move(name));
  v->producer_ = this;
  v->producer_output_index_ = static_cast<int>(outputs_.size());
  outputs_.push_back(v);
  return v;
}

const Attribute* Node::FindAttribute(std::string_view name) const {
  for (const Attribute& a : attributes_)
    if (a.name() == name) return &a;
  return nullptr;
}

Attribute* Node::FindAttribute(MutationKey, std::string_view name) {
  for (Attribute& a : attributes_)
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t Node::GetInt(std::string_view name, int64_t fallback) const {
  const Attribute* a = FindAttribute(name);
  return a ? a->i(fallback) : fallback;
}

float Node::GetFloat(std::string_view name, float fallback) const {
  const Attribute* a = FindAttribute(name);
  return a ? a->f(fallback) : fallback;
}

void Node::SetAttribute(MutationKey key, Attribute attribute) {
  for (auto& g : attribute.mutable_graphs()) g->parent_node_ = this;
  if (Attribute* existing = FindAttribute(key, attribute.name())) {
    *existing = std::move(attribute);
  } else {
    attributes_.push_back(std::move(attribute));
  }
}

bool Node::RemoveAttribute(MutationKey, std::string_view name) {
  for (auto it = attributes_.begin(); it != attributes_.end(); ++it) {
    if (it->name() == name) {
      attributes_.erase(it);
      return true;
    }
  }
  return false;
}

std::vector<Graph*> Node::subgraphs() const {
  std::vector<Graph*> out;
  for (const Attribute& a : attributes_)
    for (const auto& g : a.graphs()) out.push_back(g.get());
  return out;
}

}  // namespace onnxsurgeon
