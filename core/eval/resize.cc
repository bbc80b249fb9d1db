// Resize (opset 11 on): nearest, linear and cubic interpolation of a float tensor, so a
// Resize of constants folds (a ViT's position embeddings interpolated to a static image
// size, DETR's pixel mask resized to the feature map).
//
// The n-D interpolation ONNX defines is a tensor product of 1-D interpolations, one per
// axis, so the kernel resizes one axis after another, in double, and rounds once at the
// end. Per axis, output index x maps to the input coordinate
//   half_pixel           (x + 0.5) / scale - 0.5
//   pytorch_half_pixel   the same, or 0 when the output has length 1
//   align_corners        x * (in - 1) / (out - 1), or 0 when the output has length 1
//   asymmetric           x / scale
// where scale is the given scale, or out / in when sizes are given. Neighbours outside the
// input take the edge value (as onnx's reference pads by edge); with exclude_outside they
// get weight 0 and the rest are renormalised. Unimplemented (the node stays): other
// coordinate modes (tf_crop_and_resize, tf_half_pixel_for_nn, half_pixel_symmetric),
// antialias, a keep_aspect_ratio_policy other than stretch, non-float elements, opset 10.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "core/eval/kernels_internal.h"

namespace onnxsurgeon::eval {
namespace {

std::string StringAttr(const KernelContext& ctx, std::string_view name, std::string fallback) {
  const Attribute* a = ctx.attr(name);
  return a ? a->s() : fallback;
}

// One axis's interpolation: per output index, the input indices it reads and their weights.
struct Taps {
  int64_t per_output = 0;  // taps per output index
  std::vector<int64_t> index;
  std::vector<double> weight;
};

struct AxisSpec {
  int64_t in = 0, out = 0;
  double scale = 1;
};

struct Options {
  std::string mode, coordinates, nearest;
  double cubic_a = -0.75;
  bool exclude_outside = false;
};

double SourceCoordinate(const Options& o, const AxisSpec& a, int64_t x) {
  if (o.coordinates == "align_corners") return a.out == 1 ? 0.0 : double(x) * double(a.in - 1) / double(a.out - 1);
  if (o.coordinates == "asymmetric") return double(x) / a.scale;
  if (o.coordinates == "pytorch_half_pixel" && a.out == 1) return 0.0;
  return (double(x) + 0.5) / a.scale - 0.5;  // half_pixel, pytorch_half_pixel
}

int64_t NearestIndex(const std::string& mode, double c) {
  if (mode == "floor") return int64_t(std::floor(c));
  if (mode == "ceil") return int64_t(std::ceil(c));
  if (mode == "round_prefer_ceil") return int64_t(std::floor(c + 0.5));
  return int64_t(std::ceil(c - 0.5));  // round_prefer_floor
}

// Cubic convolution weights for the neighbours at offsets -1, 0, 1, 2 of floor(c).
std::array<double, 4> CubicWeights(double r, double a) {
  auto near = [a](double t) { return ((a + 2) * t - (a + 3)) * t * t + 1; };       // |t| <= 1
  auto far = [a](double t) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; };  // 1 < |t| < 2
  return {far(r + 1), near(r), near(1 - r), far(2 - r)};
}

Taps MakeTaps(const Options& o, const AxisSpec& a) {
  Taps t;
  t.per_output = o.mode == "nearest" ? 1 : o.mode == "linear" ? 2 : 4;
  for (int64_t x = 0; x < a.out; ++x) {
    double c = SourceCoordinate(o, a, x);
    if (o.mode == "nearest") {
      t.index.push_back(std::clamp<int64_t>(NearestIndex(o.nearest, c), 0, a.in - 1));
      t.weight.push_back(1.0);
      continue;
    }
    double base = std::floor(c);
    double r = c - base;
    std::vector<double> w = {1 - r, r};
    int64_t first = int64_t(base);
    if (o.mode == "cubic") {
      auto cw = CubicWeights(r, o.cubic_a);
      w.assign(cw.begin(), cw.end());
      first -= 1;
    }
    double kept = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      int64_t i = first + int64_t(k);
      if (o.exclude_outside && (i < 0 || i >= a.in)) w[k] = 0;
      kept += w[k];
      t.index.push_back(std::clamp<int64_t>(i, 0, a.in - 1));
    }
    for (double& v : w) t.weight.push_back(o.exclude_outside && kept != 0 ? v / kept : v);
  }
  return t;
}

// Resizes `axis` of a row-major array (dims) held in doubles.
std::vector<double> ResizeAxis(const std::vector<double>& src, std::vector<int64_t>& dims, size_t axis,
                               const AxisSpec& a, const Taps& t) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<double> dst(static_cast<size_t>(outer * a.out * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    const double* s = src.data() + o * a.in * inner;
    double* d = dst.data() + o * a.out * inner;
    for (int64_t x = 0; x < a.out; ++x) {
      for (int64_t k = 0; k < t.per_output; ++k) {
        int64_t i = t.index[x * t.per_output + k];
        double w = t.weight[x * t.per_output + k];
        if (w == 0) continue;
        for (int64_t j = 0; j < inner; ++j) d[x * inner + j] += w * s[i * inner + j];
      }
    }
  }
  dims[axis] = a.out;
  return dst;
}

Status CheckOptions(const KernelContext& ctx, const Options& o) {
  if (o.mode != "nearest" && o.mode != "linear" && o.mode != "cubic")
    return absl::UnimplementedError(absl::StrCat("Resize mode '", o.mode, "'"));
  if (o.coordinates != "half_pixel" && o.coordinates != "pytorch_half_pixel" && o.coordinates != "align_corners" &&
      o.coordinates != "asymmetric")
    return absl::UnimplementedError(absl::StrCat("Resize coordinate_transformation_mode '", o.coordinates, "'"));
  if (o.nearest != "round_prefer_floor" && o.nearest != "round_prefer_ceil" && o.nearest != "floor" &&
      o.nearest != "ceil")
    return absl::UnimplementedError(absl::StrCat("Resize nearest_mode '", o.nearest, "'"));
  if (ctx.GetInt("antialias", 0) != 0) return absl::UnimplementedError("Resize with antialias");
  if (StringAttr(ctx, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return absl::UnimplementedError("Resize keep_aspect_ratio_policy other than stretch");
  return absl::OkStatus();
}

// Per axis of x: input length, output length and scale, from scales or sizes (and axes).
StatusOr<std::vector<AxisSpec>> AxisSpecs(const KernelContext& ctx, const Array& x, Inputs in, bool align_corners) {
  const size_t rank = x.dims.size();
  std::vector<int64_t> axes;
  if (auto given = ctx.GetInts("axes")) {
    for (int64_t a : *given) {
      OS_ASSIGN_OR_RETURN(int64_t n, NormalizeAxis(a, int64_t(rank)));
      axes.push_back(n);
    }
  } else {
    for (size_t d = 0; d < rank; ++d) axes.push_back(int64_t(d));
  }
  std::vector<AxisSpec> specs(rank);
  for (size_t d = 0; d < rank; ++d) specs[d] = {x.dims[d], x.dims[d], 1.0};
  const Array* scales = in.size() > 2 && in[2] && in[2]->numel() > 0 ? in[2] : nullptr;
  const Array* sizes = in.size() > 3 && in[3] && in[3]->numel() > 0 ? in[3] : nullptr;
  if (bool(scales) == bool(sizes)) return absl::InvalidArgumentError("Resize needs exactly one of scales and sizes");
  if (int64_t(axes.size()) != (scales ? scales->numel() : sizes->numel()))
    return absl::InvalidArgumentError("Resize scales/sizes do not match the axes");
  for (size_t k = 0; k < axes.size(); ++k) {
    AxisSpec& s = specs[axes[k]];
    if (sizes) {
      OS_ASSIGN_OR_RETURN(std::vector<int64_t> v, sizes->Int64s());
      s.out = v[k];
      s.scale = s.in > 0 ? double(s.out) / double(s.in) : 1.0;
    } else {
      if (scales->dtype != DT::FLOAT) return absl::UnimplementedError("Resize scales that are not float");
      s.scale = scales->at<float>(int64_t(k));
      if (!(s.scale > 0)) return absl::InvalidArgumentError("Resize scale must be positive");
      s.out = int64_t(std::floor(double(s.in) * s.scale));
      // align_corners divides by the unrounded in * scale in onnx's reference and by the
      // output length in onnxruntime: folded only where the two agree.
      if (align_corners && double(s.in) * s.scale != double(s.out))
        return absl::UnimplementedError("Resize align_corners with a scale that does not give a whole length");
    }
    if (s.out < 0) return absl::InvalidArgumentError("Resize output size is negative");
    if (s.in == 0 && s.out > 0) return absl::InvalidArgumentError("Resize of an empty axis");
  }
  return specs;
}

StatusOr<std::vector<Array>> ResizeKernel(const KernelContext& ctx, Inputs in) {
  OS_RETURN_IF_ERROR(ExpectInputs(ctx, in, 1, 4));
  const Array& x = *in[0];
  Options o{StringAttr(ctx, "mode", "nearest"), StringAttr(ctx, "coordinate_transformation_mode", "half_pixel"),
            StringAttr(ctx, "nearest_mode", "round_prefer_floor"), ctx.GetFloat("cubic_coeff_a", -0.75f),
            ctx.GetInt("exclude_outside", 0) != 0};
  OS_RETURN_IF_ERROR(CheckOptions(ctx, o));
  OS_ASSIGN_OR_RETURN(std::vector<AxisSpec> specs, AxisSpecs(ctx, x, in, o.coordinates == "align_corners"));
  std::vector<int64_t> out_dims;
  for (const AxisSpec& s : specs) out_dims.push_back(s.out);
  return Visit<kFloats, StatusOr<std::vector<Array>>>(x.dtype, [&](auto tag) -> StatusOr<std::vector<Array>> {
    using T = typename decltype(tag)::type;
    OS_ASSIGN_OR_RETURN(NewArray out, ctx.Allocate(x.dtype, out_dims));
    std::vector<double> v(static_cast<size_t>(x.numel()));
    for (int64_t i = 0; i < x.numel(); ++i) v[i] = double(Elem<T>::Load(x.bytes.data(), i));
    std::vector<int64_t> dims = x.dims;
    for (size_t d = 0; d < specs.size(); ++d) {
      if (specs[d].in == specs[d].out && specs[d].scale == 1.0) continue;  // every mode maps x to x
      if (specs[d].out == 0 || specs[d].in == 0) {
        dims[d] = specs[d].out;
        v.assign(0, 0.0);
        continue;
      }
      v = ResizeAxis(v, dims, d, specs[d], MakeTaps(o, specs[d]));
    }
    for (size_t i = 0; i < v.size(); ++i)
      Elem<T>::Store(out.data, int64_t(i), static_cast<typename Elem<T>::Compute>(v[i]));
    return One(std::move(out.array));
  });
}

}  // namespace

void AddResizeKernels(std::vector<KernelDef>& t) { t.push_back({"Resize", 11, 0, ResizeKernel}); }

}  // namespace onnxsurgeon::eval
