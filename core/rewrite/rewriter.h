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

// What ReplaceAllUsesWith does when the replaced value is a graph output. Every caller
// says which: an output is the model's interface (onnx_ir refuses it unless asked).
enum class GraphOutputs {
  kRefuse,     // an error naming the value
  kKeepNames,  // the outputs return the replacement under their own names: it takes the
               // name over, or (a graph input, an initializer, another output, an outer
               // value) an Identity carries it
  kTakeValue,  // the outputs return the replacement itself; it takes the name over only
               // when it is a plain node output (the caller has arranged names otherwise)
};

// The NodeProto metadata key under which new nodes record the rule that made them.
inline constexpr const char* kProvenanceKey = "onnxsurgeon.rule";

class Rewriter {
 public:
  explicit Rewriter(RewriteListener* listener = nullptr) : listener_(listener) {}

  // New nodes go before `node`, in its graph.
  void SetInsertionPoint(Node* node) {
    insert_before_ = node;
    graph_ = node->graph();
  }
  // New nodes go right after `node` (in creation order), in its graph.
  void SetInsertionPointAfter(Node* node) {
    insert_before_ = node->next();
    graph_ = node->graph();
  }
  // New nodes go at the end of `graph`.
  void SetInsertionPointAtEnd(Graph* graph) {
    insert_before_ = nullptr;
    graph_ = graph;
  }
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

  // Rewires every node use (subgraphs' included) of `from` to `to`, with the listener told;
  // what happens to a graph output returning `from` is the caller's choice (GraphOutputs).
  //   Given:   %h = Reshape(%x, %s)   %y = Neg(%h)
  //   Execute: ReplaceAllUsesWith(%h, %x, kRefuse)
  //   Result:  %h = Reshape(%x, %s)   %y = Neg(%x)      (%h unused)
  // An error, with nothing changed, when `from` is a graph output and `outputs` is kRefuse.
  Status ReplaceAllUsesWith(Value* from, Value* to, GraphOutputs outputs);
  // Replaces each output by its replacement (null: the output must be unused; graph outputs
  // keep their names) and erases the node.
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

  // In-place edits of one node, each reported to the listener (MLIR's modifyOpInPlace).
  // Given a slot (past the end: the inputs grow, omitted ones null) and a value (null:
  // omit). Execute rewires it. Result node->input(i) == value.
  void SetInput(Node* node, size_t i, Value* value);
  // Given a value (or null). Execute appends it as the last input.
  void AddInput(Node* node, Value* value);
  // Given i < num_inputs. Execute drops slot i; later slots shift left.
  void RemoveInput(Node* node, size_t i);
  // Given an attribute. Execute replaces the node's attribute of that name or adds it.
  void SetAttribute(Node* node, onnx::AttributeProto attribute);
  // Given an attribute name. Execute removes it if present. Result true if it was there.
  bool RemoveAttribute(Node* node, std::string_view name);

  // Given a node output `y` and inputs that read it (y among them). Execute creates
  // op_type(inputs) right after y's producer and moves every use of y (graph outputs too:
  // their names stay) to the new node's output. Result the new node, the only reader of y.
  StatusOr<Node*> InsertAfter(Value* y, std::string_view op_type, std::vector<Value*> inputs,
                              std::vector<onnx::AttributeProto> attributes = {}, std::string_view domain = "");

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
