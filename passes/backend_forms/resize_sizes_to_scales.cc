// resize-sizes-to-scales: gives a Resize that states its output size (the `sizes` input,
// `scales` empty) the equivalent constant `scales` instead, for runtimes that read only
// scales: nncase 1.9 refuses the sizes form, "Can't pull input data for <> : only constant
// initialization is supported" (it reads the empty scales input), and runs the scales form
// (targets/probes/nncase_resize_sizes.py). torch writes the sizes form for
// F.interpolate(size=...), as feature pyramids upsample one map to another's shape.
//
// Exact: with sizes given, Resize computes each axis's scale as sizes[i] / in[i] in float32
// (onnxruntime: static_cast<float>(out) / static_cast<float>(in)) and maps coordinates with
// it; the new scales are those same float32 quotients. An axis is refused unless its
// output length from that scale, floor(in[i] * scale), is sizes[i] again (in float32 and in
// float64), so the output shape cannot change. Needs sizes constant, the input's dims
// static, every axis given (no `axes` attribute, opset 18), the default aspect policy
// (stretch) and a mode other than tf_crop_and_resize (whose output length also depends on
// the roi).
//
// Given:  %y = Resize<mode = "nearest">(%x, "", "", [1, 4, 10, 12])       %x: float[1,4,5,6]
// Result: %y = Resize<mode = "nearest">(%x, "", [1.0, 1.0, 2.0, 2.0])
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/ir/tensor.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

std::string StringAttr(const Node& n, std::string_view name, std::string fallback) {
  const Attribute* a = n.FindAttribute(name);
  return a ? a->proto().s() : fallback;
}

Verdict<std::vector<float>> Decide(const Node& resize) {
  if (resize.num_inputs() < 4 || !resize.input(3)) return Refuse("no sizes input");
  if (const Value* scales = resize.input(2)) {
    auto meta = GetConstantTypeAndDims(scales);
    if (!meta) return Refuse("both scales and sizes are given (scales computed at run time)");
    int64_t n = 1;
    for (int64_t d : meta->second) n *= d;
    if (n != 0) return Refuse("both scales and sizes are given");
  }
  if (resize.FindAttribute("axes")) return Refuse("the axes attribute resizes some axes only");
  if (StringAttr(resize, "keep_aspect_ratio_policy", "stretch") != "stretch")
    return Refuse("keep_aspect_ratio_policy is not stretch");
  if (StringAttr(resize, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return Refuse("tf_crop_and_resize: the output length depends on the roi too");
  auto sizes = ConstantInt64s(resize.input(3));
  if (!sizes) return Refuse("the sizes are computed at run time");
  auto in = StaticShapeOf(resize.input(0));
  if (!in) return Refuse("the input's dims are not all static");
  if (in->size() != sizes->size()) return Refuse("sizes and the input differ in rank");
  std::vector<float> scales;
  for (size_t i = 0; i < in->size(); ++i) {
    const int64_t d = (*in)[i], s = (*sizes)[i];
    if (d <= 0 || s <= 0) return Refuse(absl::StrCat("axis ", i, " is empty"));
    const float scale = static_cast<float>(s) / static_cast<float>(d);
    const float f32 = scale * static_cast<float>(d);
    const double f64 = static_cast<double>(scale) * static_cast<double>(d);
    if (static_cast<int64_t>(std::floor(f32)) != s || static_cast<int64_t>(std::floor(f64)) != s)
      return Refuse(absl::StrCat("axis ", i, ": the float32 scale ", s, "/", d, " does not give ", s, " back"));
    scales.push_back(scale);
  }
  return scales;
}

class ResizeSizesToScalesPass : public PatternPass {
 public:
  ResizeSizesToScalesPass() {
    pattern::Pattern p("resize-sizes-to-scales");
    pattern::OpRef r = p.Op("Resize", {p.Any("x")});
    r.AnyNumberOfInputs();  // roi and scales are empty in the form this rewrites
    AddRule(std::make_unique<PatternRule<std::vector<float>>>(
        "resize-sizes-to-scales", std::move(p), r.id(),
        [](const pattern::Match& m) -> Verdict<std::vector<float>> { return Decide(*m.root()); },
        [](const pattern::Match& m, const std::vector<float>& scales, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Tensor t;
          t.mutable_meta().set_data_type(onnx::TensorProto::FLOAT);
          t.mutable_meta().add_dims(static_cast<int64_t>(scales.size()));
          std::string bytes(scales.size() * sizeof(float), '\0');
          std::memcpy(bytes.data(), scales.data(), bytes.size());
          t.SetRawBytes(std::move(bytes));
          OS_ASSIGN_OR_RETURN(Value * k, rw.Constant(std::move(t), "scales"));
          const Node& old = *m.root();
          std::vector<onnx::AttributeProto> attrs;
          for (const Attribute& a : old.attributes()) attrs.push_back(a.proto());
          Value* roi = old.num_inputs() > 1 ? old.input(1) : nullptr;
          Value* y = rw.Op("Resize", {m.value("x"), roi, k}, std::move(attrs));
          const Value* out = old.output(0);
          if (out->has_type()) *y->mutable_info()->mutable_type() = out->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Resize");  // the input's dims decide
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateResizeSizesToScalesPass(const PassOptions&) {
  return std::make_unique<ResizeSizesToScalesPass>();
}

}  // namespace onnxsurgeon::passes
