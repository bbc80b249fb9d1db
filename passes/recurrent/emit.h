// Small emitters the recurrent passes share: the opset-dependent forms of Split and Clip,
// constants in the model's float type, and one activation by its ONNX name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::passes::recurrent {

class Emitter {
 public:
  Emitter(Rewriter& rw, int64_t opset, int32_t type) : rw_(rw), opset_(opset), type_(type) {}

  Rewriter& rw() { return rw_; }
  // A constant of the float type with `dims`, from doubles (rounded once).
  StatusOr<Value*> Floats(const std::vector<double>& values, std::vector<int64_t> dims, std::string_view hint);
  // Split of `v` along `axis` into pieces of `sizes` (an attribute below opset 13, an input from 13).
  std::vector<Value*> Split(Value* v, int64_t axis, const std::vector<int64_t>& sizes);
  // Gather of the single index `i` along `axis` (drops that axis).
  StatusOr<Value*> Pick(Value* v, int64_t i, int64_t axis);
  Value* Reshape(Value* v, const std::vector<int64_t>& shape);
  // Clip(v, -clip, clip) when `clip` is set (attributes below opset 11, inputs from 11).
  StatusOr<Value*> Clip(Value* v, std::optional<float> clip);
  // The activation `name` (Sigmoid, Tanh or Relu) of Clip(v).
  StatusOr<Value*> Activation(const std::string& name, Value* v, std::optional<float> clip);

 private:
  Rewriter& rw_;
  int64_t opset_;
  int32_t type_;
};

// True for the activations Emitter::Activation writes.
bool IsPlainActivation(const std::string& name);

}  // namespace onnxsurgeon::passes::recurrent
