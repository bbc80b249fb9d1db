// Rewriter: the only thing that mutates a graph's structure outside core/ir and the
// importer. The raw mutators of Graph, Node and Value take a MutationKey
// (core/ir/mutation_key.h) that only the IR, the importer and the Rewriter can make, so
// passes, rules, the opset adapters, the CLI and the Python bindings all change graphs
// through a Rewriter: its listener (the greedy driver, when there is one) keeps its
// worklist right, and every node it creates carries the name of the rule that made it.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/ir/clone.h"
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
// The key under which a node a Rewriter made records the values its outputs replaced (the
// `from` of a ReplaceAllUsesWith whose `to` it produces), one line "OUTPUT_INDEX:NAME" each.
// NAME is the value of the model before any rewrite: when the replaced value itself stood
// for an earlier one, its record is carried over. compare matches tensors across a rewrite
// through it where the rewrite did not keep the name.
//   Given:   %h = Div(%x, %c)   %y = Neg(%h)
//   Execute: %m = Mul(%x, %r)   ReplaceAllUsesWith(%h, %m)      (in rule "div-to-mul")
//   Result:  %m = Mul(%x, %r) <onnxsurgeon.rule: "div-to-mul", onnxsurgeon.replaced: "0:h">
inline constexpr const char* kReplacedKey = "onnxsurgeon.replaced";

// Given a node. Result the (output index, original value name) pairs of its kReplacedKey
// record, in the order written; empty when it has none.
std::vector<std::pair<int, std::string>> ReplacedValues(const Node& node);

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
  // `name_hint` (default: "<rule>/<op_type>") is what the node's unique name derives from.
  Node* Create(std::string_view op_type, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes = {},
               int num_outputs = 1, std::string_view domain = "", std::string_view name_hint = {});
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

  // Given a node. Execute appends an output slot (name empty: a fresh one) and tells the
  // listener. Result its value (no users yet).
  //   Given:   %y = Loop(%n, %c, %h0, %x) <body: ... (3 outputs)>
  //   Execute: AddOutput(Loop)
  //   Result:  %y, %x_final = Loop(%n, %c, %h0, %x) <body: ...>
  Value* AddOutput(Node* node, std::string name = {});
  // Given a node with no subgraphs whose outputs from `keep` on are unused (or omitted).
  // Execute rebuilds it at its place with only its first `keep` output slots (omitted ones
  // stay omitted; name, attributes and metadata kept, provenance included), the outputs'
  // uses and names moved over. Result the new node (`node` itself when nothing was to
  // drop), or an error with nothing changed.
  //   Given:   %y, %mask = Dropout(%x)            (%mask unused)
  //   Execute: DropOutputs(Dropout, 1)
  //   Result:  %y = Dropout(%x)
  StatusOr<Node*> DropOutputs(Node* node, size_t keep);
  // Erases `node` although its outputs may still be read: those reads are left dangling
  // for the caller to rewire or erase (deleting a whole region, extract's cut).
  //   Given:   %2 = f(%1)   %3 = g(%2)
  //   Execute: EraseNodeLeavingUses(f)
  //   Result:  %3 = g(%2)                        (%2 now defined by nothing)
  Status EraseNodeLeavingUses(Node* node);

  // Given a source node (any graph, any model) and a map covering its inputs (and the
  // outer values its subgraphs read). Execute copies it at the insertion point: op,
  // attributes (through `filter`), shell and metadata as the source has them (a clone is
  // the source's node, not the rule's), name `name_prefix` + source name; the map learns
  // the outputs (core/ir/clone.h). Result the clone, reported to the listener.
  StatusOr<Node*> Clone(const Node& source, ValueMap& map, std::string_view name_prefix = {},
                        const AttributeFilter& filter = {});
  // Given a subgraph (an If branch, a Loop body) whose inputs, if it has any, are in `map`.
  // Execute copies it at the insertion point: its initializers become initializers of the
  // insertion graph and its nodes clones, both named `name_prefix` + their name (the
  // initializers made unique; one `map` already maps stays as mapped, so copying a body
  // once per iteration adds its initializers once); the values it reads from enclosing
  // scopes stay themselves. Result the copies of its outputs, in order (null for an output
  // it does not define).
  StatusOr<std::vector<Value*>> Inline(const Graph& body, ValueMap& map, std::string_view name_prefix);

  // ---- the graph's interface and initializers ------------------------------------------
  // Appends an input to `graph` (name empty: a fresh one); an error if the name is taken.
  //   Given:   g (%x) => (%y)
  //   Execute: AddGraphInput(g, "mask", bool[N])
  //   Result:  g (%x, bool[N] %mask) => (%y)
  StatusOr<Value*> AddGraphInput(Graph* graph, std::string name, onnx::ValueInfoProto info = {});
  // Stops listing `value` as its graph's input; an error if that leaves a use undefined.
  //   Given:   g (%x, %mask) => (%y)                   (%mask unused)
  //   Execute: RemoveGraphInput(%mask)
  //   Result:  g (%x) => (%y)
  Status RemoveGraphInput(Value* value);
  //   Given:   g (%x) => (%y) { %h = f(%x)  %y = g(%h) }
  //   Execute: AddGraphOutput(g, %h)
  //   Result:  g (%x) => (%y, %h)
  void AddGraphOutput(Graph* graph, Value* value);
  // Output slot i of `graph` returns `value`; the value it returned before lost a user.
  //   Given:   g (%x) => (%y)
  //   Execute: SetGraphOutput(g, 0, %h)
  //   Result:  g (%x) => (%h)                          (%y may now be dead)
  void SetGraphOutput(Graph* graph, size_t i, Value* value);
  //   Given:   g (%x) => (%y, %h)
  //   Execute: RemoveGraphOutput(g, 1)
  //   Result:  g (%x) => (%y)                          (%h lost a user)
  void RemoveGraphOutput(Graph* graph, size_t i);
  // An initializer of `graph` under exactly `name` (or the tensor attached to the graph
  // input of that name); an error if a node or initializer defines the name. Constant()
  // is the rule-named form.
  //   Given:   g (%x) => (%y)
  //   Execute: AddInitializer(g, "w", float[2] {1, 2})
  //   Result:  g (%x) => (%y) <float[2] w = {1, 2}>
  StatusOr<Value*> AddInitializer(Graph* graph, std::string name, Tensor tensor);
  // Drops an initializer (its value too unless it is also a graph input); an error while a
  // node or output reads it.
  //   Given:   <float[2] w = {1, 2}>                   (w unused)
  //   Execute: RemoveInitializer(%w)
  //   Result:  <>
  Status RemoveInitializer(Value* value);
  // Marks dead a value nothing defines or reads any more (left by EraseNodeLeavingUses).
  Status EraseValue(Value* value);

  // ---- the model's opset imports and functions ----------------------------------------
  // Given a graph and a domain it has no opset import for (its function's or the model's).
  // Execute imports the domain at `version` in the model, and in the function too when the
  // graph is (in) a function body. Create does this for the domain of every node it makes,
  // at version 1, so a rule may create a node in a domain the model does not import yet.
  //   Given:   <opset_import: ["" : 17]>
  //   Execute: Create("QuickGelu", {%x}, {}, 1, "com.microsoft")
  //   Result:  <opset_import: ["" : 17, "com.microsoft" : 1]>
  // Result whether an import was added.
  bool ImportDomain(Graph& graph, std::string_view domain, int64_t version = 1);
  // Removes the model's functions that nothing calls: no node of the main graph (its
  // subgraphs included) nor of a kept function's body. `among` (when given) limits the
  // removal to those functions. Result how many went.
  //   Given:   f (called from the main graph) calls g; h is called by no one
  //   Execute: RemoveUncalledFunctions(model)
  //   Result:  f and g stay; h is gone (1)
  int64_t RemoveUncalledFunctions(Model& model, const absl::flat_hash_set<const Function*>* among = nullptr);

  // Attribute builders.
  static onnx::AttributeProto AttrInt(std::string name, int64_t v);
  static onnx::AttributeProto AttrFloat(std::string name, float v);
  static onnx::AttributeProto AttrInts(std::string name, const std::vector<int64_t>& v);
  static onnx::AttributeProto AttrString(std::string name, std::string v);

 private:
  // A Constant node carrying `tensor` (function bodies have no initializers).
  Value* ConstantNode(const Tensor& tensor);

  // Given a value replaced by `to`. Execute records on `to`'s producer, when this Rewriter
  // made it, the value `from` stood for (kReplacedKey).
  void RecordReplaced(const Value* from, const Value* to);

  RewriteListener* listener_;
  absl::flat_hash_set<const Node*> created_;  // nodes this Rewriter made and has not erased
  Node* insert_before_ = nullptr;
  Graph* graph_ = nullptr;
  std::string rule_ = "rewrite";
};

}  // namespace onnxsurgeon
