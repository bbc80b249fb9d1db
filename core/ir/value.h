// Value: one SSA value of a graph (a graph input, an initializer, or a node output).
//
// A value knows its producer and its uses, so rewrites never rescan the graph:
//   value->producer()        the node that computes it (null for inputs/initializers)
//   value->uses()            every (node, input index) that reads it, subgraph nodes included
//   value->graph_outputs()   every (graph, output index) that returns it
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/mutation_key.h"
#include "core/ir/status.h"
#include "core/ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class Graph;
class Node;

struct Use {
  Node* node;
  int input_index;
  bool operator==(const Use&) const = default;
};

struct GraphOutputUse {
  Graph* graph;
  int output_index;
  bool operator==(const GraphOutputUse&) const = default;
};

class Value {
 public:
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;

  const std::string& name() const { return name_; }
  Graph* graph() const { return graph_; }

  Node* producer() const { return producer_; }
  int producer_output_index() const { return producer_output_index_; }

  const std::vector<Use>& uses() const { return uses_; }
  const std::vector<GraphOutputUse>& graph_outputs() const { return graph_outputs_; }
  bool IsGraphOutput() const { return !graph_outputs_.empty(); }
  bool IsGraphInput() const { return is_graph_input_; }
  bool IsInitializer() const { return initializer_ != nullptr; }
  bool IsSparseInitializer() const { return sparse_initializer_ != nullptr; }
  // True once erased from its graph: a stale pointer, to be neither read nor used.
  bool IsErased() const { return dead_; }
  // True when something reads the value: a node or a graph output.
  bool HasUsers() const { return !uses_.empty() || !graph_outputs_.empty(); }

  // Type, shape and doc string as in the graph's input/output/value_info entry, if any.
  const onnx::ValueInfoProto* info() const { return info_.get(); }
  // For a pass that sets the type: a differing declaration the model carried for this
  // value elsewhere (a value_info entry beside its graph output's) is dropped, so no stale
  // second type is written (a float16 value declared float in value_info).
  onnx::ValueInfoProto* mutable_info();
  bool has_type() const { return info_ && info_->has_type(); }
  const onnx::TypeProto* type() const { return has_type() ? &info_->type() : nullptr; }
  // True when the graph's value_info list carries an entry for this value.
  bool in_value_info() const { return in_value_info_; }

  const Tensor* initializer() const { return initializer_.get(); }
  Tensor* mutable_initializer() { return initializer_.get(); }
  const onnx::SparseTensorProto* sparse_initializer() const { return sparse_initializer_.get(); }

  // Renames the value; every node, output and value_info that refers to it follows. Error
  // if the name is taken in this graph.
  //   Given:   %h = f(%x)   %y = g(%h)
  //   Execute: %h.SetName("hidden")
  //   Result:  %hidden = f(%x)   %y = g(%hidden)
  Status SetName(std::string name);

  // Points every node use of this value at `other` (same graph scope, or an outer one).
  //   Given:   %3 = f(%1, %2)
  //            %4 = g(%3)
  //            %5 = h(%3, %3)
  //   Execute: %3.ReplaceAllUsesWith(%6)
  //   Result:  %3 = f(%1, %2)
  //            %4 = g(%6)
  //            %5 = h(%6, %6)
  // Graph outputs returning this value are refused unless allow_graph_outputs; when
  // allowed, `other` takes over the output slots and, where it is a plain node output, this
  // value's name, so the model's interface is unchanged.
  Status ReplaceAllUsesWith(MutationKey, Value* other, bool allow_graph_outputs = false);

 private:
  friend class Graph;
  friend class GraphImporter;
  friend class GraphExporter;
  friend class Node;
  Value(Graph* graph, std::string name) : name_(std::move(name)), graph_(graph) {}

  // Use-list edits, O(1): each node remembers where its input i sits in the value's
  // uses_ (Node::use_slots_), and removal swaps the last use into the hole.
  void AddUse(Node* node, int input_index);
  void RemoveUse(Node* node, int input_index);

  std::string name_;
  Graph* graph_;
  Node* producer_ = nullptr;
  int producer_output_index_ = -1;
  std::vector<Use> uses_;
  std::vector<GraphOutputUse> graph_outputs_;
  std::unique_ptr<onnx::ValueInfoProto> info_;
  std::unique_ptr<Tensor> initializer_;
  std::unique_ptr<onnx::SparseTensorProto> sparse_initializer_;
  bool is_graph_input_ = false;
  bool in_value_info_ = false;
  // A graph output slot or value_info entry of this value declares a type of its own that
  // differs from info_ (kept verbatim for a faithful round trip); mutable_info() drops them.
  bool info_overridden_ = false;
  bool dead_ = false;  // erased; kept allocated so stale pointers never dangle
  size_t slot_ = 0;    // index in Graph::values_
};

}  // namespace onnxsurgeon
