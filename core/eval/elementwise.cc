// Elementwise binary and variadic kernels with numpy (multidirectional) broadcasting:
// Add Sub Mul Div Pow Mod, Min Max Sum Mean, Equal Less Greater LessOrEqual GreaterOrEqual,
// And Or Xor, BitwiseAnd/Or/Xor, BitShift.
//
// Arithmetic follows onnxruntime's CPU kernels: integers wrap (two's complement),
// integer Div truncates toward zero, float16/bfloat16 compute in float and round to
// nearest even once per op. Mod with fmod=0 takes the divisor's sign (floats too, as
// numpy). Integer division or modulo by zero, and INT_MIN / -1, are
// undefined there and refused here.
#include <limits>

#include "core/eval/kernels_internal.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon::eval {
namespace {

// Modular arithmetic on integers without signed-overflow UB; plain arithmetic otherwise.
template <typename C>
C WrapAdd(C x, C y) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
  else return x + y;
}
template <typename C>
C WrapSub(C x, C y) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
  else return x - y;
}
template <typename C>
C WrapMul(C x, C y) {
  if constexpr (std::is_integral_v<C>) return static_cast<C>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
  else return x * y;
}

Status SameType(const KernelContext& ctx, const Array& a, const Array& b) {
  if (a.dtype != b.dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.node().op_type(), " mixes ", DataTypeNameLower(a.dtype), " and ", DataTypeNameLower(b.dtype)));
  }
  return absl::OkStatus();
}

// out[i] = op(a[i'], b[i'']) over the broadcast shape; In/Out are storage tags.
template <typename In, typename Out, typename Op>
StatusOr<Array> Binary(const KernelContext& ctx, const Array& a, const Array& b, int32_t out_dtype, Op op) {
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(a.dims, b.dims));
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(out_dtype, std::move(dims)));
  const char* pa = a.bytes.data();
  const char* pb = b.bytes.data();
  BroadcastWalk<2>(out.array.dims, {&a.dims, &b.dims}, [&](int64_t o, const std::array<int64_t, 2>& off) {
    Elem<Out>::Store(out.data, o, op(Elem<In>::Load(pa, off[0]), Elem<In>::Load(pb, off[1])));
  });
  return std::move(out.array);
}

// Integer divisors: refuse zero (and INT_MIN / -1), which onnxruntime does not define.
template <typename T>
Status CheckDivisors(const Array& a, const Array& b) {
  if constexpr (std::is_integral_v<T>) {
    int64_t n = b.numel();
    for (int64_t i = 0; i < n; ++i) {
      T d = b.at<T>(i);
      if (d == 0) return absl::InvalidArgumentError("integer division by zero");
      if constexpr (std::is_signed_v<T>) {
        if (d == T(-1)) {
          for (int64_t j = 0, m = a.numel(); j < m; ++j)
            if (a.at<T>(j) == std::numeric_limits<T>::min())
              return absl::InvalidArgumentError("integer division overflows");
        }
      }
    }
  }
  return absl::OkStatus();
}

enum class Arith { kAdd, kSub, kMul, kDiv };

template <Arith kOp>
StatusOr<std::vector<Array>> ArithKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  const Array& b = *in[1];
  OS_RETURN_IF_ERROR(SameType(ctx, a, b));
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kNumbers, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        if constexpr (kOp == Arith::kDiv) OS_RETURN_IF_ERROR(CheckDivisors<T>(a, b));
                        return Binary<T, T>(ctx, a, b, a.dtype, [](C x, C y) -> C {
                          if constexpr (kOp == Arith::kAdd) return WrapAdd(x, y);
                          if constexpr (kOp == Arith::kSub) return WrapSub(x, y);
                          if constexpr (kOp == Arith::kMul) return WrapMul(x, y);
                          if constexpr (kOp == Arith::kDiv) return static_cast<C>(x / y);
                        });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> PowKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  const Array& b = *in[1];
  if (ctx.opset() < 12) OS_RETURN_IF_ERROR(SameType(ctx, a, b));
  OS_ASSIGN_OR_RETURN(
      Array out, (Visit<kFloats | kSigned, StatusOr<Array>>(a.dtype, [&](auto base) -> StatusOr<Array> {
        using T = typename decltype(base)::type;
        using C = typename Elem<T>::Compute;
        return Visit<kFloats | kSigned | kUnsigned, StatusOr<Array>>(b.dtype, [&](auto exponent) -> StatusOr<Array> {
          using E = typename decltype(exponent)::type;
          using CE = typename Elem<E>::Compute;
          OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(a.dims, b.dims));
          OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(a.dtype, std::move(dims)));
          bool out_of_range = false;
          BroadcastWalk<2>(out.array.dims, {&a.dims, &b.dims}, [&](int64_t o, const std::array<int64_t, 2>& off) {
            C x = Elem<T>::Load(a.bytes.data(), off[0]);
            CE y = Elem<E>::Load(b.bytes.data(), off[1]);
            C r;
            if constexpr (std::is_same_v<C, float> && std::is_same_v<CE, float>) {
              r = std::pow(x, y);  // powf, as onnxruntime's float kernel
            } else if constexpr (std::is_integral_v<C>) {
              double p = std::trunc(std::pow(static_cast<double>(x), static_cast<double>(y)));
              // Outside the integer range the cast is undefined (and platform-dependent).
              if (!(p >= static_cast<double>(std::numeric_limits<C>::lowest()) &&
                    p < std::ldexp(1.0, std::numeric_limits<C>::digits))) {
                out_of_range = true;
                p = 0;
              }
              r = static_cast<C>(p);
            } else {
              r = static_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(y)));
            }
            Elem<T>::Store(out.data, o, r);
          });
          if (out_of_range) return absl::InvalidArgumentError("integer Pow result out of range");
          return std::move(out.array);
        });
      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> ModKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  const Array& b = *in[1];
  OS_RETURN_IF_ERROR(SameType(ctx, a, b));
  bool fmod = ctx.GetInt("fmod", 0) != 0;
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kNumbers, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        if constexpr (kIsFloatLike<T>) {
                          // fmod=1: C fmod (sign of the dividend); fmod=0: the sign of the divisor, as numpy.
                          return Binary<T, T>(ctx, a, b, a.dtype, [fmod](C x, C y) -> C {
                            C r = std::fmod(x, y);
                            if (!fmod && r != C(0) && ((r < C(0)) != (y < C(0)))) r = r + y;
                            return r;
                          });
                        } else {
                          OS_RETURN_IF_ERROR(CheckDivisors<T>(a, b));
                          return Binary<T, T>(ctx, a, b, a.dtype, [fmod](C x, C y) -> C {
                            C r = static_cast<C>(x % y);
                            if constexpr (std::is_signed_v<C>) {
                              if (!fmod && r != 0 && ((r < 0) != (y < 0)))
                                r = static_cast<C>(r + y);  // sign of the divisor
                            }
                            return r;
                          });
                        }
                      })));
  return One(std::move(out));
}

enum class Variadic { kMin, kMax, kSum, kMean };

template <Variadic kOp>
StatusOr<std::vector<Array>> VariadicKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1 << 20));
  for (const Array* x : in) {
    if (!x) return absl::InvalidArgumentError("omitted input");
    OS_RETURN_IF_ERROR(SameType(ctx, *in[0], *x));
  }
  constexpr unsigned kMask = (kOp == Variadic::kSum || kOp == Variadic::kMean) ? kFloats : kNumbers;
  OS_ASSIGN_OR_RETURN(
      Array out, (Visit<kMask, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
        using T = typename decltype(tag)::type;
        using C = typename Elem<T>::Compute;
        auto op = [](C x, C y) -> C {
          if constexpr (kOp == Variadic::kMin || kOp == Variadic::kMax) {
            if constexpr (kIsFloatLike<T>) {
              if (std::isnan(x)) return x;
              if (std::isnan(y)) return y;
            }
            return kOp == Variadic::kMin ? (y < x ? y : x) : (y > x ? y : x);
          } else {
            return x + y;
          }
        };
        Array acc = *in[0];
        if (in.size() == 1 && kOp != Variadic::kMean) {  // copy into a fresh buffer anyway? a view is fine
          return acc;
        }
        for (size_t i = 1; i < in.size(); ++i) {
          OS_ASSIGN_OR_RETURN(acc, (Binary<T, T>(ctx, acc, *in[i], acc.dtype, op)));
        }
        if constexpr (kOp == Variadic::kMean) {
          OS_ASSIGN_OR_RETURN(NewArray mean, ctx.Allocate(acc.dtype, acc.dims));
          C n = static_cast<C>(in.size());
          for (int64_t i = 0, m = acc.numel(); i < m; ++i)
            Elem<T>::Store(mean.data, i, Elem<T>::Load(acc.bytes.data(), i) / n);
          return std::move(mean.array);
        }
        return acc;
      })));
  return One(std::move(out));
}

enum class Compare { kEq, kLt, kGt, kLe, kGe };

template <Compare kOp>
StatusOr<std::vector<Array>> CompareKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  const Array& b = *in[1];
  OS_RETURN_IF_ERROR(SameType(ctx, a, b));
  if (a.is_string()) {
    if constexpr (kOp != Compare::kEq) return absl::UnimplementedError("string comparison other than Equal");
    OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(a.dims, b.dims));
    OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(DT::BOOL, std::move(dims)));
    BroadcastWalk<2>(out.array.dims, {&a.dims, &b.dims}, [&](int64_t o, const std::array<int64_t, 2>& off) {
      out.data[o] = a.str(off[0]) == b.str(off[1]) ? 1 : 0;
    });
    return One(std::move(out.array));
  }
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kAllNumeric, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        return Binary<T, bool>(ctx, a, b, DT::BOOL, [](C x, C y) -> bool {
                          if constexpr (kOp == Compare::kEq) return x == y;
                          if constexpr (kOp == Compare::kLt) return x < y;
                          if constexpr (kOp == Compare::kGt) return x > y;
                          if constexpr (kOp == Compare::kLe) return x <= y;
                          if constexpr (kOp == Compare::kGe) return x >= y;
                        });
                      })));
  return One(std::move(out));
}

enum class Logic { kAnd, kOr, kXor };

template <Logic kOp>
StatusOr<std::vector<Array>> LogicKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  if (in[0]->dtype != DT::BOOL || in[1]->dtype != DT::BOOL) return absl::InvalidArgumentError("logical op on non-bool");
  OS_ASSIGN_OR_RETURN(Array out, (Binary<bool, bool>(ctx, *in[0], *in[1], DT::BOOL, [](bool x, bool y) {
                        if constexpr (kOp == Logic::kAnd) return x && y;
                        if constexpr (kOp == Logic::kOr) return x || y;
                        if constexpr (kOp == Logic::kXor) return x != y;
                      })));
  return One(std::move(out));
}

template <Logic kOp>
StatusOr<std::vector<Array>> BitwiseKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  OS_RETURN_IF_ERROR(SameType(ctx, *in[0], *in[1]));
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kIntegers, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        return Binary<T, T>(ctx, *in[0], *in[1], in[0]->dtype, [](T x, T y) -> T {
                          if constexpr (kOp == Logic::kAnd) return static_cast<T>(x & y);
                          if constexpr (kOp == Logic::kOr) return static_cast<T>(x | y);
                          if constexpr (kOp == Logic::kXor) return static_cast<T>(x ^ y);
                        });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> BitShiftKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  OS_RETURN_IF_ERROR(SameType(ctx, *in[0], *in[1]));
  const Attribute* dir = ctx.attr("direction");
  if (!dir || (dir->s() != "LEFT" && dir->s() != "RIGHT"))
    return absl::InvalidArgumentError("BitShift needs direction");
  bool left = dir->s() == "LEFT";
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kUnsigned, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        return Binary<T, T>(ctx, *in[0], *in[1], in[0]->dtype, [left](T x, T y) -> T {
                          if (y >= sizeof(T) * 8) return 0;
                          return static_cast<T>(left ? static_cast<uint64_t>(x) << y : x >> y);
                        });
                      })));
  return One(std::move(out));
}

}  // namespace

void AddElementwiseKernels(std::vector<KernelDef>& t) {
  t.push_back({"Add", 7, 0, ArithKernel<Arith::kAdd>});
  t.push_back({"Sub", 7, 0, ArithKernel<Arith::kSub>});
  t.push_back({"Mul", 7, 0, ArithKernel<Arith::kMul>});
  t.push_back({"Div", 7, 0, ArithKernel<Arith::kDiv>});
  t.push_back({"Pow", 7, 0, PowKernel});
  t.push_back({"Mod", 10, 0, ModKernel});
  t.push_back({"Min", 8, 0, VariadicKernel<Variadic::kMin>});
  t.push_back({"Max", 8, 0, VariadicKernel<Variadic::kMax>});
  t.push_back({"Sum", 8, 0, VariadicKernel<Variadic::kSum>});
  t.push_back({"Mean", 8, 0, VariadicKernel<Variadic::kMean>});
  t.push_back({"Equal", 7, 0, CompareKernel<Compare::kEq>});
  t.push_back({"Less", 7, 0, CompareKernel<Compare::kLt>});
  t.push_back({"Greater", 7, 0, CompareKernel<Compare::kGt>});
  t.push_back({"LessOrEqual", 12, 0, CompareKernel<Compare::kLe>});
  t.push_back({"GreaterOrEqual", 12, 0, CompareKernel<Compare::kGe>});
  t.push_back({"And", 7, 0, LogicKernel<Logic::kAnd>});
  t.push_back({"Or", 7, 0, LogicKernel<Logic::kOr>});
  t.push_back({"Xor", 7, 0, LogicKernel<Logic::kXor>});
  t.push_back({"BitwiseAnd", 18, 0, BitwiseKernel<Logic::kAnd>});
  t.push_back({"BitwiseOr", 18, 0, BitwiseKernel<Logic::kOr>});
  t.push_back({"BitwiseXor", 18, 0, BitwiseKernel<Logic::kXor>});
  t.push_back({"BitShift", 11, 0, BitShiftKernel});
}

}  // namespace onnxsurgeon::eval
