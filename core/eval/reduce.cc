// Reductions: ReduceSum ReduceProd ReduceMax ReduceMin ReduceMean, with keepdims and
// noop_with_empty_axes; ArgMax/ArgMin (first index on ties unless select_last_index). Axes move from attribute to input
// at opset 13 (ReduceSum) and 18 (the others). Floats accumulate in their compute type (float for float16). An empty
// reduction gives the identity: 0, 1, -inf / lowest, +inf / max (as the opset 18 spec).
// CumSum: the running sum along one axis (exclusive, reverse), accumulated in the compute
// type as onnxruntime does (a DETR's positional encoding sums its constant pixel mask).
#include <algorithm>
#include <limits>
#include <memory>

#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

enum class Reduce { kSum, kProd, kMax, kMin, kMean };

template <Reduce kOp, int kAxesInputSince>
StatusOr<std::vector<Array>> ReduceKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 2));
  const Array& a = *in[0];
  std::optional<std::vector<int64_t>> axes;
  if (ctx.opset() < kAxesInputSince) {
    axes = ctx.GetInts("axes");
  } else {
    OS_ASSIGN_OR_RETURN(axes, OptionalInts(in, 1));
  }
  bool keepdims = ctx.GetInt("keepdims", 1) != 0;
  bool noop_if_empty = ctx.opset() >= kAxesInputSince && ctx.GetInt("noop_with_empty_axes", 0) != 0;
  int64_t rank = static_cast<int64_t>(a.dims.size());
  std::vector<bool> reduced(rank, false);
  if (!axes || axes->empty()) {
    if (noop_if_empty) return One(a);
    reduced.assign(rank, true);
  } else {
    for (int64_t axis : *axes) {
      OS_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(axis, rank));
      reduced[k] = true;
    }
  }
  std::vector<int64_t> out_dims, kept_dims;  // kept_dims: rank-preserving, 1 where reduced
  int64_t group = 1;
  for (int64_t d = 0; d < rank; ++d) {
    kept_dims.push_back(reduced[d] ? 1 : a.dims[d]);
    if (reduced[d]) group *= a.dims[d];
    if (!reduced[d] || keepdims) out_dims.push_back(reduced[d] ? 1 : a.dims[d]);
  }
  constexpr unsigned kMask = (kOp == Reduce::kMax || kOp == Reduce::kMin) ? kAllNumeric : kNumbers;
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kMask, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(a.dtype, out_dims));
                        int64_t n_out = out.array.numel();
                        C init{};
                        if constexpr (kOp == Reduce::kProd) init = C(1);
                        if constexpr (kOp == Reduce::kMax) {
                          init = std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                                      : std::numeric_limits<C>::lowest();
                        }
                        if constexpr (kOp == Reduce::kMin) {
                          init = std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity()
                                                                      : std::numeric_limits<C>::max();
                        }
                        std::unique_ptr<C[]> acc(new C[static_cast<size_t>(n_out)]);  // not vector<bool>
                        std::fill(acc.get(), acc.get() + n_out, init);
                        std::vector<int64_t> strides = BroadcastStrides(a.dims, kept_dims);
                        const char* p = a.bytes.data();
                        StridedWalk(a.dims, 0, strides, [&](int64_t i, int64_t o) {
                          C x = Elem<T>::Load(p, i);
                          C& r = acc[o];
                          if constexpr (kOp == Reduce::kSum || kOp == Reduce::kMean) {
                            if constexpr (std::is_integral_v<C>)
                              r = static_cast<C>(static_cast<uint64_t>(r) + static_cast<uint64_t>(x));
                            else r = r + x;
                          } else if constexpr (kOp == Reduce::kProd) {
                            if constexpr (std::is_integral_v<C>)
                              r = static_cast<C>(static_cast<uint64_t>(r) * static_cast<uint64_t>(x));
                            else r = r * x;
                          } else {
                            if constexpr (kIsFloatLike<T>) {
                              if (std::isnan(r)) return;
                              if (std::isnan(x)) {
                                r = x;
                                return;
                              }
                            }
                            if (kOp == Reduce::kMax ? x > r : x < r) r = x;
                          }
                        });
                        for (int64_t o = 0; o < n_out; ++o) {
                          C r = acc[o];
                          if constexpr (kOp == Reduce::kMean) {
                            if constexpr (std::is_integral_v<C>) {
                              if (group == 0) return absl::InvalidArgumentError("mean over an empty set");
                              r = static_cast<C>(r / static_cast<C>(group));
                            } else {
                              r = r / static_cast<C>(group);
                            }
                          }
                          Elem<T>::Store(out.data, o, r);
                        }
                        return std::move(out.array);
                      })));
  return One(std::move(out));
}

template <bool kMax>
StatusOr<std::vector<Array>> ArgKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& a = *in[0];
  int64_t rank = static_cast<int64_t>(a.dims.size());
  if (rank == 0) return absl::InvalidArgumentError("ArgMax/ArgMin of a scalar");
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", 0), rank));
  bool keepdims = ctx.GetInt("keepdims", 1) != 0;
  bool last = ctx.opset() >= 12 && ctx.GetInt("select_last_index", 0) != 0;
  int64_t n = a.dims[axis];
  if (n == 0) return absl::InvalidArgumentError("ArgMax/ArgMin over an empty axis");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a.dims[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= a.dims[d];
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis || keepdims) dims.push_back(d == axis ? 1 : a.dims[d]);
  OS_ASSIGN_OR_RETURN(Array out, (Visit<kNumbers, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        if constexpr (kIsFloatLike<T>) {
                          for (int64_t i = 0, m = a.numel(); i < m; ++i)
                            if (std::isnan(Elem<T>::Load(a.bytes.data(), i)))
                              return absl::UnimplementedError("ArgMax/ArgMin over NaN");
                        }
                        OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(DT::INT64, dims));
                        for (int64_t o = 0; o < outer; ++o)
                          for (int64_t i = 0; i < inner; ++i) {
                            int64_t best = 0;
                            C best_value = Elem<T>::Load(a.bytes.data(), o * n * inner + i);
                            for (int64_t j = 1; j < n; ++j) {
                              C x = Elem<T>::Load(a.bytes.data(), (o * n + j) * inner + i);
                              bool better = kMax ? (last ? x >= best_value : x > best_value)
                                                 : (last ? x <= best_value : x < best_value);
                              if (better) {
                                best = j;
                                best_value = x;
                              }
                            }
                            out.set<int64_t>(o * inner + i, best);
                          }
                        return std::move(out.array);
                      })));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> CumSumKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, in[1]->Int64s());
  if (axis_v.size() != 1) return absl::InvalidArgumentError("CumSum axis must hold one element");
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_v[0], static_cast<int64_t>(a.dims.size())));
  const bool exclusive = ctx.GetInt("exclusive", 0) != 0, reverse = ctx.GetInt("reverse", 0) != 0;
  int64_t outer = 1, len = a.dims[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= a.dims[d];
  for (size_t d = axis + 1; d < a.dims.size(); ++d) inner *= a.dims[d];
  OS_ASSIGN_OR_RETURN(Array out,
                      (Visit<kFloats | kSigned | kUnsigned, StatusOr<Array>>(a.dtype, [&](auto tag) -> StatusOr<Array> {
                        using T = typename decltype(tag)::type;
                        using C = typename Elem<T>::Compute;
                        OS_ASSIGN_OR_RETURN(NewArray o, ctx.Allocate(a.dtype, a.dims));
                        const char* p = a.bytes.data();
                        for (int64_t b = 0; b < outer; ++b)
                          for (int64_t i = 0; i < inner; ++i) {
                            C sum = C(0);
                            for (int64_t k = 0; k < len; ++k) {
                              int64_t j = reverse ? len - 1 - k : k;
                              int64_t at = (b * len + j) * inner + i;
                              C x = Elem<T>::Load(p, at);
                              if (!exclusive) sum = C(sum + x);
                              Elem<T>::Store(o.data, at, sum);
                              if (exclusive) sum = C(sum + x);
                            }
                          }
                        return std::move(o.array);
                      })));
  return One(std::move(out));
}

}  // namespace

void AddReduceKernels(std::vector<KernelDef>& t) {
  t.push_back({"ReduceSum", 1, 12, ReduceKernel<Reduce::kSum, 13>});
  t.push_back({"ReduceSum", 13, 0, ReduceKernel<Reduce::kSum, 13>});
  t.push_back({"ReduceProd", 1, 0, ReduceKernel<Reduce::kProd, 18>});
  t.push_back({"ReduceMax", 1, 0, ReduceKernel<Reduce::kMax, 18>});
  t.push_back({"ReduceMin", 1, 0, ReduceKernel<Reduce::kMin, 18>});
  t.push_back({"ReduceMean", 1, 0, ReduceKernel<Reduce::kMean, 18>});
  t.push_back({"ArgMax", 1, 0, ArgKernel<true>});
  t.push_back({"ArgMin", 1, 0, ArgKernel<false>});
  t.push_back({"CumSum", 11, 0, CumSumKernel});
}

}  // namespace onnxsurgeon::eval
