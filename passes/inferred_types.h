// InferredTypes: tensor element types for passes that need them (strip-identity-cast),
// from the model's own type annotations and onnx shape inference, without changing the
// model (inference runs on an exported copy; nothing is added to value_info).
#pragma once

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "core/ir/model.h"

namespace onnxsurgeon::passes {

class InferredTypes {
 public:
  // Given a model. Execute exports a copy (large initializers as metadata only: types
  // need no weights) and runs onnx shape inference on it. Result the element type of
  // every value inference could type. A model inference cannot handle is not an error:
  // its values just stay unknown, and passes leave what they cannot prove alone.
  static InferredTypes Infer(const Model& model);

  // Tensor element type of `v` (an onnx::TensorProto::DataType), 0 when unknown. The
  // value's own annotation or initializer wins; a Cast's output is its `to`, a
  // CastLike's the type of its second input, so values made by rewrites stay typed.
  int32_t ElemType(const Value* v) const;

 private:
  absl::flat_hash_map<const Value*, int32_t> inferred_;
};

}  // namespace onnxsurgeon::passes
