// Tensor: an initializer's metadata plus a view of its bytes.
//
// The metadata (name, dims, data_type, doc_string, typed *_data fields for tensors not
// stored as raw bytes, external_data entries) stays in an onnx::TensorProto with raw_data
// cleared. The raw bytes are a view into memory kept alive by `owner`: the mmap of the
// model file, the mmap of an external-data file, or a buffer a pass produced. Loading a
// model therefore never copies weights; they are read only when saved or changed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/status.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// Where a tensor's bytes came from. Saving uses it to keep external data external.
enum class TensorStorage {
  kProtoFields,  // typed fields (float_data, int64_data, ...) inside the proto, or empty
  kRaw,          // raw bytes (inline raw_data in the loaded file, or set by a pass)
  kExternal,     // raw bytes read from an external-data file
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(onnx::TensorProto meta) : meta_(std::move(meta)) {}

  // Given a TensorProto that may hold raw_data inline.
  // Execute moves the bytes into an owned buffer (copies nothing when the proto is moved in).
  // Result a tensor equal to the proto.
  static Tensor FromProto(onnx::TensorProto proto);

  // Given a numeric element type, dims and one value per element. Result a tensor of
  // those elements in raw layout: float, double, float16 and bfloat16 rounded once to
  // nearest even (straight from double: no double rounding through float; overflow to
  // inf, NaN a quiet NaN); integer types exactly; bool true for nonzero. Error for a
  // value an integer type cannot hold (a fraction, out of range), a count not matching
  // dims, or a type without numeric elements (string, complex, undefined).
  static StatusOr<Tensor> FromDoubles(int32_t data_type, std::vector<int64_t> dims, const std::vector<double>& values);
  // The same from integers: exact for integer types (error when out of range) and bool;
  // floating types get the nearest value.
  static StatusOr<Tensor> FromInt64s(int32_t data_type, std::vector<int64_t> dims, const std::vector<int64_t>& values);
  // The same from unsigned integers (a uint64 beyond int64, e.g. an all-ones mask): exact
  // for integer types (error when out of range) and bool; floating types get the nearest
  // value of the integer read as a double.
  static StatusOr<Tensor> FromUInt64s(int32_t data_type, std::vector<int64_t> dims,
                                      const std::vector<uint64_t>& values);

  const onnx::TensorProto& meta() const { return meta_; }
  onnx::TensorProto& mutable_meta() { return meta_; }

  TensorStorage storage() const { return storage_; }
  bool has_raw_bytes() const { return storage_ != TensorStorage::kProtoFields; }
  std::string_view raw_bytes() const { return raw_; }
  // What keeps raw_bytes() alive (null for kProtoFields): share it to keep a view valid.
  const std::shared_ptr<const void>& owner() const { return owner_; }

  // Given bytes and whatever keeps them alive.
  // Execute points the tensor at them; clears typed data fields and external markers.
  // Result storage() == kRaw.
  void SetRawBytes(std::shared_ptr<const void> owner, std::string_view bytes);
  void SetRawBytes(std::string bytes);

  // Given bytes the loader found (inline raw_data, or an external file's range).
  // Execute points the tensor at them, keeping the metadata as loaded (external_data
  // entries included, so saving can keep the same layout).
  // Result storage() == kRaw or kExternal.
  void AttachLoadedBytes(std::shared_ptr<const void> owner, std::string_view bytes, TensorStorage storage);

  // The proto with raw data inline (a copy of the bytes), as onnx's own APIs want it.
  onnx::TensorProto ToProto(const std::string& name) const;

  // The bytes in raw_data layout (little-endian) whatever the storage: raw views as they
  // are, typed fields (float_data, int32_data, ...) converted. Error for strings and for
  // types whose typed-field layout is not a plain element array.
  StatusOr<std::string> RawBytesCopy() const;
  // True when RawBytesCopy() can succeed.
  bool CanBeRaw() const;

  // Element count from dims; -1 when a dim is negative (malformed).
  int64_t NumElements() const;

 private:
  onnx::TensorProto meta_;  // raw_data always empty
  TensorStorage storage_ = TensorStorage::kProtoFields;
  std::shared_ptr<const void> owner_;
  std::string_view raw_;
};

}  // namespace onnxsurgeon
