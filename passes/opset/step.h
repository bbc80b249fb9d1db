// What the opset converter's adapters and decompositions see: the node, the two schemas
// of a step, the types (TypeFacts, inferred before converting), and helpers to make
// constants and refuse with a clear reason. Internal to passes/opset.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/analysis/type_facts.h"
#include "core/ir/constant.h"
#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/rewrite/rewriter.h"
#include "onnx/defs/schema.h"

namespace onnxsurgeon::opset {

// A node that a step emitted, or a node made by a decomposition, and the opset its
// signature follows: the converter takes it on from there to the target.
struct Pending {
  Node* node;
  int64_t opset;
};

struct StepContext {
  Node* node = nullptr;
  std::string domain;  // "" or "ai.onnx.ml"
  const onnx::OpSchema* from = nullptr;
  const onnx::OpSchema* to = nullptr;
  int64_t target = -1;           // where the whole conversion goes
  Rewriter* rewriter = nullptr;  // insertion point: before `node`
  TypeFacts* types = nullptr;    // built up front, told what the conversion creates
  std::vector<Pending>* emitted = nullptr;
  // The adapter did the whole step: the generic schema-driven step is skipped.
  bool handled = false;
  // The adapter replaced the node; the step continues with (or ends at) this node.
  Node* replacement = nullptr;

  bool down() const { return to->since_version() < from->since_version(); }
  // The highest opset at which the `to` schema is in force for this op: new helper nodes
  // that follow that opset's signatures are converted on from there.
  int64_t to_opset() const;

  // A FailedPrecondition naming node, op, versions and `why`.
  Status Refuse(const std::string& why) const;

  // Constants (an initializer, or a Constant node inside a function body).
  Value* Int64s(const std::vector<int64_t>& v, bool scalar = false);
  Value* Scalar(double v, int32_t data_type);
  Value* Tensor1D(const std::vector<double>& v, int32_t data_type);
  // A helper node that follows the signatures of opset to_opset(); queued for conversion.
  Node* Emit(const std::string& op, std::vector<Value*> inputs, std::vector<onnx::AttributeProto> attributes = {},
             int num_outputs = 1);
};

using Adapter = std::function<Status(StepContext&)>;

// The adapter for one step of `op` from since-version `from` to since-version `to`, or null.
const Adapter* FindAdapter(const std::string& domain, const std::string& op, int from, int to);

// Decompositions: ops replaced by older ops when the target lacks them.
struct DecomposeContext {
  Node* node = nullptr;
  std::string domain;
  int64_t opset = -1;  // the node's current opset
  int64_t target = -1;
  Rewriter* rewriter = nullptr;
  TypeFacts* types = nullptr;  // built up front, told what the conversion creates
  std::vector<Pending>* emitted = nullptr;
  std::string* why_not = nullptr;  // set when the decomposition does not apply
};
// Given a node whose op must go. Execute replaces it by equivalent nodes (queued in
// `emitted`). Result true when done; false (why in *why_not, the graph untouched) when
// no exact decomposition exists for this node; an error on a broken model.
StatusOr<bool> Decompose(DecomposeContext& ctx);
// True when `op` at a target below `min_opset` must be decomposed even though the target
// knows an op of that name (its meaning there differs, e.g. GroupNormalization < 21).
int64_t DecomposeBelow(const std::string& domain, const std::string& op);
// For an op the target lacks that is renamed rather than decomposed: the version of the
// op to walk to first (then Decompose renames it), or -1.
int64_t BridgeVersion(const std::string& domain, const std::string& op, int64_t target);

// The elements of a small constant: an initializer or Constant node, seen through ops
// that keep the elements (Reshape, Squeeze, Unsqueeze, Flatten, Identity, Cast to an
// integer type) and Concat of such (exporters write axes as Reshape(constant)).
std::optional<std::vector<int64_t>> ConstantInts(const Value* v);
std::optional<std::vector<double>> ConstantDoubles(const Value* v);

// Shared helpers.
std::string DescribeNode(const Node& node);
onnx::AttributeProto TensorAttr(const std::string& name, const onnx::TensorProto& t);
// Given a graph value. Result a constant value for an encoded tensor, placed as an
// initializer or (in a function body) a Constant node before `before`.
Value* MakeConstant(Rewriter& rewriter, Node* before, onnx::TensorProto tensor, const std::string& hint);

// Attribute helpers the adapters share.
inline onnx::AttributeProto AttrInt(const std::string& name, int64_t v) { return Rewriter::AttrInt(name, v); }
inline onnx::AttributeProto AttrInts(const std::string& name, const std::vector<int64_t>& v) {
  return Rewriter::AttrInts(name, v);
}
// A string attribute's value, or `fallback` when the node has none.
inline std::string StringAttr(const Node& n, const std::string& name, const std::string& fallback) {
  const Attribute* a = n.FindAttribute(name);
  return a ? a->s() : fallback;
}

}  // namespace onnxsurgeon::opset
