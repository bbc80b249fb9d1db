// Constant evaluation: computes an ONNX node's outputs from constant inputs with the
// project's own kernels (no runtime dependency).
//
//   const KernelFn* k = FindKernel("Add", "", 18);
//   StatusOr<std::vector<Array>> outs = Evaluate(node, inputs, opset, max_output_bytes);
//
// The kernels are keyed by op type (the key of the op table, core/shape/op_table.h, which
// holds the other per-op rules) and the opset range of the signature each implements;
// kernels read attributes and optional inputs through KernelContext. A kernel fails with
// a Status, never a crash:
//   ResourceExhausted  an output would exceed max_output_bytes (nothing was materialised)
//   Unimplemented      a dtype or attribute form the kernel does not handle
//   InvalidArgument    the node is malformed or undefined here (e.g. integer division by 0)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/eval/array.h"
#include "core/ir/node.h"

namespace onnxsurgeon::eval {

class KernelContext {
 public:
  KernelContext(const Node& node, int64_t opset, int64_t max_output_bytes)
      : node_(node), opset_(opset), max_output_bytes_(max_output_bytes) {}

  const Node& node() const { return node_; }
  int64_t opset() const { return opset_; }
  const Attribute* attr(std::string_view name) const { return node_.FindAttribute(name); }
  int64_t GetInt(std::string_view name, int64_t fallback) const { return node_.GetInt(name, fallback); }
  float GetFloat(std::string_view name, float fallback) const { return node_.GetFloat(name, fallback); }
  std::optional<std::vector<int64_t>> GetInts(std::string_view name) const;

  // Given an output dtype and dims. Execute checks the size budget, then allocates.
  // Result the array, or ResourceExhausted when over max_output_bytes.
  StatusOr<NewArray> Allocate(int32_t dtype, std::vector<int64_t> dims) const;
  // The same budget check for outputs that are views or strings.
  Status CheckSize(int64_t bytes) const;

 private:
  const Node& node_;
  int64_t opset_;
  int64_t max_output_bytes_;
};

// Inputs in node order; null for an omitted optional input.
using Inputs = std::span<const Array* const>;
using KernelFn = StatusOr<std::vector<Array>> (*)(const KernelContext&, Inputs);

// The kernel for op_type at `opset` of the default domain, or null.
const KernelFn* FindKernel(std::string_view op_type, std::string_view domain, int64_t opset);
// Every op type with a kernel at some opset (tests use it to pick backend cases).
std::vector<std::string> KernelOpTypes();

// Given a node, its constant inputs and the opset in force. Execute runs the kernel.
// Result one array per node output (omitted outputs get an empty Array), or the kernel's
// error; Unimplemented when no kernel exists.
StatusOr<std::vector<Array>> Evaluate(const Node& node, Inputs inputs, int64_t opset, int64_t max_output_bytes);

}  // namespace onnxsurgeon::eval
