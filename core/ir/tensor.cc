#include "core/ir/tensor.h"

namespace onnxsurgeon {

Tensor Tensor::FromProto(onnx::TensorProto proto) {
  Tensor t;
  if (proto.has_raw_data()) {
    auto bytes = std::make_shared<std::string>(std::move(*proto.mutable_raw_data()));
    proto.clear_raw_data();
    t.meta_ = std::move(proto);
    std::string_view view(*bytes);
    t.AttachLoadedBytes(std::move(bytes), view, TensorStorage::kRaw);
  } else {
    t.meta_ = std::move(proto);
  }
  return t;
}

void Tensor::AttachLoadedBytes(std::shared_ptr<const void> owner, std::string_view bytes, TensorStorage storage) {
  owner_ = std::move(owner);
  raw_ = bytes;
  storage_ = storage;
}

void Tensor::SetRawBytes(std::shared_ptr<const void> owner, std::string_view bytes) {
  // Typed fields and external markers describe the old payload; drop them.
  meta_.clear_float_data();
  meta_.clear_int32_data();
  meta_.clear_string_data();
  meta_.clear_int64_data();
  meta_.clear_double_data();
  meta_.clear_uint64_data();
  meta_.clear_external_data();
  meta_.clear_data_location();
  AttachLoadedBytes(std::move(owner), bytes, TensorStorage::kRaw);
}

void Tensor::SetRawBytes(std::string bytes) {
  auto owned = std::make_shared<std::string>(std::move(bytes));
  std::string_view view(*owned);
  SetRawBytes(std::move(owned), view);
}

onnx::TensorProto Tensor::ToProto(const std::string& name) const {
  onnx::TensorProto p = meta_;
  p.set_name(name);
  if (has_raw_bytes()) {
    p.clear_external_data();
    p.clear_data_location();
    p.set_raw_data(raw_.data(), raw_.size());
  }
  return p;
}

int64_t Tensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : meta_.dims()) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

}  // namespace onnxsurgeon
