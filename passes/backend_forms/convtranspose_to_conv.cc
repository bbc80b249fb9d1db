// convtranspose-to-conv: writes a ConvTranspose as zero insertion and a Conv, for runtimes
// that refuse ConvTranspose (nncase 1.9 compiling for k210: 'Shapes must be same').
//
// Exact (by the definition of the transposed convolution): with stride s, kernel k,
// dilation d, pads (b, e) and output_padding p on a spatial axis, ConvTranspose(x) equals
// the stride-1 Conv, with the same dilation and group, of x with s-1 zeros inserted after
// every element, padded by d(k-1)-b before and d(k-1)-e+p-(s-1) after (the s-1 trailing
// zeros the insertion leaves count towards it), using the kernel flipped on every spatial
// axis with input and output channels swapped per group: W'[g*M/G+m, c] = flip(W[g*C/G+c, m]).
// Zeros are inserted one axis at a time with 4-D tensors only: Reshape to [N, outer, D, 1]
// (last axis) or [N, outer*D, 1, inner], Pad the unit axis to s, Reshape back; amounts
// below zero become a Slice. Every product is x times a weight as in the original, summed
// in another order.
//
// Refused, with the reason: weights computed at run time or not float; spatial dims
// of x not static (set-input-shape first); auto_pad other than NOTSET/VALID; output_shape.
//
// Options: none.
//
// Given:  %y = ConvTranspose<strides=[2], pads=[1,1], kernel_shape=[4]>(%x, %w, %b)   x: float[1,3,5]
// Result: %u = Reshape(Pad(Reshape(%x, [0,3,5,1]), [0,0,0,0,0,0,0,1]), [0,3,10])
//         %y = Conv<pads=[2,1], kernel_shape=[4]>(%u, flip(swap(%w)), %b)
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct ConvPlan {
  std::vector<int64_t> in_dims;  // x's spatial dims
  int64_t channels = 0;          // C
  int64_t group = 1;
  std::vector<int64_t> kernel, strides, dilations;
  std::vector<int64_t> begin, end;  // Conv pads after insertion (may be negative: a Slice)
  std::vector<double> weight;       // W' [M, C/G, k...]
  std::vector<int64_t> weight_dims;
  int32_t type = 0;
};

std::vector<int64_t> Ints(const Node& n, const char* name, size_t size, int64_t fallback) {
  std::vector<int64_t> v(size, fallback);
  if (const Attribute* a = n.FindAttribute(name); a && static_cast<size_t>(a->proto().ints_size()) >= size)
    for (size_t i = 0; i < size; ++i) v[i] = a->proto().ints(static_cast<int>(i));
  return v;
}

// W [C, M/G, k...] as W' [M, C/G, k...], flipped on every spatial axis.
std::vector<double> FlipSwap(const std::vector<double>& w, const std::vector<int64_t>& dims, int64_t group) {
  const int64_t c = dims[0], mg = dims[1], cg = c / group;
  int64_t area = 1;
  for (size_t i = 2; i < dims.size(); ++i) area *= dims[i];
  std::vector<double> out(w.size());
  for (int64_t ci = 0; ci < c; ++ci) {
    const int64_t g = ci / cg, cl = ci % cg;
    for (int64_t m = 0; m < mg; ++m) {
      const double* src = w.data() + (ci * mg + m) * area;
      double* dst = out.data() + ((g * mg + m) * cg + cl) * area;
      for (int64_t a = 0; a < area; ++a) dst[area - 1 - a] = src[a];  // a flip on every axis reverses the block
    }
  }
  return out;
}

Verdict<ConvPlan> Plan(const Node& n) {
  for (const Attribute& a : n.attributes())
    if (a.is_ref()) return Refuse(absl::StrCat("its attribute ", a.name(), " is a function attribute reference"));
  if (n.FindAttribute("output_shape")) return Refuse("output_shape is not rewritten (give pads)");
  if (const Attribute* a = n.FindAttribute("auto_pad"); a && a->s() != "NOTSET" && a->s() != "VALID")
    return Refuse(absl::StrCat("auto_pad=", a->s(), " is not rewritten"));
  std::optional<ConstantData> w = GetConstant(n.input(1));
  if (!w) return Refuse("its weights are computed at run time");
  if (w->data_type != onnx::TensorProto::FLOAT) return Refuse("its weights are not float");
  if (w->dims.size() < 3) return Refuse(absl::StrCat("its weights have rank ", w->dims.size(), ", below 3"));
  ConvPlan plan;
  plan.type = w->data_type;
  plan.group = 1;
  if (const Attribute* a = n.FindAttribute("group")) plan.group = a->i();
  if (plan.group < 1 || w->dims[0] % plan.group != 0)
    return Refuse(absl::StrCat("its ", w->dims[0], " input channels are not a multiple of group=", plan.group));
  const size_t rank = w->dims.size() - 2;
  std::optional<std::vector<int64_t>> x = StaticShapeOf(n.input(0));
  std::optional<Shape> xs = ShapeOf(n.input(0));
  if (!xs || DimsOrMinusOne(*xs).size() != rank + 2)
    return Refuse("the rank of its input is unknown or not its weights'");
  const std::vector<int64_t> dims = DimsOrMinusOne(*xs);
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i + 2] < 1)
      return Refuse(absl::StrCat("spatial dim ", i, " of its input is not static (set-input-shape first)"));
    plan.in_dims.push_back(dims[i + 2]);
  }
  plan.channels = w->dims[0];
  plan.kernel.assign(w->dims.begin() + 2, w->dims.end());
  plan.strides = Ints(n, "strides", rank, 1);
  plan.dilations = Ints(n, "dilations", rank, 1);
  const std::vector<int64_t> pads = Ints(n, "pads", 2 * rank, 0);
  const std::vector<int64_t> out_pad = Ints(n, "output_padding", rank, 0);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t reach = plan.dilations[i] * (plan.kernel[i] - 1);
    plan.begin.push_back(reach - pads[i]);
    plan.end.push_back(reach - pads[rank + i] + out_pad[i] - (plan.strides[i] - 1));
  }
  auto values = w->AsDoubles();
  if (!values) return Refuse("its weights are not numeric");
  plan.weight = FlipSwap(*values, w->dims, plan.group);
  plan.weight_dims = w->dims;
  plan.weight_dims[0] = w->dims[1] * plan.group;
  plan.weight_dims[1] = w->dims[0] / plan.group;
  return plan;
}

class ConvTransposeToConvRule : public NodeRule<ConvPlan> {
 public:
  ConvTransposeToConvRule() : NodeRule("convtranspose-to-conv", "ConvTranspose") {}

 protected:
  Verdict<ConvPlan> Check(Node* node, RewriteFacts&) const override { return Plan(*node); }

  Status Replace(Node* node, ConvPlan plan, Rewriter& rw) const override {
    const int64_t opset = node->graph()->OpsetVersion("");
    const size_t rank = plan.in_dims.size();
    Value* x = node->input(0);
    std::vector<int64_t> dims = plan.in_dims;  // current spatial dims
    for (size_t a = 0; a < rank; ++a) {
      const int64_t s = plan.strides[a];
      if (s == 1) continue;
      int64_t outer = plan.channels, inner = 1;
      for (size_t i = 0; i < a; ++i) outer *= dims[i];
      for (size_t i = a + 1; i < rank; ++i) inner *= dims[i];
      const bool last = a + 1 == rank;
      // [N, outer, D, 1] padded on axis 3, or [N, outer*D, 1, inner] padded on axis 2.
      std::vector<int64_t> four =
          last ? std::vector<int64_t>{0, outer, dims[a], 1} : std::vector<int64_t>{0, outer * dims[a], 1, inner};
      std::vector<int64_t> pads(8, 0);
      pads[4 + (last ? 3 : 2)] = s - 1;
      Value* r = rw.Op("Reshape", {x, rw.Int64s(four)});
      Value* p =
          opset >= 11 ? rw.Op("Pad", {r, rw.Int64s(pads)}) : rw.Op("Pad", {r}, {Rewriter::AttrInts("pads", pads)});
      dims[a] *= s;
      std::vector<int64_t> back = {0, plan.channels};
      back.insert(back.end(), dims.begin(), dims.end());
      x = rw.Op("Reshape", {p, rw.Int64s(back)});
    }
    // Negative pad amounts crop instead.
    std::vector<int64_t> starts, ends, axes, conv_pads(2 * rank, 0);
    for (size_t i = 0; i < rank; ++i) {
      conv_pads[i] = std::max<int64_t>(plan.begin[i], 0);
      conv_pads[rank + i] = std::max<int64_t>(plan.end[i], 0);
      if (plan.begin[i] >= 0 && plan.end[i] >= 0) continue;
      axes.push_back(static_cast<int64_t>(i) + 2);
      starts.push_back(std::max<int64_t>(-plan.begin[i], 0));
      ends.push_back(dims[i] - std::max<int64_t>(-plan.end[i], 0));
    }
    if (!axes.empty()) {
      if (opset >= 10) {
        x = rw.Op("Slice", {x, rw.Int64s(starts), rw.Int64s(ends), rw.Int64s(axes)});
      } else {
        x = rw.Op(
            "Slice", {x},
            {Rewriter::AttrInts("starts", starts), Rewriter::AttrInts("ends", ends), Rewriter::AttrInts("axes", axes)});
      }
    }
    OS_ASSIGN_OR_RETURN(Tensor wt, Tensor::FromDoubles(plan.type, plan.weight_dims, plan.weight));
    OS_ASSIGN_OR_RETURN(Value * w, rw.Constant(std::move(wt), "weight"));
    std::vector<Value*> inputs = {x, w};
    if (node->num_inputs() >= 3 && node->input(2)) inputs.push_back(node->input(2));
    std::vector<onnx::AttributeProto> attrs = {Rewriter::AttrInts("kernel_shape", plan.kernel),
                                               Rewriter::AttrInts("pads", conv_pads),
                                               Rewriter::AttrInts("dilations", plan.dilations)};
    if (plan.group != 1) attrs.push_back(Rewriter::AttrInt("group", plan.group));
    return rw.ReplaceNode(node, {rw.Op("Conv", std::move(inputs), std::move(attrs))});
  }
};

class ConvTransposeToConvPass : public PatternPass {
 public:
  ConvTransposeToConvPass() { AddRule(std::make_unique<ConvTransposeToConvRule>()); }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateConvTransposeToConvPass(const PassOptions&) {
  return std::make_unique<ConvTransposeToConvPass>();
}

}  // namespace onnxsurgeon::passes
