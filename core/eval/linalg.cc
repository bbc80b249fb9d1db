// MatMul, Softmax and LayerNormalization of constants: a DETR decoder's first self-attention
// reads only its (constant) query embeddings, so at static sizes the whole block folds.
// Floats compute in double and round once (onnxruntime sums in float: the two differ by
// float rounding only); integers wrap as onnxruntime's do. bfloat16 is left alone: onnx's
// reference rounds it op by op inside these ops, and one rounding at the end differs by an ulp. MatMul is refused over
// kMaxMultiplyAdds so folding two large weights never takes seconds.
#include <algorithm>
#include <cmath>

#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

constexpr int64_t kMaxMultiplyAdds = int64_t{1} << 27;

Status NotBFloat16(const KernelContext& ctx, const Array& x) {
  if (x.dtype == DT::BFLOAT16) return absl::UnimplementedError(absl::StrCat(ctx.node().op_type(), " of bfloat16"));
  return absl::OkStatus();
}

template <typename T>
using Acc = std::conditional_t<kIsFloatLike<T>, double, std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

StatusOr<std::vector<Array>> MatMulKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array &a = *in[0], &b = *in[1];
  OS_RETURN_IF_ERROR(NotBFloat16(ctx, a));
  if (a.dtype != b.dtype) return absl::InvalidArgumentError("MatMul operands differ in type");
  if (a.dims.empty() || b.dims.empty()) return absl::InvalidArgumentError("MatMul of a scalar");
  // numpy's rules: a 1-D a is [1, K] and a 1-D b is [K, 1], the added dim dropped after.
  std::vector<int64_t> ad = a.dims, bd = b.dims;
  if (ad.size() == 1) ad.insert(ad.begin(), 1);
  if (bd.size() == 1) bd.push_back(1);
  const int64_t m = ad[ad.size() - 2], k = ad.back(), n = bd.back();
  if (bd[bd.size() - 2] != k) return absl::InvalidArgumentError("MatMul inner dims differ");
  std::vector<int64_t> a_batch(ad.begin(), ad.end() - 2), b_batch(bd.begin(), bd.end() - 2);
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> batch, BroadcastDims(a_batch, b_batch));
  OS_ASSIGN_OR_RETURN(int64_t batches, NumElements(batch));
  if (static_cast<double>(batches) * m * n * k > static_cast<double>(kMaxMultiplyAdds))
    return absl::ResourceExhaustedError("MatMul of constants over the multiply-add budget");
  std::vector<int64_t> out_dims = batch;
  if (a.dims.size() > 1) out_dims.push_back(m);
  if (b.dims.size() > 1) out_dims.push_back(n);
  return Visit<kFloats | kSigned | kUnsigned, StatusOr<std::vector<Array>>>(
      a.dtype, [&](auto tag) -> StatusOr<std::vector<Array>> {
        using T = typename decltype(tag)::type;
        OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(a.dtype, out_dims));
        const std::vector<int64_t> as = BroadcastStrides(batch, a_batch), bs = BroadcastStrides(batch, b_batch);
        std::vector<Acc<T>> row(static_cast<size_t>(n));
        StridedWalk(batch, 0, as, [&](int64_t o, int64_t a_mat) {
          // The walk gives a's matrix index; b's comes from the same batch index.
          int64_t b_mat = 0, rest = o;
          for (size_t d = batch.size(); d-- > 0;) {
            b_mat += (rest % batch[d]) * bs[d];
            rest /= batch[d];
          }
          const int64_t a0 = a_mat * m * k, b0 = b_mat * k * n;
          for (int64_t i = 0; i < m; ++i) {
            std::fill(row.begin(), row.end(), Acc<T>(0));
            for (int64_t p = 0; p < k; ++p) {
              Acc<T> x = Acc<T>(Elem<T>::Load(a.bytes.data(), a0 + i * k + p));
              for (int64_t j = 0; j < n; ++j) row[j] += x * Acc<T>(Elem<T>::Load(b.bytes.data(), b0 + p * n + j));
            }
            for (int64_t j = 0; j < n; ++j)
              Elem<T>::Store(out.data, (o * m + i) * n + j, static_cast<typename Elem<T>::Compute>(row[j]));
          }
        });
        return One(std::move(out.array));
      });
}

// Softmax over `inner` elements at stride 1 (opset < 13: the flattened tail) or over one axis.
template <int kAxisOnlySince>
StatusOr<std::vector<Array>> SoftmaxKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& x = *in[0];
  OS_RETURN_IF_ERROR(NotBFloat16(ctx, x));
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  const bool one_axis = ctx.opset() >= kAxisOnlySince;
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", one_axis ? -1 : 1), std::max<int64_t>(rank, 1)));
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : d == axis || !one_axis ? len : inner) *= x.dims[d];
  return Visit<kFloats, StatusOr<std::vector<Array>>>(x.dtype, [&](auto tag) -> StatusOr<std::vector<Array>> {
    using T = typename decltype(tag)::type;
    OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(x.dtype, x.dims));
    std::vector<double> e(static_cast<size_t>(len));
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
        double top = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len; ++j) top = std::max(top, double(Elem<T>::Load(x.bytes.data(), at(j))));
        for (int64_t j = 0; j < len; ++j) sum += e[j] = std::exp(double(Elem<T>::Load(x.bytes.data(), at(j))) - top);
        for (int64_t j = 0; j < len; ++j)
          Elem<T>::Store(out.data, at(j), static_cast<typename Elem<T>::Compute>(e[j] / sum));
      }
    return One(std::move(out.array));
  });
}

// LayerNormalization (opset 17): Y = (X - mean) / sqrt(var + epsilon) * Scale + B over the
// axes from `axis` on; Mean and InvStdDev (when declared) in float, stash_type 1.
StatusOr<std::vector<Array>> LayerNormKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 3));
  const Array &x = *in[0], &scale = *in[1];
  const Array* bias = in.size() > 2 ? in[2] : nullptr;
  OS_RETURN_IF_ERROR(NotBFloat16(ctx, x));
  if (ctx.GetInt("stash_type", 1) != 1)
    return absl::UnimplementedError("LayerNormalization stash_type other than float");
  const int64_t rank = static_cast<int64_t>(x.dims.size());
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", -1), rank));
  const double eps = ctx.GetFloat("epsilon", 1e-5f);
  std::vector<int64_t> norm_dims(x.dims.begin() + axis, x.dims.end()), stat_dims(x.dims.begin(), x.dims.begin() + axis);
  stat_dims.resize(x.dims.size(), 1);
  if (scale.dims.size() > norm_dims.size() || (bias && bias->dims.size() > norm_dims.size()))
    return absl::InvalidArgumentError("LayerNormalization scale or bias has more dims than the normalized axes");
  OS_ASSIGN_OR_RETURN(int64_t len, NumElements(norm_dims));
  const int64_t outer = len == 0 ? 0 : x.numel() / len;
  return Visit<kFloats, StatusOr<std::vector<Array>>>(x.dtype, [&](auto tag) -> StatusOr<std::vector<Array>> {
    using T = typename decltype(tag)::type;
    using C = typename Elem<T>::Compute;
    if (scale.dtype != x.dtype || (bias && bias->dtype != x.dtype))
      return absl::InvalidArgumentError("LayerNormalization inputs differ in type");
    OS_ASSIGN_OR_RETURN(NewArray y, ctx.Allocate(x.dtype, x.dims));
    OS_ASSIGN_OR_RETURN(NewArray mean_out, ctx.Allocate(DT::FLOAT, stat_dims));
    OS_ASSIGN_OR_RETURN(NewArray inv_out, ctx.Allocate(DT::FLOAT, stat_dims));
    std::vector<int64_t> s_off(static_cast<size_t>(len)), b_off(static_cast<size_t>(len));
    StridedWalk(norm_dims, 0, BroadcastStrides(norm_dims, scale.dims), [&](int64_t j, int64_t s) { s_off[j] = s; });
    if (bias)
      StridedWalk(norm_dims, 0, BroadcastStrides(norm_dims, bias->dims), [&](int64_t j, int64_t s) { b_off[j] = s; });
    for (int64_t o = 0; o < outer; ++o) {
      double mean = 0, var = 0;
      for (int64_t j = 0; j < len; ++j) mean += double(Elem<T>::Load(x.bytes.data(), o * len + j));
      mean /= double(len);
      for (int64_t j = 0; j < len; ++j) {
        double d = double(Elem<T>::Load(x.bytes.data(), o * len + j)) - mean;
        var += d * d;
      }
      const double inv = 1.0 / std::sqrt(var / double(len) + eps);
      for (int64_t j = 0; j < len; ++j) {
        double v = (double(Elem<T>::Load(x.bytes.data(), o * len + j)) - mean) * inv *
                   double(Elem<T>::Load(scale.bytes.data(), s_off[j]));
        if (bias) v += double(Elem<T>::Load(bias->bytes.data(), b_off[j]));
        Elem<T>::Store(y.data, o * len + j, static_cast<C>(v));
      }
      mean_out.set<float>(o, static_cast<float>(mean));
      inv_out.set<float>(o, static_cast<float>(inv));
    }
    std::vector<Array> outs;
    outs.push_back(std::move(y.array));
    outs.push_back(std::move(mean_out.array));
    outs.push_back(std::move(inv_out.array));
    return outs;
  });
}

}  // namespace

void AddLinalgKernels(std::vector<KernelDef>& t) {
  t.push_back({"MatMul", 1, 0, MatMulKernel});
  t.push_back({"Softmax", 1, 0, SoftmaxKernel<13>});
  t.push_back({"LayerNormalization", 17, 0, LayerNormKernel});
}

}  // namespace onnxsurgeon::eval
