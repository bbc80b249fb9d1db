// Rewriter: the only thing that mutates a graph during a pattern pass. Every change goes
// through it so its listener (the greedy driver) can keep its worklist right, and every
// node it creates carries the name of the rule that made it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/ir/status.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class RewriteListener {
 public:
  virtual ~RewriteListener() = default;
  virtual void NodeCreated(Node* node) {}
  virtual void NodeErased(Node* node) {}
  // One of `node`'s inputs now reads another value.
  virtual void NodeModified(Node* node) {}
  // `value` lost a user: its producer may be dead now, and its remaining users may now
  // match patterns that need `value` used only inside the match. Every callback is O(1)
  // in the number of uses a value has, so rewriting stays linear when a constant feeds
  // thousands of nodes.
  virtual void UseRemoved(Value* value) {}
};

// The NodeProto metadata key under which new nodes record the rule that made them.
inline constexpr const char* kProvenanceKey = "onnxsurgeon.rule";

class Rewriter {
 public:
  explicit Rewriter(RewriteListener* listener = nullptr) : listener_(listener) {}

  // New nodes go before `node`, in its graph.
  void SetInsertionPoint(Node* node) { insert_before_ = node; graph_ = node->graph(); }
  Graph* graph() const { return graph_; }
  void SetRule(std::string rule) { rule_ = std::move(rule); }
  const std::string& rule() const { return rule_; }

  // Creates a node at the insertion point, named after the rule and stamped with it in its
  // metadata (kProvenanceKey). Null inputs are omitted optional ones.
  //   Given:   %y = Reciprocal(%x)             (insertion point)
  //   Execute: Create("Div", {%one, %x})
  //   Result:  %d = Div(%one, %x)    <onnxsurgeon.rule: "reciprocal">
  //            %y = Reciprocal(%x)
  Node* Create(std::string_view op_type, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes = {},
               int num_outputs = 1, std::string_view domain = "");
  // Create(...)->output(0): for the common single-output case.
  Value* Op(std::string_view op_type, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes = {},
            std::string_view domain = "");

  // Adds `tensor` as an initializer of the insertion graph (a Constant node in a function
  // body), named after the rule; an error when the tensor has no element type or there is
  // no insertion point.
  //   Given:   g (...) { ... }
  //   Execute: Constant(float {1}, "one")           (in rule "reciprocal")
  //   Result:  g (...) <float reciprocal/one = {1}> { ... }
  StatusOr<Value*> Constant(Tensor tensor, std::string_view name_hint = "const");
  // A rank-0 `v` of a floating-point type (float, double, float16, bfloat16); an error
  // for any other type.
  StatusOr<Value*> ScalarFloat(float v, int32_t data_type = onnx::TensorProto::FLOAT);
  // A rank-1 int64 tensor: always well-formed, so it cannot fail.
  Value* Int64s(const std::vector<int64_t>& v);

  // Value::ReplaceAllUsesWith, graph outputs included, with the listener told. Output
  // names never change: `to` takes the name over or, when it cannot (a graph input, an
  // initializer, another output), an Identity carries it.
  //   Given:   %h = Reshape(%x, %s)   %y = Neg(%h)
  //   Execute: ReplaceAllUsesWith(%h, %x)
  //   Result:  %h = Reshape(%x, %s)   %y = Neg(%x)      (%h unused)
  Status ReplaceAllUsesWith(Value* from, Value* to);
  // Replaces each output by its replacement (null: the output must be unused) and erases
  // the node.
  //   Given:   %y = Reciprocal(%x)   %z = Neg(%y)
  //   Execute: ReplaceNode(Reciprocal, {%d})        (%d = Div(%one, %x))
  //   Result:  %d = Div(%one, %x)   %z = Neg(%d)
  Status ReplaceNode(Node* node, const std::vector<Value*>& replacements);
  //   Given:   %2 = f(%1)   (%2 unused)
  //   Execute: EraseNode(f)
  //   Result:  (f gone; error, nothing changed, if %2 is still used)
  Status EraseNode(Node* node);
  // Erases the candidates that are, or become, unused, repeatedly; how many went.
  //   Given:   %2 = f(%1)   %3 = g(%2)   (%3 unused)
  //   Execute: EraseDead({g, f})
  //   Result:  (both gone: 2)
  int EraseDead(std::vector<Node*> candidates);
  void SetInput(Node* node, size_t i, Value* value);

  // Attribute builders.
  static onnx::AttributeProto AttrInt(std::string name, int64_t v);
  static onnx::AttributeProto AttrFloat(std::string name, float v);
  static onnx::AttributeProto AttrInts(std::string name, const std::vector<int64_t>& v);
  static onnx::AttributeProto AttrString(std::string name, std::string v);

 private:
  // A Constant node carrying `tensor` (function bodies have no initializers).
  Value* ConstantNode(const Tensor& tensor);

  RewriteListener* listener_;
  Node* insert_before_ = nullptr;
  Graph* graph_ = nullptr;
  std::string rule_ = "rewrite";
};

}  // namespace onnxsurgeon
