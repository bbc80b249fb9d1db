// Elementwise unary kernels: Neg Abs Sqrt Exp Log Floor Ceil Round Sign Reciprocal Relu Sin Cos,
// Not, BitwiseNot, IsNaN, IsInf, Clip (bounds as attributes before 11, inputs after). float16/bfloat16 compute in
// float, round once.
#include <limits>

#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

template <typename T, typename Out, typename Op>
StatusOr<Array> Map(const KernelContext& ctx, const Array& a, int32_t out_dtype, Op op) {
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(out_dtype, a.dims));
  const char* p = a.bytes.data();
  for (int64_t i = 0, n = a.numel(); i < n; ++i) Elem<Out>::Store(out.data, i, op(Elem<T>::Load(p, i)));
  return std::move(out.array);
}

enum class Fn { kNeg, kAbs, kSqrt, kExp, kLog, kFloor, kCeil, kRound, kSign, kReciprocal, kRelu, kSin, kCos };

template <Fn kFn>
constexpr unsigned MaskOf() {
  switch (kFn) {
    case Fn::kNeg: return kFloats | kSigned;
    case Fn::kAbs:
    case Fn::kSign:
    case Fn::kRelu: return kNumbers;
    default: return kFloats;
  }
}

template <Fn kFn>
StatusOr<std::vector<Array>> MathKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(Array out, (Visit<MaskOf<kFn>(), StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        return Map<T, T>(ctx, a, a.dtype, [](C x) -> C {
                          if constexpr (kFn == Fn::kNeg) {
                            if constexpr (std::is_integral_v<C>) return static_cast<C>(0 - static_cast<uint64_t>(x));
                            else return -x;
                          }
                          if constexpr (kFn == Fn::kAbs) {
                            if constexpr (std::is_unsigned_v<C>) return x;
                            else if constexpr (std::is_integral_v<C>)
                              return x < 0 ? static_cast<C>(0 - static_cast<uint64_t>(x)) : x;
                            else return std::fabs(x);
                          }
                          if constexpr (kFn == Fn::kSqrt) return std::sqrt(x);
                          if constexpr (kFn == Fn::kExp) return std::exp(x);
                          if constexpr (kFn == Fn::kLog) return std::log(x);
                          if constexpr (kFn == Fn::kFloor) return std::floor(x);
                          if constexpr (kFn == Fn::kCeil) return std::ceil(x);
                          if constexpr (kFn == Fn::kRound) return std::nearbyint(x);  // half to even
                          if constexpr (kFn == Fn::kSign) {
                            if constexpr (kIsFloatLike<T>) {
                              if (std::isnan(x)) return x;
                            }
                            return x > C(0) ? C(1) : (x < C(0) ? static_cast<C>(-1) : C(0));
                          }
                          if constexpr (kFn == Fn::kReciprocal) return C(1) / x;
                          if constexpr (kFn == Fn::kRelu) return x > C(0) ? x : C(0);
                          if constexpr (kFn == Fn::kSin) return std::sin(x);
                          if constexpr (kFn == Fn::kCos) return std::cos(x);
                        });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> NotKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  if (in[0]->dtype != DT::BOOL) return absl::InvalidArgumentError("Not on non-bool");
  OS_ASSIGN_OR_RETURN(Array out, (Map<bool, bool>(ctx, *in[0], DT::BOOL, [](bool x) { return !x; })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> BitwiseNotKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kIntegers, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        return Map<T, T>(ctx, *in[0], in[0]->dtype, [](T x) -> T { return static_cast<T>(~x); });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> IsNaNKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kFloats, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        return Map<T, bool>(ctx, *in[0], DT::BOOL, [](C x) { return std::isnan(x); });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> IsInfKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  bool pos = ctx.GetInt("detect_positive", 1) != 0;
  bool neg = ctx.GetInt("detect_negative", 1) != 0;
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kFloats, StatusOr<Array>>(in[0]->dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        return Map<T, bool>(ctx, *in[0], DT::BOOL, [pos, neg](C x) {
                          return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
                        });
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> ClipKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 3));
  const Array& a = *in[0];
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i] && (in[i]->numel() != 1 || in[i]->dtype != a.dtype)) {
      return absl::InvalidArgumentError("Clip bounds must be scalars of the input's type");
    }
  }
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kNumbers, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
                        if (ctx.opset() < 11) {
                          if constexpr (!kIsFloatLike<T>) return absl::InvalidArgumentError("Clip-6 is for floats");
                          lo = static_cast<C>(ctx.GetFloat("min", -std::numeric_limits<float>::max()));
                          hi = static_cast<C>(ctx.GetFloat("max", std::numeric_limits<float>::max()));
                        } else {
                          if (in.size() > 1 && in[1]) lo = Elem<T>::Load(in[1]->bytes.data(), 0);
                          if (in.size() > 2 && in[2]) hi = Elem<T>::Load(in[2]->bytes.data(), 0);
                        }
                        return Map<T, T>(ctx, a, a.dtype, [lo, hi](C x) -> C {
                          if constexpr (kIsFloatLike<T>) {
                            if (std::isnan(x)) return x;
                          }
                          C raised = x < lo ? lo : x;
                          return raised > hi ? hi : raised;  // min(max(x, lo), hi): hi wins when lo > hi
                        });
                      })));
  return One(std::move(out));
}

}  // namespace

void AddUnaryKernels(std::vector<KernelDef>& t) {
  t.push_back({"Neg", 6, 0, MathKernel<Fn::kNeg>});
  t.push_back({"Abs", 6, 0, MathKernel<Fn::kAbs>});
  t.push_back({"Sqrt", 6, 0, MathKernel<Fn::kSqrt>});
  t.push_back({"Exp", 6, 0, MathKernel<Fn::kExp>});
  t.push_back({"Log", 6, 0, MathKernel<Fn::kLog>});
  t.push_back({"Floor", 6, 0, MathKernel<Fn::kFloor>});
  t.push_back({"Ceil", 6, 0, MathKernel<Fn::kCeil>});
  t.push_back({"Round", 11, 0, MathKernel<Fn::kRound>});
  t.push_back({"Sign", 9, 0, MathKernel<Fn::kSign>});
  t.push_back({"Reciprocal", 6, 0, MathKernel<Fn::kReciprocal>});
  t.push_back({"Relu", 6, 0, MathKernel<Fn::kRelu>});
  t.push_back({"Sin", 7, 0, MathKernel<Fn::kSin>});  // rotary-embedding tables
  t.push_back({"Cos", 7, 0, MathKernel<Fn::kCos>});
  t.push_back({"Not", 1, 0, NotKernel});
  t.push_back({"BitwiseNot", 18, 0, BitwiseNotKernel});
  t.push_back({"IsNaN", 9, 0, IsNaNKernel});
  t.push_back({"IsInf", 10, 0, IsInfKernel});
  t.push_back({"Clip", 6, 0, ClipKernel});
}

}  // namespace onnxsurgeon::eval
