// Cast and CastLike between every numeric type and bool (string to string only).
//
// Follows onnxruntime: float16/bfloat16 targets round to nearest even (double goes through
// float first), bool targets test != 0, integer narrowing wraps. A float below the range
// of int32/int64 (-inf, as T5's relative-position buckets produce) becomes the lowest value,
// which x86 and ARM builds agree on; NaN and other out-of-range values differ between
// platforms, so they are refused.
#include <limits>

#include "core/eval/kernels_internal.h"
#include "core/ir/dtypes.h"

namespace onnxsurgeon::eval {
namespace {

template <typename S, typename D>
StatusOr<Array> CastAs(const KernelContext& ctx, const Array& a, int32_t to) {
  using CS = typename Elem<S>::Compute;
  using CD = typename Elem<D>::Compute;
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(to, a.dims));
  const char* p = a.bytes.data();
  for (int64_t i = 0, n = a.numel(); i < n; ++i) {
    CS x = Elem<S>::Load(p, i);
    CD y;
    if constexpr (std::is_same_v<CD, bool>) {
      y = x != CS(0);
    } else if constexpr (std::is_integral_v<CD> && !std::is_integral_v<CS>) {
      // float -> integer: defined only for finite values in range (truncation).
      double t = std::trunc(static_cast<double>(x));
      constexpr bool kWide = std::is_same_v<CD, int32_t> || std::is_same_v<CD, int64_t>;
      if (kWide && t < static_cast<double>(std::numeric_limits<CD>::lowest())) {
        // Below range (e.g. -inf): x86 and ARM both give the lowest value for int32/int64.
        y = std::numeric_limits<CD>::lowest();
        Elem<D>::Store(out.data, i, y);
        continue;
      }
      if (std::isnan(t) || t < static_cast<double>(std::numeric_limits<CD>::lowest()) ||
          t >= std::ldexp(1.0, std::numeric_limits<CD>::digits) * 1.0) {
        return absl::InvalidArgumentError(
            absl::StrCat("Cast of ", static_cast<double>(x), " to ", DataTypeNameLower(to), " is out of range"));
      }
      y = static_cast<CD>(t);
    } else if constexpr (std::is_same_v<CD, float> && std::is_same_v<CS, double>) {
      y = static_cast<float>(x);
    } else {
      y = static_cast<CD>(x);
    }
    Elem<D>::Store(out.data, i, y);
  }
  return std::move(out.array);
}

StatusOr<Array> CastTo(const KernelContext& ctx, const Array& a, int32_t to) {
  if (a.dtype == to) return a;
  if (a.is_string() || to == DT::STRING)
    return absl::UnimplementedError("Cast to or from string is left to the runtime");
  return Visit<kAllNumeric, StatusOr<Array>>(a.dtype, [&](auto src) -> StatusOr<Array> {
    using S = typename decltype(src)::type;
    return Visit<kAllNumeric, StatusOr<Array>>(to, [&](auto dst) -> StatusOr<Array> {
      using D = typename decltype(dst)::type;
      return CastAs<S, D>(ctx, a, to);
    });
  });
}

StatusOr<std::vector<Array>> CastKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Attribute* to = ctx.attr("to");
  if (!to || to->type() != onnx::AttributeProto::INT) return absl::UnimplementedError("Cast without an integer 'to'");
  OS_ASSIGN_OR_RETURN(Array out, CastTo(ctx, *in[0], static_cast<int32_t>(to->i())));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> CastLikeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  OS_ASSIGN_OR_RETURN(Array out, CastTo(ctx, *in[0], in[1]->dtype));
  return One(std::move(out));
}

}  // namespace

void AddCastKernels(std::vector<KernelDef>& t) {
  t.push_back({"Cast", 6, 0, CastKernel});
  t.push_back({"CastLike", 15, 0, CastLikeKernel});
}

}  // namespace onnxsurgeon::eval
