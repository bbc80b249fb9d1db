// Graph: nodes in order, values with use lists, inputs, outputs, initializers, value_info.
//
// Ownership: a Graph owns its nodes (an intrusive list, O(1) insert/erase) and its values.
// Erased values are only marked dead until Compact(), so a pointer a pass still holds
// never dangles; erased nodes are freed at once (nothing can use them any more).
//
// Scoping: a subgraph (If/Loop/Scan body) may read values of enclosing graphs by name.
// Such a read is an ordinary Use on the outer value, so replace/erase see it.
//
// Everything of the GraphProto that the IR does not model (name, doc_string,
// quantization_annotation, metadata_props, unknown fields) stays in a proto shell.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/ir/mutation_key.h"
#include "core/ir/node.h"
#include "core/ir/status.h"
#include "core/ir/value.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class Model;
class Function;

enum class GraphKind { kMain, kSubgraph, kFunctionBody };

class Graph {
 public:
  Graph(Model* model, GraphKind kind);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Model* model() const { return model_; }
  GraphKind kind() const { return kind_; }
  // The node whose attribute holds this graph (null for the main graph and function bodies).
  Node* parent_node() const { return parent_node_; }
  Graph* parent_graph() const;
  // True when this graph is `scope` or nested inside it.
  bool IsWithin(const Graph* scope) const;
  const std::string& name() const { return proto_.name(); }
  // The function whose body this is, for function bodies (and their subgraphs' roots).
  const Function* function() const { return function_; }
  // The root graph of this scope chain (main graph or function body).
  const Graph* root() const;
  // Opset version in force for `domain` here: the function's import inside a function
  // body (falling back to the model's), else the model's. -1 if not imported.
  int64_t OpsetVersion(std::string_view domain) const;

  const onnx::GraphProto& proto() const { return proto_; }
  onnx::GraphProto& mutable_proto() { return proto_; }

  // ---- nodes -------------------------------------------------------------------------
  class NodeIterator {
   public:
    using iterator_category = std::bidirectional_iterator_tag;
    using value_type = Node*;
    using difference_type = std::ptrdiff_t;
    using pointer = Node**;
    using reference = Node*;
    NodeIterator() = default;
    NodeIterator(Node* node, const Graph* g) : node_(node), graph_(g) {}
    Node* operator*() const { return node_; }
    NodeIterator& operator++() {
      node_ = node_->next();
      return *this;
    }
    NodeIterator operator++(int) {
      auto t = *this;
      ++*this;
      return t;
    }
    NodeIterator& operator--() {
      node_ = node_ ? node_->prev() : graph_->last_;
      return *this;
    }
    bool operator==(const NodeIterator& o) const { return node_ == o.node_; }

   private:
    Node* node_ = nullptr;
    const Graph* graph_ = nullptr;
  };
  struct NodeRange {
    NodeIterator b, e;
    NodeIterator begin() const { return b; }
    NodeIterator end() const { return e; }
  };
  NodeRange nodes() const { return {NodeIterator(first_, this), NodeIterator(nullptr, this)}; }
  Node* first_node() const { return first_; }
  Node* last_node() const { return last_; }
  size_t num_nodes() const { return num_nodes_; }
  // Nodes of this graph and, recursively, of its subgraphs (pre-order).
  std::vector<Node*> AllNodesRecursive() const;
  // This graph and, recursively, its subgraphs (pre-order: a node's subgraphs in
  // attribute order, nodes in order).
  std::vector<Graph*> SelfAndSubgraphs() const;

  // Creates a node before `insert_before` (null: at the end); outputs get fresh names from
  // `name_hint` (or the op type) and the inputs get the node as a use.
  //   Given:   %2 = f(%1)
  //   Execute: CreateNode("Relu", {%1}, 1, "", /*insert_before=*/f)
  //   Result:  %3 = Relu(%1)
  //            %2 = f(%1)                       (%1 now has two uses)
  Node* CreateNode(MutationKey, std::string_view op_type, std::span<Value* const> inputs, int num_outputs,
                   std::string_view domain = "", Node* insert_before = nullptr, std::string_view name_hint = {});

  // Erases a node whose outputs nobody uses; its inputs lose it as a use and its outputs
  // die. With force, uses of its outputs are left dangling for the caller to fix (used when
  // deleting whole regions). Error, nothing changed, when an output is still used.
  //   Given:   %2 = f(%1)                       (%2 unused)
  //            %3 = g(%1)
  //   Execute: EraseNode(f)
  //   Result:  %3 = g(%1)
  Status EraseNode(MutationKey, Node* node, bool force = false);

  //   Given:   %2 = f(%1)   %3 = g(%1)
  //   Execute: MoveBefore(g, f)
  //   Result:  %3 = g(%1)   %2 = f(%1)
  void MoveBefore(MutationKey, Node* node, Node* position);  // position null: to the end

  // True when every node comes after the producers of its inputs.
  bool IsTopologicallySorted() const;
  // Reorders nodes so each comes after the producers of its inputs, stable (keeps the
  // original order where it is already valid); an error names a node on a cycle.
  //   Given:   %3 = g(%2)   %2 = f(%1)
  //   Execute: TopologicalSort()
  //   Result:  %2 = f(%1)   %3 = g(%2)
  Status TopologicalSort();
  // The error TopologicalSort would give, changing nothing.
  Status CheckAcyclic() const;

  // ---- values ------------------------------------------------------------------------
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<Value*>& initializers() const { return initializers_; }
  const std::vector<Value*>& sparse_initializers() const { return sparse_initializers_; }

  // A live value of this graph by name (not outer scopes), or null.
  Value* FindValue(std::string_view name) const;
  // A live value by name in this graph or an enclosing graph, or null.
  Value* LookupValue(std::string_view name) const;

  // Appends a graph input (name empty: a fresh one); error if the name is taken.
  //   Given:   g (%x) => (%y)
  //   Execute: AddInput("mask", bool[N])
  //   Result:  g (%x, bool[N] %mask) => (%y)
  StatusOr<Value*> AddInput(MutationKey, std::string name, onnx::ValueInfoProto info = {});
  // Adds an initializer, or attaches the tensor to the graph input of that name; error if
  // a node produces the name.
  //   Given:   g (%x) => (%y) { ... }
  //   Execute: AddInitializer("w", float[2] {1, 2})
  //   Result:  g (%x) => (%y) <float[2] w = {1, 2}> { ... }
  StatusOr<Value*> AddInitializer(MutationKey, std::string name, Tensor tensor);
  // Drops an initializer's tensor (and its value, unless it is also a graph input); error
  // while a node or output reads it.
  //   Given:   <float[2] w = {1, 2}>   (w unused)
  //   Execute: RemoveInitializer(%w)
  //   Result:  <>
  Status RemoveInitializer(MutationKey, Value* value);
  // Stops listing a graph input (an initializer of that name stays); error if that would
  // leave a used value undefined.
  //   Given:   g (%x, %mask) => (%y)        (%mask unused)
  //   Execute: RemoveInput(%mask)
  //   Result:  g (%x) => (%y)
  Status RemoveInput(MutationKey, Value* value);

  //   Given:   g (%x) => (%y) { %h = f(%x)  %y = g(%h) }
  //   Execute: AddOutput(%h)
  //   Result:  g (%x) => (%y, %h)
  void AddOutput(MutationKey, Value* value);
  //   Given:   g (%x) => (%y) { %h = f(%x)  %y = g(%h) }
  //   Execute: SetOutput(0, %h)
  //   Result:  g (%x) => (%h)                  (%y may now be dead)
  void SetOutput(MutationKey, size_t i, Value* value);
  //   Given:   g (%x) => (%y, %h)
  //   Execute: RemoveOutput(1)
  //   Result:  g (%x) => (%y)
  void RemoveOutput(MutationKey, size_t i);
  // The output entry's own ValueInfoProto where it differs from the value's info()
  // (as loaded); null otherwise. Dropped when the slot is rewired.
  const onnx::ValueInfoProto* output_info_override(size_t i) const { return output_info_[i].get(); }

  // Marks dead a value that nothing defines any more (stale after an erase); error if it
  // is still used.
  Status EraseValue(MutationKey, Value* value);

  // value_info: entries carry type info for intermediate values.
  // Given a value. Execute lists it in value_info (its info() is the entry).
  void AddValueInfo(Value* value);
  // Value_info entries in order. `proto` is set for an orphan entry (value null: a name
  // that defines nothing, kept so load -> save is lossless) or for an entry whose text
  // differs from value->info() (e.g. a second entry for the same value).
  struct ValueInfoEntry {
    Value* value = nullptr;
    std::unique_ptr<onnx::ValueInfoProto> proto;
  };
  const std::vector<ValueInfoEntry>& value_info() const { return value_info_; }

  // Given nothing. Execute drops value_info entries that name no live value.
  // Result how many were dropped.
  size_t RemoveOrphanValueInfo();
  // Given a value of this graph. Execute drops the declarations its graph output slots and
  // value_info entry carry apart from its own info (Value::mutable_info).
  void DropInfoOverrides(Value* value);

  // A name not used anywhere in the model, derived from `base`.
  std::string UniqueName(std::string_view base) const;

  // Frees dead values and forgets them in value_info. Called before export.
  void Compact();

  // Number of live values (for tests and inspect).
  size_t num_values() const;

 private:
  friend class Model;
  friend class Function;
  friend class Value;
  friend class Node;
  friend class GraphImporter;
  friend class GraphExporter;

  Value* NewValue(std::string name);  // registers name; caller ensures uniqueness
  void LinkBefore(Node* node, Node* position);
  void Unlink(Node* node);
  void KillValue(Value* v);
  Status RenameValue(Value* v, std::string name);

  Model* model_;
  GraphKind kind_;
  Node* parent_node_ = nullptr;
  const Function* function_ = nullptr;
  onnx::GraphProto proto_;  // shell

  Node* first_ = nullptr;
  Node* last_ = nullptr;
  size_t num_nodes_ = 0;

  std::vector<std::unique_ptr<Value>> values_;
  absl::flat_hash_map<std::string, Value*> by_name_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<std::unique_ptr<onnx::ValueInfoProto>> output_info_;  // parallel to outputs_
  std::vector<Value*> initializers_;
  std::vector<Value*> sparse_initializers_;
  std::vector<ValueInfoEntry> value_info_;
  bool has_dead_values_ = false;
};

}  // namespace onnxsurgeon
