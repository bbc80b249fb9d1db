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

namespace {
// Size of one element in raw_data, or 0 when the type is not a plain array.
size_t ElementSize(int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::DOUBLE: case T::INT64: case T::UINT64: case T::COMPLEX64: return 8;
    case T::COMPLEX128: return 16;
    case T::INT16: case T::UINT16: case T::FLOAT16: case T::BFLOAT16: return 2;
    case T::INT8: case T::UINT8: case T::BOOL: return 1;
    default: return 0;
  }
}

template <typename To, typename Field>
void AppendAs(const Field& field, std::string& out) {
  for (auto v : field) {
    To x = static_cast<To>(v);
    out.append(reinterpret_cast<const char*>(&x), sizeof(To));
  }
}
}  // namespace

bool Tensor::CanBeRaw() const { return has_raw_bytes() || ElementSize(meta_.data_type()) != 0; }

StatusOr<std::string> Tensor::RawBytesCopy() const {
  if (has_raw_bytes()) return std::string(raw_);
  using T = onnx::TensorProto;
  std::string out;
  switch (meta_.data_type()) {
    case T::FLOAT: case T::COMPLEX64: AppendAs<float>(meta_.float_data(), out); break;
    case T::DOUBLE: case T::COMPLEX128: AppendAs<double>(meta_.double_data(), out); break;
    case T::INT64: AppendAs<int64_t>(meta_.int64_data(), out); break;
    case T::UINT64: AppendAs<uint64_t>(meta_.uint64_data(), out); break;
    case T::UINT32: AppendAs<uint32_t>(meta_.uint64_data(), out); break;
    case T::INT32: AppendAs<int32_t>(meta_.int32_data(), out); break;
    case T::INT16: AppendAs<int16_t>(meta_.int32_data(), out); break;
    case T::UINT16: case T::FLOAT16: case T::BFLOAT16: AppendAs<uint16_t>(meta_.int32_data(), out); break;
    case T::INT8: AppendAs<int8_t>(meta_.int32_data(), out); break;
    case T::UINT8: case T::BOOL: AppendAs<uint8_t>(meta_.int32_data(), out); break;
    default:
      return absl::UnimplementedError(absl::StrCat("tensor of data type ", meta_.data_type(), " has no raw layout here"));
  }
  return out;
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
