#include "core/eval/array.h"

#include <cmath>
#include <limits>

#include "absl/strings/ascii.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon::eval {

size_t ElementSize(int32_t dtype) {
  switch (dtype) {
    case DT::FLOAT:
    case DT::INT32:
    case DT::UINT32: return 4;
    case DT::DOUBLE:
    case DT::INT64:
    case DT::UINT64: return 8;
    case DT::INT16:
    case DT::UINT16:
    case DT::FLOAT16:
    case DT::BFLOAT16: return 2;
    case DT::INT8:
    case DT::UINT8:
    case DT::BOOL: return 1;
    default: return 0;
  }
}

bool IsFloatType(int32_t t) { return t == DT::FLOAT || t == DT::DOUBLE || t == DT::FLOAT16 || t == DT::BFLOAT16; }

float HalfBitsToFloat(uint16_t h) { return HalfToFloat(h); }
float BFloat16BitsToFloat(uint16_t b) { return BFloat16ToFloat(b); }

StatusOr<int64_t> NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return absl::InvalidArgumentError("element count overflows");
    n *= d;
  }
  return n;
}

int64_t Array::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Array::byte_size() const {
  if (!is_string()) return static_cast<int64_t>(bytes.size());
  int64_t n = 0;
  for (const std::string& s : *strings) n += static_cast<int64_t>(s.size());
  return n;
}

StatusOr<std::vector<int64_t>> Array::Int64s() const {
  int64_t n = numel();
  std::vector<int64_t> out(static_cast<size_t>(n));
  switch (dtype) {
    case DT::INT64:
      for (int64_t i = 0; i < n; ++i) out[i] = at<int64_t>(i);
      break;
    case DT::INT32:
      for (int64_t i = 0; i < n; ++i) out[i] = at<int32_t>(i);
      break;
    case DT::INT16:
      for (int64_t i = 0; i < n; ++i) out[i] = at<int16_t>(i);
      break;
    case DT::INT8:
      for (int64_t i = 0; i < n; ++i) out[i] = at<int8_t>(i);
      break;
    case DT::UINT8:
    case DT::BOOL:
      for (int64_t i = 0; i < n; ++i) out[i] = at<uint8_t>(i);
      break;
    case DT::UINT16:
      for (int64_t i = 0; i < n; ++i) out[i] = at<uint16_t>(i);
      break;
    case DT::UINT32:
      for (int64_t i = 0; i < n; ++i) out[i] = at<uint32_t>(i);
      break;
    case DT::UINT64:
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int64_t>(at<uint64_t>(i));
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("expected an integer tensor, got ", DataTypeNameLower(dtype)));
  }
  return out;
}

Array Array::Reshaped(std::vector<int64_t> new_dims) const {
  Array a = *this;
  a.dims = std::move(new_dims);
  return a;
}

StatusOr<NewArray> AllocateArray(int32_t dtype, std::vector<int64_t> dims) {
  size_t es = ElementSize(dtype);
  if (es == 0) return absl::UnimplementedError(absl::StrCat("no kernel arithmetic for ", DataTypeNameLower(dtype)));
  OS_ASSIGN_OR_RETURN(int64_t n, NumElements(dims));
  auto buffer = std::make_shared<std::string>(static_cast<size_t>(n) * es, '\0');
  NewArray out;
  out.data = buffer->data();
  out.array.dtype = dtype;
  out.array.dims = std::move(dims);
  out.array.bytes = std::string_view(*buffer);
  out.array.owner = std::move(buffer);
  return out;
}

Array StringArray(std::vector<int64_t> dims, std::vector<std::string> elements) {
  Array a;
  a.dtype = DT::STRING;
  a.dims = std::move(dims);
  a.strings = std::make_shared<const std::vector<std::string>>(std::move(elements));
  return a;
}

Array Int64Array(std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  auto buffer = std::make_shared<std::string>(reinterpret_cast<const char*>(values.data()), values.size() * 8);
  Array a;
  a.dtype = DT::INT64;
  a.dims = std::move(dims);
  a.bytes = std::string_view(*buffer);
  a.owner = std::move(buffer);
  return a;
}

StatusOr<Array> ArrayFromTensor(const Tensor& tensor) {
  const onnx::TensorProto& meta = tensor.meta();
  Array a;
  a.dtype = meta.data_type();
  a.dims.assign(meta.dims().begin(), meta.dims().end());
  OS_ASSIGN_OR_RETURN(int64_t n, NumElements(a.dims));
  if (meta.has_segment()) return absl::UnimplementedError("segmented tensor");
  if (a.is_string()) {
    if (meta.string_data_size() != n)
      return absl::InvalidArgumentError("string tensor: element count differs from dims");
    a.strings = std::make_shared<const std::vector<std::string>>(meta.string_data().begin(), meta.string_data().end());
    return a;
  }
  size_t es = ElementSize(a.dtype);
  if (es == 0)
    return absl::UnimplementedError(absl::StrCat("no kernel reads ", DataTypeNameLower(a.dtype), " tensors"));
  if (tensor.has_raw_bytes()) {
    a.bytes = tensor.raw_bytes();
    a.owner = tensor.owner();
  } else {
    if (meta.data_location() == onnx::TensorProto::EXTERNAL)
      return absl::UnimplementedError("external data not loaded");
    OS_ASSIGN_OR_RETURN(std::string raw, tensor.RawBytesCopy());
    auto buffer = std::make_shared<std::string>(std::move(raw));
    a.bytes = std::string_view(*buffer);
    a.owner = std::move(buffer);
  }
  if (a.bytes.size() != static_cast<size_t>(n) * es) {
    return absl::InvalidArgumentError(absl::StrCat("tensor holds ", a.bytes.size(), " bytes, its dims need ", n * es));
  }
  return a;
}

StatusOr<Array> ArrayFromProto(const onnx::TensorProto& proto) { return ArrayFromTensor(Tensor::FromProto(proto)); }

Tensor ArrayToTensor(const Array& array) {
  Tensor t;
  t.mutable_meta().set_data_type(array.dtype);
  for (int64_t d : array.dims) t.mutable_meta().add_dims(d);
  if (array.is_string()) {
    for (const std::string& s : *array.strings) t.mutable_meta().add_string_data(s);
  } else {
    t.SetRawBytes(array.owner, array.bytes);
  }
  return t;
}

}  // namespace onnxsurgeon::eval
