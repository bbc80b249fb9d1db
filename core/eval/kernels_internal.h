// Helpers shared by the kernel files: dtype dispatch, broadcasting, index walkers and
// the registration hooks each file defines.
#pragma once

#include <array>
#include <cmath>
#include <type_traits>
#include <utility>

#include "core/eval/kernel.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon::eval {

// ---- registration ----------------------------------------------------------------------
struct KernelDef {
  const char* op_type;
  int since;  // first opset this signature applies to
  int until;  // last opset (inclusive); 0 = still current
  KernelFn fn;
};
void AddElementwiseKernels(std::vector<KernelDef>& table);
void AddUnaryKernels(std::vector<KernelDef>& table);
void AddShapeKernels(std::vector<KernelDef>& table);
void AddIndexingKernels(std::vector<KernelDef>& table);
void AddReduceKernels(std::vector<KernelDef>& table);
void AddCastKernels(std::vector<KernelDef>& table);
void AddGeneratorKernels(std::vector<KernelDef>& table);
void AddResizeKernels(std::vector<KernelDef>& table);
void AddLinalgKernels(std::vector<KernelDef>& table);

// ---- element types ---------------------------------------------------------------------
// Storage tags for the 16-bit floats; arithmetic on them happens in float and rounds back.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

template <typename T>
struct Elem {  // plain C++ types: compute as themselves
  using Compute = T;
  static constexpr size_t kSize = sizeof(T);
  static Compute Load(const char* base, int64_t i) {
    T v;
    std::memcpy(&v, base + i * sizeof(T), sizeof(T));
    return v;
  }
  static void Store(char* base, int64_t i, Compute v) { std::memcpy(base + i * sizeof(T), &v, sizeof(T)); }
};
template <>
struct Elem<bool> {
  using Compute = bool;
  static constexpr size_t kSize = 1;
  static bool Load(const char* base, int64_t i) { return base[i] != 0; }
  static void Store(char* base, int64_t i, bool v) { base[i] = v ? 1 : 0; }
};
// A 16-bit float: stored as its bits, loaded to float and rounded back on store.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
struct Float16Elem {
  using Compute = float;
  static constexpr size_t kSize = 2;
  static float Load(const char* base, int64_t i) {
    uint16_t h;
    std::memcpy(&h, base + i * 2, 2);
    return ToFloat(h);
  }
  static void Store(char* base, int64_t i, float v) {
    uint16_t h = FromFloat(v);
    std::memcpy(base + i * 2, &h, 2);
  }
};
template <>
struct Elem<Half> : Float16Elem<HalfBitsToFloat, FloatToHalf> {};
template <>
struct Elem<BFloat16> : Float16Elem<BFloat16BitsToFloat, FloatToBFloat16> {};

template <typename T>
struct Tag {
  using type = T;
};

template <typename T>
constexpr bool kIsFloatLike = std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Type masks for Visit.
enum : unsigned {
  kFloats = 1,    // float, double, float16, bfloat16
  kSigned = 2,    // int8..int64
  kUnsigned = 4,  // uint8..uint64
  kBool = 8,
  kIntegers = kSigned | kUnsigned,
  kNumbers = kFloats | kIntegers,
  kAllNumeric = kNumbers | kBool,
};

// Calls f(Tag<T>{}) for the C++ storage type of `dtype` if its family is in Mask; the
// lambda must spell its return type R. Types outside Mask are refused, not instantiated.
template <unsigned Mask, typename R, typename F>
R Visit(int32_t dtype, F&& f) {
  switch (dtype) {
    case DT::FLOAT:
      if constexpr (Mask & kFloats) return f(Tag<float>{});
      break;
    case DT::DOUBLE:
      if constexpr (Mask & kFloats) return f(Tag<double>{});
      break;
    case DT::FLOAT16:
      if constexpr (Mask & kFloats) return f(Tag<Half>{});
      break;
    case DT::BFLOAT16:
      if constexpr (Mask & kFloats) return f(Tag<BFloat16>{});
      break;
    case DT::INT8:
      if constexpr (Mask & kSigned) return f(Tag<int8_t>{});
      break;
    case DT::INT16:
      if constexpr (Mask & kSigned) return f(Tag<int16_t>{});
      break;
    case DT::INT32:
      if constexpr (Mask & kSigned) return f(Tag<int32_t>{});
      break;
    case DT::INT64:
      if constexpr (Mask & kSigned) return f(Tag<int64_t>{});
      break;
    case DT::UINT8:
      if constexpr (Mask & kUnsigned) return f(Tag<uint8_t>{});
      break;
    case DT::UINT16:
      if constexpr (Mask & kUnsigned) return f(Tag<uint16_t>{});
      break;
    case DT::UINT32:
      if constexpr (Mask & kUnsigned) return f(Tag<uint32_t>{});
      break;
    case DT::UINT64:
      if constexpr (Mask & kUnsigned) return f(Tag<uint64_t>{});
      break;
    case DT::BOOL:
      if constexpr (Mask & kBool) return f(Tag<bool>{});
      break;
    default: break;
  }
  return absl::UnimplementedError(absl::StrCat("no kernel for ", DataTypeNameLower(dtype), " elements"));
}

// ---- common checks -----------------------------------------------------------------------
Status ExpectInputs(const KernelContext& ctx, Inputs in, size_t min, size_t max);
// Normalises a possibly negative axis against rank; error when out of [-rank, rank).
StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank);
StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a, const std::vector<int64_t>& b);
std::vector<int64_t> Strides(const std::vector<int64_t>& dims);  // row-major, in elements
std::vector<Array> One(Array a);

// Per output dim, the stride of a (right-aligned, broadcast) input; 0 where it broadcasts.
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& out, const std::vector<int64_t>& in);

// Visits every output index o with the input offset base + sum(counter[d] * strides[d]).
template <typename F>
void StridedWalk(const std::vector<int64_t>& out_dims, int64_t base, const std::vector<int64_t>& strides, F&& f) {
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  const size_t r = out_dims.size();
  std::vector<int64_t> counter(r, 0);
  int64_t off = base;
  for (int64_t o = 0; o < total; ++o) {
    f(o, off);
    for (size_t k = r; k-- > 0;) {
      off += strides[k];
      if (++counter[k] < out_dims[k]) break;
      off -= strides[k] * out_dims[k];
      counter[k] = 0;
    }
  }
}

// Visits every output index o with the offsets into N broadcast inputs.
template <size_t N, typename F>
void BroadcastWalk(const std::vector<int64_t>& out_dims, const std::array<const std::vector<int64_t>*, N>& in_dims,
                   F&& f) {
  int64_t total = 1;
  for (int64_t d : out_dims) total *= d;
  if (total == 0) return;
  bool all_same = true;
  for (auto* d : in_dims) all_same = all_same && *d == out_dims;
  std::array<int64_t, N> off{};
  if (all_same) {
    for (int64_t o = 0; o < total; ++o) {
      off.fill(o);
      f(o, off);
    }
    return;
  }
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) strides[k] = BroadcastStrides(out_dims, *in_dims[k]);
  const size_t r = out_dims.size();
  std::vector<int64_t> counter(r, 0);
  for (int64_t o = 0; o < total; ++o) {
    f(o, off);
    for (size_t d = r; d-- > 0;) {
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][d];
      if (++counter[d] < out_dims[d]) break;
      for (size_t k = 0; k < N; ++k) off[k] -= strides[k][d] * out_dims[d];
      counter[d] = 0;
    }
  }
}

// Copies element src of `in` to element o of `out` for every (o, src) `walk` produces.
// Works for every dtype, strings included. `out_dims` gives the result's shape.
template <typename Walk>
StatusOr<Array> MoveElements(const KernelContext& ctx, const Array& in, std::vector<int64_t> out_dims, Walk&& walk) {
  if (in.is_string()) {
    OS_ASSIGN_OR_RETURN(int64_t n, NumElements(out_dims));
    std::vector<std::string> out(static_cast<size_t>(n));
    int64_t bytes = 0;
    walk([&](int64_t o, int64_t s) {
      out[o] = in.str(s);
      bytes += static_cast<int64_t>(out[o].size());
    });
    OS_RETURN_IF_ERROR(ctx.CheckSize(bytes));
    return StringArray(std::move(out_dims), std::move(out));
  }
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(in.dtype, std::move(out_dims)));
  const char* src = in.bytes.data();
  char* dst = out.data;
  switch (ElementSize(in.dtype)) {
    case 1: walk([&](int64_t o, int64_t s) { dst[o] = src[s]; }); break;
    case 2: walk([&](int64_t o, int64_t s) { std::memcpy(dst + o * 2, src + s * 2, 2); }); break;
    case 4: walk([&](int64_t o, int64_t s) { std::memcpy(dst + o * 4, src + s * 4, 4); }); break;
    case 8: walk([&](int64_t o, int64_t s) { std::memcpy(dst + o * 8, src + s * 8, 8); }); break;
    default:
      return absl::UnimplementedError(absl::StrCat("no kernel moves ", DataTypeNameLower(in.dtype), " elements"));
  }
  return std::move(out.array);
}

// The integer elements of an optional input (e.g. axes), or nullopt when omitted.
StatusOr<std::optional<std::vector<int64_t>>> OptionalInts(Inputs in, size_t i);

}  // namespace onnxsurgeon::eval
