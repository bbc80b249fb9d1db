// Array: the value a constant-evaluation kernel reads and writes.
//
// A numeric array is a dtype, dims and a view of little-endian element bytes kept alive
// by `owner`; a string array holds its elements in `strings`. Arrays made from
// initializers view the initializer's bytes (the model's mmap) without copying, and
// kernels that only reinterpret their input (Reshape, Squeeze, Identity, ...) return a
// view of the same bytes, so folding a chain never copies a weight needlessly.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/constant.h"
#include "core/ir/status.h"
#include "core/ir/tensor.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon::eval {

using DT = onnx::TensorProto;  // DT::FLOAT, DT::INT64, ...

// Bytes per element in raw layout; 0 for strings and types kernels do not handle.
size_t ElementSize(int32_t dtype);
bool IsFloatType(int32_t dtype);  // float, double, float16, bfloat16

// FloatToHalf / FloatToBFloat16 (round to nearest even) are in core/ir/constant.h.
float HalfBitsToFloat(uint16_t h);
float BFloat16BitsToFloat(uint16_t b);

// Element count of dims; error on a negative dim or overflow.
StatusOr<int64_t> NumElements(const std::vector<int64_t>& dims);

struct Array {
  int32_t dtype = 0;
  std::vector<int64_t> dims;
  std::string_view bytes;                                   // numeric elements
  std::shared_ptr<const void> owner;                        // keeps `bytes` alive
  std::shared_ptr<const std::vector<std::string>> strings;  // STRING elements

  int64_t numel() const;
  bool is_string() const { return dtype == DT::STRING; }
  // Bytes the array takes in a saved model (string lengths for strings).
  int64_t byte_size() const;

  // Element i as its storage type (unaligned-safe).
  template <typename T>
  T at(int64_t i) const {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  const std::string& str(int64_t i) const { return (*strings)[i]; }

  // Integer (or bool) elements widened to int64; error for other types.
  StatusOr<std::vector<int64_t>> Int64s() const;
  // Same bytes, other dims (the element count must match).
  Array Reshaped(std::vector<int64_t> new_dims) const;
};

// A numeric array under construction: `data` is writable, `array` views it.
struct NewArray {
  Array array;
  char* data = nullptr;
  template <typename T>
  void set(int64_t i, T v) {
    std::memcpy(data + i * sizeof(T), &v, sizeof(T));
  }
};

// Given a numeric dtype and dims. Execute allocates zeroed storage. Result the array.
StatusOr<NewArray> AllocateArray(int32_t dtype, std::vector<int64_t> dims);
Array StringArray(std::vector<int64_t> dims, std::vector<std::string> elements);
// A numeric array owning a copy of `values` (int64 dtype), e.g. for Shape.
Array Int64Array(std::vector<int64_t> dims, const std::vector<int64_t>& values);

// Given an initializer (or any tensor). Execute views its bytes (no copy) when it has raw
// bytes, else converts its typed fields. Result the array, or an error for types (and
// layouts) kernels do not read.
StatusOr<Array> ArrayFromTensor(const Tensor& tensor);
StatusOr<Array> ArrayFromProto(const onnx::TensorProto& proto);
// Given an array. Execute builds a tensor sharing its bytes (no copy). Result the tensor.
Tensor ArrayToTensor(const Array& array);

}  // namespace onnxsurgeon::eval
