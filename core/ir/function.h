// Function: a model-local function (FunctionProto). Its body is an IR graph whose inputs
// and outputs are the function's formal parameters (untyped unless value_info says so);
// attribute parameters, opset imports and unknown fields stay in the proto shell.
#pragma once

#include <memory>
#include <string>

#include "core/ir/graph.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

class Function {
 public:
  explicit Function(Model* model);
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;
  const std::string& name() const { return proto_.name(); }
  const std::string& domain() const { return proto_.domain(); }
  const std::string& overload() const { return proto_.overload(); }

  // Shell: everything but node/input/output/value_info.
  const onnx::FunctionProto& proto() const { return proto_; }
  onnx::FunctionProto& mutable_proto() { return proto_; }

  Graph& body() { return *body_; }
  const Graph& body() const { return *body_; }

  // Opset version this function imports for `domain` ("" = ai.onnx), or -1.
  int64_t OpsetVersion(std::string_view domain) const;

 private:
  friend class GraphImporter;
  friend class GraphExporter;
  onnx::FunctionProto proto_;
  std::unique_ptr<Graph> body_;
};

}  // namespace onnxsurgeon
