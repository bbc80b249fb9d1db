// Tensor: an initializer's metadata plus a view of its bytes.
//
// The metadata (name, dims, data_type, doc_string, typed *_data fields for tensors not
// stored as raw bytes, external_data entries) stays in an onnx::TensorProto with raw_data
// cleared. The raw bytes are a view into memory kept alive by `owner`: the mmap of the
// model file, the mmap of an external-data file, or a buffer a pass produced. Loading a
// model therefore never copies weights; they are read only when saved or changed.
//
// A tensor can also hold deferred bytes (DeferredBytes): another party keeps them and hands
// them over on first use (the Python bindings: a big initializer's raw_data still inside the
// caller's onnx.ModelProto, which protobuf's Python API can only hand out as a copy).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
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
  kDeferred,     // raw bytes someone else holds, fetched on first use (DeferredBytes)
};

// Raw bytes held elsewhere: their size is known up front, the bytes are fetched once, on
// first use, and then kept (shared by every copy of the tensor). `source` identifies where
// they are for whoever made them (saving hands it back: SaveModelDetached).
class DeferredBytes {
 public:
  // The bytes and what keeps them alive. May throw (the bindings let a Python exception
  // through); a later call tries again. Bytes of another size than declared_size() throw
  // std::length_error when fetched: a tensor's byte count always matches its dims.
  using Fetcher = std::function<std::pair<std::shared_ptr<const void>, std::string_view>()>;

  DeferredBytes(uint64_t size, std::shared_ptr<const void> source, Fetcher fetch)
      : size_(size), source_(std::move(source)), fetch_(std::move(fetch)) {}

  // The size the maker declared (dims x element size): what a tensor reports before a fetch.
  uint64_t declared_size() const { return size_; }
  const std::shared_ptr<const void>& source() const { return source_; }

  // Given nothing. Execute fetches the bytes on the first call (thread-safe) and keeps them.
  // Result the bytes; owner() keeps them alive.
  std::string_view bytes() const;
  const std::shared_ptr<const void>& owner() const;
  bool fetched() const;

  // Given a function. Execute calls it with the bytes: the kept ones once fetched, else a
  // fetch that is dropped when `use` returns (a pass that only looks does not keep a copy).
  void Read(const std::function<void(std::string_view)>& use) const;

  // Tensor::SampledHash of the bytes, computed once (by Read: the bytes are not kept).
  size_t SampledHash() const;

 private:
  std::pair<std::shared_ptr<const void>, std::string_view> Fetch() const;

  uint64_t size_;
  std::shared_ptr<const void> source_;
  Fetcher fetch_;
  mutable std::mutex mu_;
  mutable bool fetched_ = false;
  mutable std::shared_ptr<const void> owner_;
  mutable std::string_view bytes_;
  mutable std::optional<size_t> sampled_hash_;
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
  // The raw bytes (kDeferred: fetched on first use, then kept).
  std::string_view raw_bytes() const { return deferred_ ? deferred_->bytes() : raw_; }
  // Their count, without fetching deferred bytes (their declared size, which a fetch checks).
  uint64_t raw_size() const;
  // A hash of the raw bytes' first, middle and last 4 KiB (all of them up to 12 KiB): equal
  // bytes always hash equal, and weights that differ almost always differ there (a cheap
  // first comparison: dedupe-initializers). Deferred bytes not fetched yet are fetched for
  // the hash only, once: the hash is remembered.
  size_t SampledHash() const;
  static size_t SampledHashOf(std::string_view bytes);
  // What keeps raw_bytes() alive (null for kProtoFields): share it to keep a view valid.
  const std::shared_ptr<const void>& owner() const { return deferred_ ? deferred_->owner() : owner_; }
  // The deferred bytes (kDeferred), else null.
  const std::shared_ptr<const DeferredBytes>& deferred() const { return deferred_; }

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
  // Same for bytes held elsewhere. Result storage() == kDeferred.
  void AttachDeferredBytes(std::shared_ptr<const DeferredBytes> deferred);

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
  std::shared_ptr<const DeferredBytes> deferred_;  // kDeferred only
};

}  // namespace onnxsurgeon
