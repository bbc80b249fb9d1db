// Indexing kernels: Gather, GatherElements, ScatterND (no reduction), NonZero, Where, Trilu.
#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

// Indices normalised against `dim` (negative counts from the end); error when outside.
StatusOr<std::vector<int64_t>> Indices(const Array& indices, int64_t dim) {
  if (indices.dtype != DT::INT64 && indices.dtype != DT::INT32) {
    return absl::InvalidArgumentError("indices must be int32 or int64");
  }
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, indices.Int64s());
  for (int64_t& i : idx) {
    if (i < -dim || i >= dim)
      return absl::InvalidArgumentError(absl::StrCat("index ", i, " is out of range for dim ", dim));
    if (i < 0) i += dim;
  }
  return idx;
}

StatusOr<std::vector<Array>> GatherKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& data = *in[0];
  int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0) return absl::InvalidArgumentError("Gather on a scalar");
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", 0), rank));
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, Indices(*in[1], data.dims[axis]));
  std::vector<int64_t> dims(data.dims.begin(), data.dims.begin() + axis);
  dims.insert(dims.end(), in[1]->dims.begin(), in[1]->dims.end());
  dims.insert(dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= data.dims[d];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= data.dims[d];
  int64_t axis_dim = data.dims[axis];
  OS_ASSIGN_OR_RETURN(Array out, MoveElements(ctx, data, std::move(dims), [&](auto&& copy) {
                        int64_t o = 0;
                        for (int64_t i = 0; i < outer; ++i)
                          for (int64_t j : idx)
                            for (int64_t k = 0; k < inner; ++k) copy(o++, (i * axis_dim + j) * inner + k);
                      }));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> GatherElementsKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& data = *in[0];
  const Array& indices = *in[1];
  int64_t rank = static_cast<int64_t>(data.dims.size());
  if (rank == 0 || indices.dims.size() != data.dims.size())
    return absl::InvalidArgumentError("GatherElements ranks differ");
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", 0), rank));
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, Indices(indices, data.dims[axis]));
  std::vector<int64_t> data_strides = Strides(data.dims);
  // Offset of each index position in data, ignoring the axis coordinate.
  std::vector<int64_t> strides(rank);
  for (int64_t d = 0; d < rank; ++d) strides[d] = d == axis ? 0 : data_strides[d];
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && indices.dims[d] > data.dims[d])
      return absl::InvalidArgumentError("GatherElements indices too large");
  std::vector<int64_t> dims = indices.dims;
  OS_ASSIGN_OR_RETURN(Array out, MoveElements(ctx, data, indices.dims, [&](auto&& copy) {
                        StridedWalk(dims, 0, strides,
                                    [&](int64_t o, int64_t base) { copy(o, base + idx[o] * data_strides[axis]); });
                      }));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> ScatterNDKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 3, 3));
  const Array& data = *in[0];
  const Array& indices = *in[1];
  const Array& updates = *in[2];
  if (const Attribute* r = ctx.attr("reduction"); r && r->s() != "none") {
    return absl::UnimplementedError("ScatterND with a reduction");
  }
  if (data.is_string() || updates.dtype != data.dtype) return absl::UnimplementedError("ScatterND of these types");
  if (indices.dims.empty()) return absl::InvalidArgumentError("ScatterND indices must have rank >= 1");
  int64_t rank = static_cast<int64_t>(data.dims.size());
  int64_t k = indices.dims.back();
  if (k > rank) return absl::InvalidArgumentError("ScatterND index tuples longer than the data rank");
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> idx, indices.Int64s());
  int64_t tuples = 1;
  for (size_t d = 0; d + 1 < indices.dims.size(); ++d) tuples *= indices.dims[d];
  int64_t block = 1;
  for (int64_t d = k; d < rank; ++d) block *= data.dims[d];
  if (updates.numel() != tuples * block) return absl::InvalidArgumentError("ScatterND updates have the wrong size");
  std::vector<int64_t> strides = Strides(data.dims);
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(data.dtype, data.dims));
  size_t es = ElementSize(data.dtype);
  if (!data.bytes.empty()) std::memcpy(out.data, data.bytes.data(), data.bytes.size());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = idx[t * k + j], dim = data.dims[j];
      if (i < -dim || i >= dim) return absl::InvalidArgumentError(absl::StrCat("ScatterND index ", i, " out of range"));
      offset += (i < 0 ? i + dim : i) * strides[j];
    }
    std::memcpy(out.data + offset * es, updates.bytes.data() + t * block * es, block * es);
  }
  return One(std::move(out.array));
}

StatusOr<std::vector<Array>> NonZeroKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& a = *in[0];
  if (a.dims.empty()) return absl::UnimplementedError("NonZero of a scalar is left to the runtime");
  std::vector<int64_t> hits;
  OS_RETURN_IF_ERROR((Visit<kAllNumeric, Status>(a.dtype, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = typename Elem<T>::Compute;
    for (int64_t i = 0, n = a.numel(); i < n; ++i)
      if (Elem<T>::Load(a.bytes.data(), i) != C(0)) hits.push_back(i);
    return absl::OkStatus();
  })));
  int64_t rank = static_cast<int64_t>(a.dims.size());
  int64_t count = static_cast<int64_t>(hits.size());
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(DT::INT64, {rank, count}));
  std::vector<int64_t> strides = Strides(a.dims);
  for (int64_t j = 0; j < count; ++j) {
    int64_t rest = hits[j];
    for (int64_t d = 0; d < rank; ++d) {
      out.set<int64_t>(d * count + j, rest / strides[d]);
      rest %= strides[d];
    }
  }
  return One(std::move(out.array));
}

StatusOr<std::vector<Array>> WhereKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 3, 3));
  const Array& c = *in[0];
  const Array& x = *in[1];
  const Array& y = *in[2];
  if (c.dtype != DT::BOOL) return absl::InvalidArgumentError("Where condition must be bool");
  if (x.dtype != y.dtype) return absl::InvalidArgumentError("Where branches differ in type");
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(c.dims, x.dims));
  OS_ASSIGN_OR_RETURN(dims, BroadcastDims(dims, y.dims));
  if (x.is_string()) {
    std::vector<std::string> out(static_cast<size_t>(NumElements(dims).value_or(0)));
    BroadcastWalk<3>(dims, {&c.dims, &x.dims, &y.dims}, [&](int64_t o, const std::array<int64_t, 3>& off) {
      out[o] = c.bytes[off[0]] ? x.str(off[1]) : y.str(off[2]);
    });
    Array s = StringArray(std::move(dims), std::move(out));
    OS_RETURN_IF_ERROR(ctx.CheckSize(s.byte_size()));
    return One(std::move(s));
  }
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(x.dtype, dims));
  size_t es = ElementSize(x.dtype);
  BroadcastWalk<3>(dims, {&c.dims, &x.dims, &y.dims}, [&](int64_t o, const std::array<int64_t, 3>& off) {
    const char* src = c.bytes[off[0]] ? x.bytes.data() + off[1] * es : y.bytes.data() + off[2] * es;
    std::memcpy(out.data + o * es, src, es);
  });
  return One(std::move(out.array));
}

StatusOr<std::vector<Array>> TriluKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 2));
  const Array& a = *in[0];
  if (a.dims.size() < 2) return absl::InvalidArgumentError("Trilu needs rank >= 2");
  int64_t k = 0;
  if (in.size() > 1 && in[1]) {
    OS_ASSIGN_OR_RETURN(std::vector<int64_t> kv, in[1]->Int64s());
    if (kv.size() != 1) return absl::InvalidArgumentError("Trilu k must be a scalar");
    k = kv[0];
  }
  bool upper = ctx.GetInt("upper", 1) != 0;
  if (a.is_string()) return absl::UnimplementedError("Trilu of strings");
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(a.dtype, a.dims));  // zero-filled
  int64_t rows = a.dims[a.dims.size() - 2], cols = a.dims.back();
  size_t es = ElementSize(a.dtype);
  for (int64_t i = 0, n = a.numel(); i < n; ++i) {
    int64_t c = i % cols, r = (i / cols) % rows;
    bool keep = upper ? c - r >= k : c - r <= k;
    if (keep) std::memcpy(out.data + i * es, a.bytes.data() + i * es, es);
  }
  return One(std::move(out.array));
}

}  // namespace

void AddIndexingKernels(std::vector<KernelDef>& t) {
  t.push_back({"Gather", 1, 0, GatherKernel});
  t.push_back({"GatherElements", 11, 0, GatherElementsKernel});
  t.push_back({"NonZero", 9, 0, NonZeroKernel});
  t.push_back({"Where", 9, 0, WhereKernel});
  t.push_back({"Trilu", 14, 0, TriluKernel});
  t.push_back({"ScatterND", 11, 0, ScatterNDKernel});
}

}  // namespace onnxsurgeon::eval
