// Node: one operator application. Inputs and outputs are Values (null for an omitted
// optional input or output, written "" in the proto). Everything else of the NodeProto
// (name, op_type, domain, overload, doc_string, metadata_props, unknown fields) lives in a
// proto "shell" so that load -> save loses nothing.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/mutation_key.h"
#include "core/ir/status.h"
#include "core/ir/value.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class Graph;

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  Graph* graph() const { return graph_; }
  const std::string& op_type() const { return proto_.op_type(); }
  // "" for the default ai.onnx domain.
  const std::string& domain() const { return proto_.domain(); }
  const std::string& name() const { return proto_.name(); }
  void set_name(std::string name) { proto_.set_name(std::move(name)); }
  bool Is(std::string_view op_type, std::string_view domain = "") const;

  // The shell: everything but inputs, outputs and attributes.
  const onnx::NodeProto& proto() const { return proto_; }
  onnx::NodeProto& mutable_proto() { return proto_; }

  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  Value* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  Value* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }

  // Rewires one input slot (null: omit an optional input); the node moves from the old
  // value's uses to the new one's.
  //   Given:   %3 = f(%1, %2)
  //   Execute: f.SetInput(1, %4)
  //   Result:  %3 = f(%1, %4)                  (%2 lost a use)
  void SetInput(MutationKey, size_t i, Value* value);
  //   Given:   %3 = f(%1)
  //   Execute: f.AddInput(%2)
  //   Result:  %3 = f(%1, %2)
  void AddInput(MutationKey, Value* value);
  //   Given:   %3 = f(%1, %2)
  //   Execute: f.RemoveInput(0)
  //   Result:  %3 = f(%2)                      (later slots shift left)
  void RemoveInput(MutationKey, size_t i);

  // Appends an output (name empty: a fresh unique one derived from the node).
  //   Given:   %2 = f(%1)
  //   Execute: f.AddOutput()
  //   Result:  %2, %3 = f(%1)
  Value* AddOutput(MutationKey, std::string name = {});
  // Appends an omitted optional output (written as "").
  void AddOmittedOutput(MutationKey) { outputs_.push_back(nullptr); }

  const std::vector<Attribute>& attributes() const { return attributes_; }
  const Attribute* FindAttribute(std::string_view name) const;
  // The attribute to edit in place (the key: an attribute edit is a mutation).
  Attribute* FindAttribute(MutationKey, std::string_view name);
  int64_t GetInt(std::string_view name, int64_t fallback) const;
  float GetFloat(std::string_view name, float fallback) const;
  // Replaces the attribute of that name or appends it (graph attributes: the subgraphs go
  // in via Attribute).
  //   Given:   %2 = Softmax<axis=1>(%1)
  //   Execute: SetAttribute(axis=-1)
  //   Result:  %2 = Softmax<axis=-1>(%1)
  void SetAttribute(MutationKey, Attribute attribute);
  void SetAttribute(MutationKey key, onnx::AttributeProto proto) { SetAttribute(key, Attribute(std::move(proto))); }
  // True if the attribute was there.
  //   Given:   %2 = Reshape<allowzero=1>(%1, %s)
  //   Execute: RemoveAttribute("allowzero")
  //   Result:  %2 = Reshape(%1, %s)
  bool RemoveAttribute(MutationKey, std::string_view name);

  // Subgraphs of all graph attributes, in attribute order.
  std::vector<Graph*> subgraphs() const;

  Node* next() const { return next_; }
  Node* prev() const { return prev_; }

 private:
  friend class Graph;
  friend class GraphImporter;
  friend class GraphExporter;
  friend class Value;  // use-list slots; ReplaceAllUsesWith rewires inputs in bulk
  explicit Node(Graph* graph) : graph_(graph) {}

  Graph* graph_;
  onnx::NodeProto proto_;
  std::vector<Value*> inputs_;
  std::vector<uint32_t> use_slots_;  // use_slots_[i]: index of {this, i} in inputs_[i]->uses_
  std::vector<Value*> outputs_;
  std::vector<Attribute> attributes_;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  bool dead_ = false;
};

}  // namespace onnxsurgeon
