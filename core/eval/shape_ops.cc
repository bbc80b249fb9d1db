// Shape and layout kernels: Shape Size Identity Reshape Squeeze Unsqueeze Flatten
// (views: no bytes copied), Transpose Expand Tile Concat Split Slice (moves).
// Signatures that changed over opsets are handled where they differ: Squeeze/Unsqueeze
// axes (attribute < 13, input >= 13), Slice (attributes at 1, inputs with steps >= 10),
// Split (split attribute < 13, input >= 13, num_outputs >= 18), Reshape allowzero (>= 14),
// Shape start/end (>= 15).
#include <algorithm>
#include <limits>

#include "core/eval/kernels_internal.h"
#include "core/eval/slicing.h"

namespace onnxsurgeon::eval {
namespace {

Status CheckElementCount(const Array& a, const std::vector<int64_t>& dims) {
  OS_ASSIGN_OR_RETURN(int64_t n, NumElements(dims));
  if (n != a.numel()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", a.numel(), " elements into ", n));
  }
  return absl::OkStatus();
}

StatusOr<std::vector<Array>> ShapeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  int64_t rank = static_cast<int64_t>(in[0]->dims.size());
  auto [start, end] = ctx.opset() >= 15 ? ShapeRange(rank, ctx.GetInt("start", 0), ctx.GetInt("end", rank))
                                        : std::pair<int64_t, int64_t>{0, rank};
  std::vector<int64_t> dims(in[0]->dims.begin() + start, in[0]->dims.begin() + end);
  return One(Int64Array({static_cast<int64_t>(dims.size())}, dims));
}

StatusOr<std::vector<Array>> SizeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  return One(Int64Array({}, {in[0]->numel()}));
}

StatusOr<std::vector<Array>> IdentityKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  return One(*in[0]);
}

StatusOr<std::vector<Array>> ReshapeKernel(const KernelContext& ctx, Inputs in) {
  std::vector<int64_t> shape;
  if (ctx.opset() < 5) {
    OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
    auto attr = ctx.GetInts("shape");
    if (!attr) return absl::InvalidArgumentError("Reshape-1 needs a shape attribute");
    shape = *attr;
  } else {
    OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
    OS_ASSIGN_OR_RETURN(shape, in[1]->Int64s());
  }
  const Array& a = *in[0];
  bool allow_zero = ctx.opset() >= 14 && ctx.GetInt("allowzero", 0) != 0;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allow_zero) {
      if (i >= a.dims.size()) return absl::InvalidArgumentError("Reshape copies a dim the input lacks");
      shape[i] = a.dims[i];
    }
    if (shape[i] == -1) {
      if (infer >= 0) return absl::InvalidArgumentError("Reshape with two -1 dims");
      infer = static_cast<int>(i);
      continue;
    }
    if (shape[i] < 0) return absl::InvalidArgumentError(absl::StrCat("Reshape to dim ", shape[i]));
    known *= shape[i];
  }
  if (infer >= 0) {
    if (known == 0 || a.numel() % known != 0) return absl::InvalidArgumentError("Reshape cannot infer the -1 dim");
    shape[infer] = a.numel() / known;
  }
  OS_RETURN_IF_ERROR(CheckElementCount(a, shape));
  return One(a.Reshaped(std::move(shape)));
}

// Axes from the attribute (before `input_since`) or from input 1; nullopt if absent.
StatusOr<std::optional<std::vector<int64_t>>> AxesOf(const KernelContext& ctx, Inputs in, int64_t input_since) {
  if (ctx.opset() < input_since) return ctx.GetInts("axes");
  return OptionalInts(in, 1);
}

StatusOr<std::vector<Array>> SqueezeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 2));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, in, 13));
  int64_t rank = static_cast<int64_t>(a.dims.size());
  std::vector<bool> drop(rank, false);
  if (!axes) {
    for (int64_t i = 0; i < rank; ++i) drop[i] = a.dims[i] == 1;
  } else {
    for (int64_t axis : *axes) {
      OS_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(axis, rank));
      if (a.dims[k] != 1) return absl::InvalidArgumentError(absl::StrCat("Squeeze of dim ", k, " of size ", a.dims[k]));
      drop[k] = true;
    }
  }
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (!drop[i]) dims.push_back(a.dims[i]);
  return One(a.Reshaped(std::move(dims)));
}

StatusOr<std::vector<Array>> UnsqueezeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 2));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(auto axes, AxesOf(ctx, in, 13));
  if (!axes) return absl::InvalidArgumentError("Unsqueeze needs axes");
  int64_t out_rank = static_cast<int64_t>(a.dims.size() + axes->size());
  std::vector<bool> inserted(out_rank, false);
  for (int64_t axis : *axes) {
    OS_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(axis, out_rank));
    if (inserted[k]) return absl::InvalidArgumentError("Unsqueeze with a repeated axis");
    inserted[k] = true;
  }
  std::vector<int64_t> dims;
  size_t next = 0;
  for (int64_t i = 0; i < out_rank; ++i) dims.push_back(inserted[i] ? 1 : a.dims[next++]);
  return One(a.Reshaped(std::move(dims)));
}

StatusOr<std::vector<Array>> FlattenKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& a = *in[0];
  int64_t rank = static_cast<int64_t>(a.dims.size());
  int64_t axis = ctx.GetInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return absl::InvalidArgumentError("Flatten axis out of range");
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= a.dims[i];
  int64_t inner = 1;
  for (int64_t i = axis; i < rank; ++i) inner *= a.dims[i];
  return One(a.Reshaped({outer, inner}));
}

StatusOr<std::vector<Array>> TransposeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1));
  const Array& a = *in[0];
  size_t rank = a.dims.size();
  std::vector<int64_t> perm;
  if (auto p = ctx.GetInts("perm")) {
    perm = *p;
  } else {
    for (size_t i = rank; i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != rank) return absl::InvalidArgumentError("Transpose perm has the wrong length");
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> in_strides = Strides(a.dims), dims(rank), strides(rank);
  for (size_t i = 0; i < rank; ++i) {
    OS_ASSIGN_OR_RETURN(int64_t p, NormalizeAxis(perm[i], static_cast<int64_t>(rank)));
    if (seen[p]) return absl::InvalidArgumentError("Transpose perm repeats an axis");
    seen[p] = true;
    dims[i] = a.dims[p];
    strides[i] = in_strides[p];
  }
  std::vector<int64_t> out_dims = dims;
  OS_ASSIGN_OR_RETURN(
      Array out, MoveElements(ctx, a, std::move(out_dims), [&](auto&& copy) { StridedWalk(dims, 0, strides, copy); }));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> ExpandKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> shape, in[1]->Int64s());
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> dims, BroadcastDims(a.dims, shape));
  std::vector<int64_t> strides = BroadcastStrides(dims, a.dims);
  std::vector<int64_t> out_dims = dims;
  OS_ASSIGN_OR_RETURN(
      Array out, MoveElements(ctx, a, std::move(out_dims), [&](auto&& copy) { StridedWalk(dims, 0, strides, copy); }));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> TileKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 2, 2));
  const Array& a = *in[0];
  OS_ASSIGN_OR_RETURN(std::vector<int64_t> repeats, in[1]->Int64s());
  size_t rank = a.dims.size();
  if (repeats.size() != rank) return absl::InvalidArgumentError("Tile repeats must have one entry per dim");
  std::vector<int64_t> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (repeats[i] < 0) return absl::InvalidArgumentError("Tile with a negative repeat");
    dims[i] = a.dims[i] * repeats[i];
  }
  std::vector<int64_t> in_strides = Strides(a.dims);
  std::vector<int64_t> out_dims = dims;
  OS_ASSIGN_OR_RETURN(Array out, MoveElements(ctx, a, std::move(out_dims), [&](auto&& copy) {
                        int64_t total = 1;
                        for (int64_t d : dims) total *= d;
                        std::vector<int64_t> counter(rank, 0), src_index(rank, 0);
                        int64_t src = 0;
                        for (int64_t o = 0; o < total; ++o) {
                          copy(o, src);
                          for (size_t k = rank; k-- > 0;) {
                            ++counter[k];
                            src += in_strides[k];
                            if (++src_index[k] == a.dims[k]) {  // wrap to the start of the tile
                              src -= in_strides[k] * a.dims[k];
                              src_index[k] = 0;
                            }
                            if (counter[k] < dims[k]) break;
                            counter[k] = 0;  // dims[k] is a multiple of a.dims[k]: src_index[k] wrapped too
                          }
                        }
                      }));
  return One(std::move(out));
}

StatusOr<std::vector<Array>> ConcatKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 1 << 20));
  const Array& first = *in[0];
  int64_t rank = static_cast<int64_t>(first.dims.size());
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", 1), rank));
  std::vector<int64_t> dims = first.dims;
  dims[axis] = 0;
  for (const Array* x : in) {
    if (!x || x->dtype != first.dtype || x->dims.size() != first.dims.size()) {
      return absl::InvalidArgumentError("Concat inputs differ in type or rank");
    }
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && x->dims[d] != first.dims[d]) return absl::InvalidArgumentError("Concat inputs differ in shape");
    dims[axis] += x->dims[axis];
  }
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dims[d];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  if (first.is_string()) {
    std::vector<std::string> out;
    for (int64_t o = 0; o < outer; ++o)
      for (const Array* x : in) {
        int64_t block = x->dims[axis] * inner;
        for (int64_t i = 0; i < block; ++i) out.push_back(x->str(o * block + i));
      }
    Array s = StringArray(std::move(dims), std::move(out));
    OS_RETURN_IF_ERROR(ctx.CheckSize(s.byte_size()));
    return One(std::move(s));
  }
  OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(first.dtype, dims));
  size_t es = ElementSize(first.dtype);
  char* dst = out.data;
  for (int64_t o = 0; o < outer; ++o)
    for (const Array* x : in) {
      size_t block = static_cast<size_t>(x->dims[axis] * inner) * es;
      if (block) std::memcpy(dst, x->bytes.data() + o * block, block);
      dst += block;
    }
  return One(std::move(out.array));
}

// Elements [start, start + size) along `axis`, as a new array.
StatusOr<Array> SliceAxis(const KernelContext& ctx, const Array& a, int64_t axis, int64_t start, int64_t size) {
  std::vector<int64_t> dims = a.dims;
  dims[axis] = size;
  std::vector<int64_t> strides = Strides(a.dims);
  std::vector<int64_t> out_dims = dims;
  return MoveElements(ctx, a, std::move(out_dims),
                      [&](auto&& copy) { StridedWalk(dims, start * strides[axis], strides, copy); });
}

StatusOr<std::vector<Array>> SplitKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 2));
  const Array& a = *in[0];
  int64_t rank = static_cast<int64_t>(a.dims.size());
  OS_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx.GetInt("axis", 0), rank));
  int64_t n_out = static_cast<int64_t>(ctx.node().num_outputs());
  std::optional<std::vector<int64_t>> split;
  if (ctx.opset() >= 13 || (ctx.opset() < 2 && in.size() > 1 && in[1])) {
    OS_ASSIGN_OR_RETURN(split, OptionalInts(in, 1));
  } else {
    split = ctx.GetInts("split");
  }
  int64_t dim = a.dims[axis];
  std::vector<int64_t> sizes;
  if (split) {
    sizes = *split;
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) return absl::InvalidArgumentError("Split with a negative size");
      total += s;
    }
    if (total != dim || static_cast<int64_t>(sizes.size()) != n_out) {
      return absl::InvalidArgumentError("Split sizes do not add up to the dim or the output count");
    }
  } else {
    if (ctx.opset() >= 18) {
      int64_t parts = ctx.GetInt("num_outputs", n_out);
      if (parts != n_out || parts <= 0) return absl::InvalidArgumentError("Split num_outputs differs from outputs");
      int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t i = 0; i < parts; ++i) sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    } else {
      if (n_out <= 0 || dim % n_out != 0) return absl::InvalidArgumentError("Split cannot divide the dim evenly");
      sizes.assign(n_out, dim / n_out);
    }
  }
  std::vector<Array> outs;
  int64_t start = 0;
  for (int64_t s : sizes) {
    OS_ASSIGN_OR_RETURN(Array part, SliceAxis(ctx, a, axis, start, s));
    outs.push_back(std::move(part));
    start += s;
  }
  return outs;
}

StatusOr<std::vector<Array>> SliceKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, ctx.opset() < 10 ? 1 : 3, ctx.opset() < 10 ? 1 : 5));
  const Array& a = *in[0];
  int64_t rank = static_cast<int64_t>(a.dims.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    auto s = ctx.GetInts("starts");
    auto e = ctx.GetInts("ends");
    if (!s || !e) return absl::InvalidArgumentError("Slice-1 needs starts and ends");
    starts = *s;
    ends = *e;
    if (auto x = ctx.GetInts("axes")) axes = *x;
  } else {
    OS_ASSIGN_OR_RETURN(starts, in[1]->Int64s());
    OS_ASSIGN_OR_RETURN(ends, in[2]->Int64s());
    OS_ASSIGN_OR_RETURN(auto x, OptionalInts(in, 3));
    if (x) axes = *x;
    OS_ASSIGN_OR_RETURN(auto st, OptionalInts(in, 4));
    if (st) steps = *st;
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return absl::InvalidArgumentError("Slice starts/ends/axes/steps differ in length");
  }
  std::vector<int64_t> begin(rank, 0), dims = a.dims, step(rank, 1);
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    OS_ASSIGN_OR_RETURN(int64_t k, NormalizeAxis(axes[i], rank));
    if (seen[k]) return absl::InvalidArgumentError("Slice repeats an axis");
    seen[k] = true;
    auto axis = ClampSlice(a.dims[k], starts[i], ends[i], steps[i]);
    if (!axis) return absl::InvalidArgumentError("Slice step 0");
    dims[k] = axis->count;
    begin[k] = axis->start;
    step[k] = steps[i];
  }
  std::vector<int64_t> in_strides = Strides(a.dims), strides(rank);
  int64_t base = 0;
  for (int64_t k = 0; k < rank; ++k) {
    // An axis with at most one element never steps (its step may be INT64_MIN).
    if (dims[k] > 1 && __builtin_mul_overflow(in_strides[k], step[k], &strides[k]))
      return absl::InvalidArgumentError("Slice step overflows the element offset");
    if (dims[k] > 0) base += begin[k] * in_strides[k];
  }
  std::vector<int64_t> out_dims = dims;
  OS_ASSIGN_OR_RETURN(Array out, MoveElements(ctx, a, std::move(out_dims),
                                              [&](auto&& copy) { StridedWalk(dims, base, strides, copy); }));
  return One(std::move(out));
}

}  // namespace

void AddShapeKernels(std::vector<KernelDef>& t) {
  t.push_back({"Shape", 1, 0, ShapeKernel});
  t.push_back({"Size", 1, 0, SizeKernel});
  t.push_back({"Identity", 1, 0, IdentityKernel});
  t.push_back({"Reshape", 1, 0, ReshapeKernel});
  t.push_back({"Squeeze", 1, 0, SqueezeKernel});
  t.push_back({"Unsqueeze", 1, 0, UnsqueezeKernel});
  t.push_back({"Flatten", 1, 0, FlattenKernel});
  t.push_back({"Transpose", 1, 0, TransposeKernel});
  t.push_back({"Expand", 8, 0, ExpandKernel});
  t.push_back({"Tile", 6, 0, TileKernel});
  t.push_back({"Concat", 4, 0, ConcatKernel});
  t.push_back({"Split", 1, 0, SplitKernel});
  t.push_back({"Slice", 1, 0, SliceKernel});
}

}  // namespace onnxsurgeon::eval
