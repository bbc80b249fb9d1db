#include "passes/inferred_types.h"

#include "core/interop/onnx_interop.h"
#include "core/shape/propagate.h"

namespace onnxsurgeon::passes {
namespace {

constexpr int64_t kInlineBytes = 4096;  // small tensors (shapes, indices) keep their data

int32_t TensorElemType(const onnx::TypeProto& t) { return t.has_tensor_type() ? t.tensor_type().elem_type() : 0; }

}  // namespace

void InferredTypes::Infer() const {
  inferred_once_ = true;
  if (!model_ || !model_->has_graph()) return;
  InferShapesOptions options;
  options.data_propagation = false;
  options.max_payload_bytes = kInlineBytes;  // types need no weights
  auto inferred = InferredCopy(*model_, options);
  if (!inferred.ok()) return;  // unknown types: passes that need them change nothing
  inferred->ForEachType([&](Value* v, const onnx::TypeProto& t) {
    if (int32_t e = TensorElemType(t)) inferred_[v] = e;
  });
}

int64_t InferredTypes::Rank(const Value* v) const {
  if (!v) return -1;
  auto rank_of = [](const onnx::TypeProto& t) -> int64_t {
    return t.has_tensor_type() && t.tensor_type().has_shape() ? t.tensor_type().shape().dim_size() : -1;
  };
  if (const onnx::TypeProto* t = v->type())
    if (int64_t r = rank_of(*t); r >= 0) return r;
  if (const Tensor* t = v->initializer()) return static_cast<int64_t>(t->meta().dims_size());
  if (!propagated_once_) {
    propagated_once_ = true;
    if (model_ && model_->has_graph()) propagated_ = PropagatedTypes(model_->graph());
  }
  auto it = propagated_.find(v);
  return it == propagated_.end() ? -1 : rank_of(it->second);
}

int32_t InferredTypes::ElemType(const Value* v) const {
  if (!v) return 0;
  if (const onnx::TypeProto* t = v->type())
    if (int32_t e = TensorElemType(*t)) return e;
  if (const Tensor* t = v->initializer()) return t->meta().data_type();
  if (Node* p = v->producer()) {
    if (p->Is("Cast")) return static_cast<int32_t>(p->GetInt("to", 0));
    if (p->Is("CastLike")) return ElemType(p->input(1));
  }
  if (!propagated_once_) {  // the local rules first: most questions end there
    propagated_once_ = true;
    if (model_ && model_->has_graph()) propagated_ = PropagatedTypes(model_->graph());
  }
  if (auto it = propagated_.find(v); it != propagated_.end()) return TensorElemType(it->second);
  if (!inferred_once_) Infer();
  auto it = inferred_.find(v);
  return it == inferred_.end() ? 0 : it->second;
}

}  // namespace onnxsurgeon::passes
