// Convolution, pooling and normalization. Conv and pooling as onnx's convPoolShapeInference
// computes them: floor mode only (ceil_mode's rounding differs between onnx versions), a spatial
// dim only where the input's is static, kernel sizes static.
#include <string>

#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/ops/internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

// Attribute `name` of `n` (ints), `fallback` when absent; nullopt when a reference or
// not `count` values.
std::optional<std::vector<int64_t>> Ints(const Node& n, const char* name, size_t count, int64_t fallback) {
  const Attribute* a = n.FindAttribute(name);
  if (!a) return std::vector<int64_t>(count, fallback);
  if (a->is_ref() || a->ints().size() != count) return std::nullopt;
  return a->ints();
}

// The output shape of Conv (`w` its weight) or a pooling op (`w` null: kernel_shape).
std::optional<Shape> ConvPoolShape(const Node& n, const Shape& x, const Shape* w, bool use_dilation) {
  if (x.size() < 3 || n.GetInt("ceil_mode", 0) != 0) return std::nullopt;
  const size_t k = x.size() - 2;
  // onnx ignores dilations where the op's version has none; such a model is not valid.
  if (!use_dilation && n.FindAttribute("dilations")) return std::nullopt;
  auto dilations = Ints(n, "dilations", k, 1);
  auto strides = Ints(n, "strides", k, 1);
  if (!dilations || !strides) return std::nullopt;
  std::optional<std::vector<int64_t>> kernel;
  if (n.FindAttribute("kernel_shape")) {
    kernel = Ints(n, "kernel_shape", k, 0);
  } else if (w && w->size() == k + 2) {
    kernel.emplace();
    for (size_t i = 2; i < w->size(); ++i) {
      if (!(*w)[i].is_static()) return std::nullopt;
      kernel->push_back((*w)[i].value);
    }
  }
  if (!kernel) return std::nullopt;
  for (size_t i = 0; i < k; ++i)
    if ((*kernel)[i] <= 0 || (*dilations)[i] <= 0 || (*strides)[i] <= 0) return std::nullopt;
  std::vector<int64_t> effective(k);
  for (size_t i = 0; i < k; ++i) effective[i] = ((*kernel)[i] - 1) * (*dilations)[i] + 1;

  std::vector<int64_t> pads(2 * k, 0);
  if (const Attribute* p = n.FindAttribute("pads")) {
    if (p->is_ref() || p->ints().size() != 2 * k) return std::nullopt;
    pads = p->ints();
    for (int64_t v : pads)
      if (v < 0) return std::nullopt;
  } else if (const Attribute* a = n.FindAttribute("auto_pad")) {
    if (a->is_ref()) return std::nullopt;
    const std::string& mode = a->s();
    // SAME_*: total padding from the static input size (onnx's residual rule).
    for (size_t i = 0; i < k && (mode == "SAME_UPPER" || mode == "SAME_LOWER"); ++i) {
      int64_t residual = 0;
      if ((*strides)[i] > 1) {
        if (!x[2 + i].is_static()) continue;
        residual = x[2 + i].value % (*strides)[i];
      }
      int64_t total = std::max<int64_t>(0, effective[i] - (residual == 0 ? (*strides)[i] : residual));
      int64_t small = total >> 1, big = total - small;
      pads[i] = mode == "SAME_UPPER" ? small : big;
      pads[i + k] = mode == "SAME_UPPER" ? big : small;
    }
  }

  Shape out = {x[0], w ? (*w)[0] : x[1]};
  for (size_t i = 0; i < k; ++i) {
    if (!x[2 + i].is_static()) {
      out.push_back(Dim{});
      continue;
    }
    int64_t span = x[2 + i].value + pads[i] + pads[i + k] - effective[i];
    if (span < 0) return std::nullopt;  // the kernel does not fit: leave it to onnx
    out.push_back(Dim::Static(span / (*strides)[i] + 1));
  }
  return out;
}

Out Conv(const ShapeInput& in) {
  if (in.ins.size() < 2 || in.ins[1].shape.empty()) return in.None();
  return in.Typed(in.x().elem, ConvPoolShape(in.node, in.x().shape, &in.ins[1].shape, true));
}

Out Pool(const ShapeInput& in) {
  const bool max = in.node.op_type() == "MaxPool";
  const bool dilation = max ? in.opset >= 10 : in.opset >= 19;
  auto s = ConvPoolShape(in.node, in.x().shape, nullptr, dilation);
  Out out = in.None();
  if (!s) return out;
  if (out.size() > 1 && max) out[1] = TensorType{onnx::TensorProto::INT64, *s};
  out[0] = TensorType{in.x().elem, std::move(*s)};
  return out;
}

Out GlobalPool(const ShapeInput& in) {
  const Shape& x = in.x().shape;
  if (x.size() < 2) return in.None();
  Shape s(x.begin(), x.begin() + 2);
  s.resize(x.size(), Dim::Static(1));
  return in.Typed(in.x().elem, std::move(s));
}

// Output 0 is shaped like X (BatchNormalization's training outputs are left alone).
Out ShapedLikeInput(const ShapeInput& in) {
  Out out = in.None();
  out[0] = in.x();
  return out;
}

Out LayerNorm(const ShapeInput& in) {
  Out out = in.None();
  if (in.opset < 17) return out;
  const TensorType& x = in.x();
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t axis = in.node.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return out;
  out[0] = x;
  Shape stats = x.shape;
  for (int64_t d = axis; d < rank; ++d) stats[d] = Dim::Static(1);
  const int32_t stash = static_cast<int32_t>(in.node.GetInt("stash_type", onnx::TensorProto::FLOAT));
  for (size_t i = 1; i < out.size() && i < 3; ++i) out[i] = TensorType{stash, stats};
  return out;
}

}  // namespace

void RegisterNn(OpTable& table) {
  table.Shape({"Conv"}, Conv);
  table.Shape({"MaxPool", "AveragePool"}, Pool);
  table.Shape({"GlobalAveragePool", "GlobalMaxPool"}, GlobalPool);
  table.Shape({"BatchNormalization", "InstanceNormalization", "GroupNormalization"}, ShapedLikeInput);
  table.Shape({"LayerNormalization"}, LayerNorm);
}

}  // namespace onnxsurgeon::shape_ops
