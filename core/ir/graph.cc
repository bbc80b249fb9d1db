#include "core/ir/graph.h"

#include <algorithm>
#include <deque>

#include "absl/container/flat_hash_set.h"
#include "core/ir/model.h"

namespace onnxsurgeon {

Graph::Graph(Model* model, GraphKind kind) : model_(model), kind_(kind) {}

Graph::~Graph() {
  Node* n = first_;
  while (n) {
    Node* next = n->next_;
    // Every use goes before its node: RemoveUse moves the last use of the value into the
    // hole and updates that node's slot, so no use list may keep a deleted node (a
    // subgraph destroyed later removes its reads of outer values from the same lists).
    for (size_t i = 0; i < n->inputs_.size(); ++i) {
      Value* v = n->inputs_[i];
      if (v) v->RemoveUse(n, static_cast<int>(i));
    }
    delete n;
    n = next;
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    Value* v = outputs_[i];
    if (v && v->graph_ != this) {
      auto& outs = v->graph_outputs_;
      outs.erase(std::remove(outs.begin(), outs.end(), GraphOutputUse{this, static_cast<int>(i)}), outs.end());
    }
  }
}

Graph* Graph::parent_graph() const { return parent_node_ ? parent_node_->graph() : nullptr; }

const Graph* Graph::root() const {
  const Graph* g = this;
  while (g->parent_graph()) g = g->parent_graph();
  return g;
}

int64_t Graph::OpsetVersion(std::string_view domain) const {
  const Graph* r = root();
  if (r->function_) {
    int64_t v = r->function_->OpsetVersion(domain);
    if (v >= 0) return v;
  }
  return model_ ? model_->OpsetVersion(domain) : -1;
}

std::vector<Graph*> Graph::SelfAndSubgraphs() const {
  std::vector<Graph*> out{const_cast<Graph*>(this)};
  for (Node* n : nodes())
    for (Graph* g : n->subgraphs()) {
      auto sub = g->SelfAndSubgraphs();
      out.insert(out.end(), sub.begin(), sub.end());
    }
  return out;
}

std::vector<Node*> Graph::AllNodesRecursive() const {
  std::vector<Node*> out;
  out.reserve(num_nodes_);
  for (Node* n : nodes()) {
    out.push_back(n);
    for (Graph* g : n->subgraphs()) {
      auto sub = g->AllNodesRecursive();
      out.insert(out.end(), sub.begin(), sub.end());
    }
  }
  return out;
}

// ---- node list ---------------------------------------------------------------------

void Graph::LinkBefore(Node* node, Node* position) {
  if (position == nullptr) {
    node->prev_ = last_;
    node->next_ = nullptr;
    if (last_) last_->next_ = node;
    else first_ = node;
    last_ = node;
  } else {
    node->next_ = position;
    node->prev_ = position->prev_;
    if (position->prev_) position->prev_->next_ = node;
    else first_ = node;
    position->prev_ = node;
  }
  ++num_nodes_;
}

void Graph::Unlink(Node* node) {
  if (node->prev_) node->prev_->next_ = node->next_;
  else first_ = node->next_;
  if (node->next_) node->next_->prev_ = node->prev_;
  else last_ = node->prev_;
  node->prev_ = node->next_ = nullptr;
  --num_nodes_;
}

Node* Graph::CreateNode(MutationKey key, std::string_view op_type, std::span<Value* const> inputs, int num_outputs,
                        std::string_view domain, Node* insert_before, std::string_view name_hint) {
  Node* node = new Node(this);
  node->proto_.set_op_type(std::string(op_type));
  if (!domain.empty()) node->proto_.set_domain(std::string(domain));
  std::string base(name_hint.empty() ? op_type : name_hint);
  node->proto_.set_name(UniqueName(base));
  LinkBefore(node, insert_before);
  for (Value* v : inputs) node->AddInput(key, v);
  for (int i = 0; i < num_outputs; ++i) node->AddOutput(key, UniqueName(node->name() + "_out" + std::to_string(i)));
  return node;
}

Status Graph::EraseNode(MutationKey key, Node* node, bool force) {
  if (node->graph_ != this) {
    return absl::InvalidArgumentError(absl::StrCat("node '", node->name(), "' is not in graph '", name(), "'"));
  }
  if (!force) {
    for (Value* out : node->outputs_) {
      if (out && out->HasUsers()) {
        return absl::FailedPreconditionError(absl::StrCat("cannot erase node '", node->name(), "' (", node->op_type(),
                                                          "): its output '", out->name(), "' is still used"));
      }
    }
  }
  for (size_t i = 0; i < node->inputs_.size(); ++i) node->SetInput(key, i, nullptr);
  for (Value* out : node->outputs_) {
    if (!out) continue;
    out->producer_ = nullptr;
    KillValue(out);
  }
  Unlink(node);
  delete node;  // subgraphs go with it; their destructors drop their outer-scope uses
  return absl::OkStatus();
}

void Graph::MoveBefore(MutationKey, Node* node, Node* position) {
  if (node == position) return;
  Unlink(node);
  LinkBefore(node, position);
}

namespace {
// Values a node reads, including those its subgraphs read from enclosing scopes.
void CollectReads(const Node* node, std::vector<Value*>& out) {
  for (Value* v : node->inputs())
    if (v) out.push_back(v);
  for (Graph* g : node->subgraphs())
    for (Node* inner : g->AllNodesRecursive())
      for (Value* v : inner->inputs())
        if (v) out.push_back(v);
}
}  // namespace

bool Graph::IsTopologicallySorted() const {
  absl::flat_hash_set<const Node*> seen;
  std::vector<Value*> reads;
  for (Node* n : nodes()) {
    reads.clear();
    CollectReads(n, reads);
    for (Value* v : reads) {
      Node* p = v->producer();
      if (p && p->graph() == this && !seen.contains(p)) return false;
    }
    seen.insert(n);
  }
  return true;
}

namespace {
// Kahn's algorithm, taking ready nodes in their current order (stable).
StatusOr<std::vector<Node*>> TopologicalOrder(const Graph& graph) {
  const Graph* self = &graph;
  std::vector<Node*> order;
  order.reserve(graph.num_nodes());
  absl::flat_hash_map<Node*, size_t> index;
  for (Node* n : graph.nodes()) {
    index[n] = order.size();
    order.push_back(n);
  }
  std::vector<int> pending(order.size(), 0);
  std::vector<std::vector<size_t>> users(order.size());
  std::vector<Value*> reads;
  for (size_t i = 0; i < order.size(); ++i) {
    reads.clear();
    CollectReads(order[i], reads);
    absl::flat_hash_set<Node*> deps;
    for (Value* v : reads) {
      Node* p = v->producer();
      if (p && p->graph() == self && p != order[i] && deps.insert(p).second) {
        ++pending[i];
        users[index[p]].push_back(i);
      } else if (p == order[i]) {
        return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' has a cycle: node '", p->name(),
                                                       "' (", p->op_type(), ") reads its own output"));
      }
    }
  }
  // A min-heap on original position keeps the order stable.
  std::vector<size_t> ready;
  for (size_t i = 0; i < order.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  std::vector<Node*> sorted;
  sorted.reserve(order.size());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    size_t i = ready.back();
    ready.pop_back();
    sorted.push_back(order[i]);
    for (size_t u : users[i]) {
      if (--pending[u] == 0) {
        ready.push_back(u);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
    }
  }
  if (sorted.size() != order.size()) {
    std::string names;
    int shown = 0;
    for (size_t i = 0; i < order.size() && shown < 5; ++i) {
      if (pending[i] > 0) {
        absl::StrAppend(&names, shown ? ", " : "", "'", order[i]->name(), "' (", order[i]->op_type(), ")");
        ++shown;
      }
    }
    return absl::InvalidArgumentError(absl::StrCat("graph '", graph.name(), "' has a cycle through nodes ", names));
  }
  return sorted;
}
}  // namespace

Status Graph::CheckAcyclic() const { return TopologicalOrder(*this).status(); }

Status Graph::TopologicalSort() {
  OS_ASSIGN_OR_RETURN(std::vector<Node*> sorted, TopologicalOrder(*this));
  first_ = last_ = nullptr;
  num_nodes_ = 0;
  for (Node* n : sorted) LinkBefore(n, nullptr);
  return absl::OkStatus();
}

// ---- values ------------------------------------------------------------------------

Value* Graph::NewValue(std::string name) {
  auto owned = std::unique_ptr<Value>(new Value(this, std::move(name)));
  Value* v = owned.get();
  v->slot_ = values_.size();
  values_.push_back(std::move(owned));
  if (!v->name_.empty()) {
    by_name_[v->name_] = v;
    if (model_) model_->ReserveName(v->name_);
  }
  return v;
}

void Graph::KillValue(Value* v) {
  if (v->dead_) return;
  v->dead_ = true;
  has_dead_values_ = true;
  auto it = by_name_.find(v->name_);
  if (it != by_name_.end() && it->second == v) by_name_.erase(it);
}

Value* Graph::FindValue(std::string_view name) const {
  auto it = by_name_.find(absl::string_view(name.data(), name.size()));
  return it == by_name_.end() ? nullptr : it->second;
}

bool Graph::IsWithin(const Graph* scope) const {
  for (const Graph* g = this; g; g = g->parent_graph())
    if (g == scope) return true;
  return false;
}

Value* Graph::LookupValue(std::string_view name) const {
  for (const Graph* g = this; g; g = g->parent_graph())
    if (Value* v = g->FindValue(name)) return v;
  return nullptr;
}

Status Graph::RenameValue(Value* v, std::string name) {
  if (v->name_ == name) return absl::OkStatus();
  if (!name.empty() && FindValue(name)) {
    return absl::AlreadyExistsError(
        absl::StrCat("value name '", name, "' is already used in graph '", this->name(), "'"));
  }
  auto it = by_name_.find(v->name_);
  if (it != by_name_.end() && it->second == v) by_name_.erase(it);
  v->name_ = std::move(name);
  if (!v->name_.empty()) {
    by_name_[v->name_] = v;
    if (model_) model_->ReserveName(v->name_);
  }
  return absl::OkStatus();
}

StatusOr<Value*> Graph::AddInput(MutationKey, std::string name, onnx::ValueInfoProto info) {
  if (name.empty()) name = UniqueName("input");
  if (FindValue(name)) return absl::AlreadyExistsError(absl::StrCat("graph input '", name, "' already defined"));
  Value* v = NewValue(std::move(name));
  v->is_graph_input_ = true;
  info.clear_name();
  v->info_ = std::make_unique<onnx::ValueInfoProto>(std::move(info));
  inputs_.push_back(v);
  return v;
}

StatusOr<Value*> Graph::AddInitializer(MutationKey, std::string name, Tensor tensor) {
  if (name.empty()) name = UniqueName("initializer");
  Value* v = FindValue(name);
  if (v && (v->producer_ || v->initializer_ || v->sparse_initializer_)) {
    return absl::AlreadyExistsError(absl::StrCat("initializer '", name, "' would redefine an existing value"));
  }
  if (!v) v = NewValue(std::move(name));
  v->initializer_ = std::make_unique<Tensor>(std::move(tensor));
  v->initializer_->mutable_meta().clear_name();
  initializers_.push_back(v);
  return v;
}

Status Graph::RemoveInitializer(MutationKey, Value* value) {
  if (!value->initializer_) {
    return absl::InvalidArgumentError(absl::StrCat("'", value->name(), "' is not an initializer"));
  }
  if (!value->is_graph_input_ && value->HasUsers()) {
    return absl::FailedPreconditionError(absl::StrCat("initializer '", value->name(), "' is still used"));
  }
  initializers_.erase(std::find(initializers_.begin(), initializers_.end(), value));
  value->initializer_.reset();
  if (!value->is_graph_input_) KillValue(value);
  return absl::OkStatus();
}

Status Graph::RemoveInput(MutationKey, Value* value) {
  if (!value->is_graph_input_) {
    return absl::InvalidArgumentError(absl::StrCat("'", value->name(), "' is not a graph input"));
  }
  if (!value->initializer_ && value->HasUsers()) {
    return absl::FailedPreconditionError(absl::StrCat("graph input '", value->name(), "' is still used"));
  }
  inputs_.erase(std::find(inputs_.begin(), inputs_.end(), value));
  value->is_graph_input_ = false;
  if (!value->initializer_) KillValue(value);
  return absl::OkStatus();
}

void Graph::DropInfoOverrides(Value* value) {
  for (ValueInfoEntry& e : value_info_)
    if (e.value == value) e.proto.reset();
  for (const GraphOutputUse& slot : value->graph_outputs_) slot.graph->output_info_[slot.output_index].reset();
}

void Graph::AddOutput(MutationKey, Value* value) {
  outputs_.push_back(value);
  output_info_.emplace_back();
  value->graph_outputs_.push_back({this, static_cast<int>(outputs_.size() - 1)});
}

namespace {
// True when `replacement` says less than `declared` about a tensor of the same element type.
bool KeepsDeclaredShape(const onnx::TypeProto& declared, const onnx::TypeProto* replacement) {
  if (!declared.has_tensor_type() || !declared.tensor_type().has_shape()) return false;
  if (!replacement) return true;
  if (!replacement->has_tensor_type() || replacement->tensor_type().has_shape()) return false;
  int32_t elem = replacement->tensor_type().elem_type();
  return elem == 0 || elem == declared.tensor_type().elem_type();
}
}  // namespace

void Graph::SetOutput(MutationKey, size_t i, Value* value) {
  Value* old = outputs_[i];
  if (old == value) return;
  auto& outs = old->graph_outputs_;
  outs.erase(std::remove(outs.begin(), outs.end(), GraphOutputUse{this, static_cast<int>(i)}), outs.end());
  // The graph's interface outlives the swap: a replacement computes the same output, so
  // when it is typed less (no shape: an op onnx cannot infer through) the shape the old
  // output declared still holds, and the checker requires one on a graph output.
  const onnx::ValueInfoProto* old_info = output_info_[i] ? output_info_[i].get() : old->info_.get();
  std::unique_ptr<onnx::ValueInfoProto> kept;
  if (old_info && KeepsDeclaredShape(old_info->type(), value->type())) {
    kept = std::make_unique<onnx::ValueInfoProto>(*old_info);
  }
  outputs_[i] = value;
  output_info_[i] = std::move(kept);
  value->graph_outputs_.push_back({this, static_cast<int>(i)});
}

void Graph::RemoveOutput(MutationKey, size_t i) {
  for (size_t k = i; k < outputs_.size(); ++k) {
    auto& outs = outputs_[k]->graph_outputs_;
    outs.erase(std::remove(outs.begin(), outs.end(), GraphOutputUse{this, static_cast<int>(k)}), outs.end());
  }
  outputs_.erase(outputs_.begin() + static_cast<std::ptrdiff_t>(i));
  output_info_.erase(output_info_.begin() + static_cast<std::ptrdiff_t>(i));
  for (size_t k = i; k < outputs_.size(); ++k) outputs_[k]->graph_outputs_.push_back({this, static_cast<int>(k)});
}

Status Graph::EraseValue(MutationKey, Value* value) {
  if (value->producer_ || value->is_graph_input_ || value->initializer_ || value->sparse_initializer_) {
    return absl::FailedPreconditionError(absl::StrCat("value '", value->name(), "' is still defined"));
  }
  if (value->HasUsers()) {
    return absl::FailedPreconditionError(absl::StrCat("value '", value->name(), "' is still used"));
  }
  KillValue(value);
  return absl::OkStatus();
}

void Graph::AddValueInfo(Value* value) {
  if (value->in_value_info_) return;
  value->in_value_info_ = true;
  value->mutable_info();
  value_info_.push_back({value, nullptr});
}

size_t Graph::RemoveOrphanValueInfo() {
  size_t before = value_info_.size();
  std::erase_if(value_info_, [](const ValueInfoEntry& e) { return !e.value || e.value->dead_; });
  return before - value_info_.size();
}

std::string Graph::UniqueName(std::string_view base) const { return model_->UniqueName(base); }

void Graph::Compact() {
  if (!has_dead_values_) return;
  std::erase_if(value_info_, [](const ValueInfoEntry& e) { return e.value && e.value->dead_; });
  std::erase_if(values_, [](const std::unique_ptr<Value>& v) { return v->dead_; });
  for (size_t i = 0; i < values_.size(); ++i) values_[i]->slot_ = i;
  has_dead_values_ = false;
}

size_t Graph::num_values() const {
  size_t n = 0;
  for (const auto& v : values_) n += !v->dead_;
  return n;
}

}  // namespace onnxsurgeon
