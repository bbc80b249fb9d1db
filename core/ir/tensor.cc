#include "core/ir/tensor.h"
#include "core/ir/dtypes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"

namespace onnxsurgeon {
namespace {

using DT = onnx::TensorProto;

// `d` rounded to the nearest value of an IEEE binary format with `exp_bits` exponent and
// `man_bits` fraction bits, ties to even (subnormals kept, overflow to inf, NaN a quiet
// NaN), as that format's bits.
uint64_t RoundToBinary(double d, int exp_bits, int man_bits) {
  const uint64_t sign = std::signbit(d) ? uint64_t{1} << (exp_bits + man_bits) : 0;
  const uint64_t inf = ((uint64_t{1} << exp_bits) - 1) << man_bits;
  if (std::isnan(d)) return sign | inf | (uint64_t{1} << (man_bits - 1));
  double a = std::fabs(d);
  if (std::isinf(a)) return sign | inf;
  if (a == 0) return sign;
  const int bias = (1 << (exp_bits - 1)) - 1;
  int e = 0;
  std::frexp(a, &e);                               // a = m * 2^e, m in [0.5, 1)
  const int exponent = std::max(e - 1, 1 - bias);  // of the leading bit; subnormals share the least
  // The fraction as an integer in units of the last place: scaling by a power of two is
  // exact, and nearbyint rounds to nearest even.
  auto m = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, man_bits - exponent)));
  // A normal number's leading bit (m >= 2^man_bits) adds one to the exponent field; a
  // carry out of the fraction moves it up too.
  uint64_t bits = (static_cast<uint64_t>(exponent + bias - 1) << man_bits) + m;
  return sign | std::min(bits, inf);
}

template <typename T>
void Put(std::string& out, T x) {
  out.append(reinterpret_cast<const char*>(&x), sizeof(T));
}

// The integer range of an integer or bool type; nullopt for others.
std::optional<std::pair<double, double>> IntRange(int32_t dt) {
  switch (dt) {
    case DT::INT8: return std::pair{-128.0, 127.0};
    case DT::UINT8: return std::pair{0.0, 255.0};
    case DT::INT16: return std::pair{-32768.0, 32767.0};
    case DT::UINT16: return std::pair{0.0, 65535.0};
    case DT::INT32: return std::pair{-2147483648.0, 2147483647.0};
    case DT::UINT32: return std::pair{0.0, 4294967295.0};
    case DT::INT64: return std::pair{-0x1p63, 0x1p63};  // upper bound exclusive (below)
    case DT::UINT64: return std::pair{0.0, 0x1p64};
    default: return std::nullopt;
  }
}

// Appends a floating value to a floating type; false for other types.
bool PutFloating(std::string& out, int32_t dt, double v) {
  switch (dt) {
    case DT::FLOAT:
      // The hardware conversion rounds to nearest even; it is defined only in range.
      if (std::isnan(v) || std::fabs(v) <= std::numeric_limits<float>::max()) Put(out, static_cast<float>(v));
      else Put(out, static_cast<uint32_t>(RoundToBinary(v, 8, 23)));
      return true;
    case DT::DOUBLE: Put(out, v); return true;
    case DT::FLOAT16: Put(out, static_cast<uint16_t>(RoundToBinary(v, 5, 10))); return true;
    case DT::BFLOAT16: Put(out, static_cast<uint16_t>(RoundToBinary(v, 8, 7))); return true;
    default: return false;
  }
}

// Appends an integer (known to fit) to an integer or bool type.
void PutInteger(std::string& out, int32_t dt, int64_t v, uint64_t u) {
  switch (dt) {
    case DT::INT8: Put(out, static_cast<int8_t>(v)); break;
    case DT::UINT8: Put(out, static_cast<uint8_t>(v)); break;
    case DT::INT16: Put(out, static_cast<int16_t>(v)); break;
    case DT::UINT16: Put(out, static_cast<uint16_t>(v)); break;
    case DT::INT32: Put(out, static_cast<int32_t>(v)); break;
    case DT::UINT32: Put(out, static_cast<uint32_t>(v)); break;
    case DT::INT64: Put(out, v); break;
    case DT::UINT64: Put(out, u); break;
    case DT::BOOL: Put(out, static_cast<uint8_t>(v != 0 || u != 0)); break;
  }
}

template <typename V, typename PutOne>
StatusOr<Tensor> Encode(int32_t data_type, std::vector<int64_t> dims, const std::vector<V>& values, PutOne put_one) {
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("tensor dim ", d, " is negative"));
    count *= d;
  }
  if (count != static_cast<int64_t>(values.size())) {
    return absl::InvalidArgumentError(absl::StrCat(values.size(), " values for a tensor of ", count, " elements"));
  }
  std::string bytes;
  bytes.reserve(values.size() * 8);
  for (const V& v : values) OS_RETURN_IF_ERROR(put_one(bytes, v));
  Tensor t;
  t.mutable_meta().set_data_type(data_type);
  for (int64_t d : dims) t.mutable_meta().add_dims(d);
  t.SetRawBytes(std::move(bytes));
  return t;
}

}  // namespace

StatusOr<Tensor> Tensor::FromDoubles(int32_t data_type, std::vector<int64_t> dims, const std::vector<double>& values) {
  return Encode(data_type, std::move(dims), values, [data_type](std::string& out, double v) -> Status {
    if (PutFloating(out, data_type, v)) return absl::OkStatus();
    if (data_type == DT::BOOL) {
      PutInteger(out, data_type, v != 0, 0);
      return absl::OkStatus();
    }
    auto range = IntRange(data_type);
    if (!range) return absl::InvalidArgumentError(absl::StrCat("no numeric encoding for ", DataTypeName(data_type)));
    bool top_exclusive = data_type == DT::INT64 || data_type == DT::UINT64;
    if (!std::isfinite(v) || v != std::trunc(v) || v < range->first ||
        (top_exclusive ? v >= range->second : v > range->second)) {
      return absl::InvalidArgumentError(absl::StrCat(v, " is not a ", DataTypeName(data_type), " value"));
    }
    if (data_type == DT::UINT64) PutInteger(out, data_type, 0, static_cast<uint64_t>(v));
    else PutInteger(out, data_type, static_cast<int64_t>(v), 0);
    return absl::OkStatus();
  });
}

StatusOr<Tensor> Tensor::FromInt64s(int32_t data_type, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  return Encode(data_type, std::move(dims), values, [data_type](std::string& out, int64_t v) -> Status {
    if (PutFloating(out, data_type, static_cast<double>(v))) return absl::OkStatus();
    if (data_type == DT::BOOL) {
      PutInteger(out, data_type, v, 0);
      return absl::OkStatus();
    }
    auto range = IntRange(data_type);
    if (!range) return absl::InvalidArgumentError(absl::StrCat("no numeric encoding for ", DataTypeName(data_type)));
    bool fits = data_type == DT::INT64 || (data_type == DT::UINT64 ? v >= 0
                                                                   : v >= static_cast<int64_t>(range->first) &&
                                                                         v <= static_cast<int64_t>(range->second));
    if (!fits) return absl::InvalidArgumentError(absl::StrCat(v, " is not a ", DataTypeName(data_type), " value"));
    PutInteger(out, data_type, v, static_cast<uint64_t>(v));
    return absl::OkStatus();
  });
}

StatusOr<Tensor> Tensor::FromUInt64s(int32_t data_type, std::vector<int64_t> dims,
                                     const std::vector<uint64_t>& values) {
  return Encode(data_type, std::move(dims), values, [data_type](std::string& out, uint64_t v) -> Status {
    if (PutFloating(out, data_type, static_cast<double>(v))) return absl::OkStatus();
    if (data_type == DT::BOOL) {
      PutInteger(out, data_type, 0, v);
      return absl::OkStatus();
    }
    auto range = IntRange(data_type);
    if (!range) return absl::InvalidArgumentError(absl::StrCat("no numeric encoding for ", DataTypeName(data_type)));
    bool fits = data_type == DT::UINT64 ||
                (data_type == DT::INT64 ? v <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                                        : static_cast<double>(v) <= range->second);
    if (!fits) return absl::InvalidArgumentError(absl::StrCat(v, " is not a ", DataTypeName(data_type), " value"));
    PutInteger(out, data_type, static_cast<int64_t>(v), v);
    return absl::OkStatus();
  });
}

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
  deferred_.reset();
}

void Tensor::AttachDeferredBytes(std::shared_ptr<const DeferredBytes> deferred) {
  owner_.reset();
  raw_ = {};
  deferred_ = std::move(deferred);
  storage_ = TensorStorage::kDeferred;
}

uint64_t Tensor::raw_size() const { return deferred_ ? deferred_->declared_size() : raw_.size(); }

size_t Tensor::SampledHashOf(std::string_view bytes) {
  constexpr size_t kWindow = 4096;
  if (bytes.size() <= 3 * kWindow)
    return absl::Hash<absl::string_view>{}(absl::string_view(bytes.data(), bytes.size()));
  auto window = [&](size_t at) { return absl::string_view(bytes.data() + at, kWindow); };
  return absl::HashOf(window(0), window(bytes.size() / 2 - kWindow / 2), window(bytes.size() - kWindow));
}

size_t Tensor::SampledHash() const { return deferred_ ? deferred_->SampledHash() : SampledHashOf(raw_); }

size_t DeferredBytes::SampledHash() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (sampled_hash_) return *sampled_hash_;
  }
  size_t hash = 0;
  Read([&](std::string_view bytes) { hash = Tensor::SampledHashOf(bytes); });
  std::lock_guard<std::mutex> lock(mu_);
  sampled_hash_ = hash;
  return hash;
}

std::string_view DeferredBytes::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fetched_) {
    auto [owner, bytes] = Fetch();
    owner_ = std::move(owner);
    bytes_ = bytes;
    fetched_ = true;
  }
  return bytes_;
}

std::pair<std::shared_ptr<const void>, std::string_view> DeferredBytes::Fetch() const {
  auto fetched = fetch_();
  if (fetched.second.size() != size_) {
    // Passes rely on a tensor's byte count matching its dims (the loader's check): never
    // hand out bytes that break it.
    throw std::length_error(
        absl::StrCat("deferred raw_data holds ", fetched.second.size(), " bytes, but its dims and type need ", size_));
  }
  return fetched;
}

const std::shared_ptr<const void>& DeferredBytes::owner() const {
  bytes();
  return owner_;
}

bool DeferredBytes::fetched() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fetched_;
}

void DeferredBytes::Read(const std::function<void(std::string_view)>& use) const {
  std::string_view kept;
  bool have = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    have = fetched_;
    kept = bytes_;
  }
  if (have) {
    use(kept);  // kept bytes never change or go away while this object lives
    return;
  }
  auto [owner, bytes] = Fetch();
  use(bytes);
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
    std::string_view raw = raw_bytes();
    p.set_raw_data(raw.data(), raw.size());
  }
  return p;
}

namespace {
// Size of one element in raw_data, or 0 when the type is not a plain array.
size_t ElementSize(int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT:
    case T::INT32:
    case T::UINT32: return 4;
    case T::DOUBLE:
    case T::INT64:
    case T::UINT64:
    case T::COMPLEX64: return 8;
    case T::COMPLEX128: return 16;
    case T::INT16:
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16: return 2;
    case T::INT8:
    case T::UINT8:
    case T::BOOL: return 1;
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
  if (has_raw_bytes()) return std::string(raw_bytes());
  using T = onnx::TensorProto;
  std::string out;
  switch (meta_.data_type()) {
    case T::FLOAT:
    case T::COMPLEX64: AppendAs<float>(meta_.float_data(), out); break;
    case T::DOUBLE:
    case T::COMPLEX128: AppendAs<double>(meta_.double_data(), out); break;
    case T::INT64: AppendAs<int64_t>(meta_.int64_data(), out); break;
    case T::UINT64: AppendAs<uint64_t>(meta_.uint64_data(), out); break;
    case T::UINT32: AppendAs<uint32_t>(meta_.uint64_data(), out); break;
    case T::INT32: AppendAs<int32_t>(meta_.int32_data(), out); break;
    case T::INT16: AppendAs<int16_t>(meta_.int32_data(), out); break;
    case T::UINT16:
    case T::FLOAT16:
    case T::BFLOAT16: AppendAs<uint16_t>(meta_.int32_data(), out); break;
    case T::INT8: AppendAs<int8_t>(meta_.int32_data(), out); break;
    case T::UINT8:
    case T::BOOL: AppendAs<uint8_t>(meta_.int32_data(), out); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("tensor of data type ", meta_.data_type(), " has no raw layout here"));
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
