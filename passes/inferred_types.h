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
  // Given a model (it must outlive this object). Execute nothing yet: inference runs on
  // the first question the model's own annotations cannot answer, so a model without
  // such questions (no Cast, say) never pays for it.
  explicit InferredTypes(const Model* model = nullptr) : model_(model) {}

  // Tensor element type of `v` (an onnx::TensorProto::DataType), 0 when unknown. The
  // value's own annotation or initializer wins; a Cast's output is its `to`, a
  // CastLike's the type of its second input, so values made by rewrites stay typed.
  // Otherwise the local shape rules (core/shape/propagate.h) decide, and for what they
  // leave unknown onnx shape inference, run once on an exported copy (large
  // initializers as metadata only: types need no weights). A model inference cannot
  // handle is not an error: its values stay unknown, and passes leave them alone.
  int32_t ElemType(const Value* v) const;
  // Rank of `v`, -1 when unknown: its annotation, else the local shape rules.
  int64_t Rank(const Value* v) const;

 private:
  void Infer() const;

  const Model* model_;
  mutable bool propagated_once_ = false;
  mutable absl::flat_hash_map<const Value*, onnx::TypeProto> propagated_;
  mutable bool inferred_once_ = false;
  mutable absl::flat_hash_map<const Value*, int32_t> inferred_;
};

}  // namespace onnxsurgeon::passes
