// Attribute: a node attribute. Scalars, lists, tensors, type protos and references to
// function attributes stay in an onnx::AttributeProto (lossless, cheap); graph-valued
// attributes (If/Loop/Scan bodies) are lifted into IR graphs so passes can rewrite them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class Graph;

class Attribute {
 public:
  explicit Attribute(onnx::AttributeProto proto);
  Attribute(Attribute&&) noexcept;
  Attribute& operator=(Attribute&&) noexcept;
  ~Attribute();

  const std::string& name() const { return proto_.name(); }
  onnx::AttributeProto::AttributeType type() const { return proto_.type(); }
  bool is_ref() const { return !proto_.ref_attr_name().empty(); }

  // The proto; for GRAPH/GRAPHS attributes its g/graphs fields are empty (see graphs()).
  const onnx::AttributeProto& proto() const { return proto_; }
  onnx::AttributeProto& mutable_proto() { return proto_; }

  // Subgraphs held by a GRAPH (one) or GRAPHS (any number) attribute.
  const std::vector<std::unique_ptr<Graph>>& graphs() const { return graphs_; }
  std::vector<std::unique_ptr<Graph>>& mutable_graphs() { return graphs_; }

  // True when the first graph goes in the proto's `g` field (a GRAPH attribute).
  bool first_graph_in_g() const { return first_graph_in_g_ || proto_.type() == onnx::AttributeProto::GRAPH; }
  void set_first_graph_in_g(bool v) { first_graph_in_g_ = v; }

  // Scalar accessors for the common cases (fall back to `fallback` on type mismatch).
  int64_t i(int64_t fallback = 0) const;
  float f(float fallback = 0) const;
  const std::string& s() const { return proto_.s(); }
  std::vector<int64_t> ints() const { return {proto_.ints().begin(), proto_.ints().end()}; }

 private:
  onnx::AttributeProto proto_;
  std::vector<std::unique_ptr<Graph>> graphs_;
  bool first_graph_in_g_ = false;
};

}  // namespace onnxsurgeon
