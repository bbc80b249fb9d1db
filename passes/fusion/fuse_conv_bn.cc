// fuse-conv-bn: folds an inference-mode BatchNormalization that follows a Conv into the
// Conv's weights and bias, as onnx-simplifier and onnxruntime do:
//   s  = scale / sqrt(var + epsilon)                 (per output channel m)
//   W' = W * s[m]        B' = (B - mean) * s + bias  (B = 0 when the Conv has none)
// The arithmetic is done in double and rounded once to the weights' type, so the result
// differs from the unfused model only by float rounding (the same as onnxruntime's own
// fusion). Applies when W, B and the four BatchNormalization operands are constants of
// type float or double, the channel counts agree, BatchNormalization is not in training
// mode and only its first output is used, and the Conv's output feeds nothing else.
//
// A ConvTranspose folds the same way (rule fuse-convtranspose-bn): its weight is
// [C_in, C_out/group, k...], so output channel m = g * C_out/group + j scales W[c, j] for
// every input channel c of group g.
//
// Before:  c = Conv<pads=[1,1,1,1]>(x, W, B)   y = BatchNormalization(c, scale, bias, mean, var)
// After:   y = Conv<pads=[1,1,1,1]>(x, W', B')
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using pattern::Match;
using pattern::Pattern;

// The folded weights and bias, or nullopt with a reason.
struct Folded {
  Tensor weight, bias;
};

std::optional<Folded> Fold(const Match& m, bool transposed, std::string* why) {
  const Node& conv = *m.node("conv");
  const Node& bn = *m.node("bn");
  for (size_t i = 1; i < bn.num_outputs(); ++i) {
    if (bn.output(i) && bn.output(i)->HasUsers()) {
      Refuse(why, "BatchNormalization's running statistics are used");
      return std::nullopt;
    }
  }
  if (const Attribute* t = bn.FindAttribute("training_mode"); t && t->i(0) != 0) {
    Refuse(why, "BatchNormalization is in training mode");
    return std::nullopt;
  }
  const ConstantData& w = m.constant("w");
  // Not float16: W * s rounded to float16 is not what the model computes (Conv, then
  // BatchNormalization, each rounded to float16): a half-ulp per folded layer (5e-4 at the
  // output of a dev float16 DBNet-style detector) that compounds through a deep network.
  if (!IsFloatOrDouble(w.data_type) || w.dims.size() < 3) {
    Refuse(why, "the Conv weight is not a float or double tensor of rank >= 3");
    return std::nullopt;
  }
  const int64_t group = conv.GetInt("group", 1);
  if (group < 1 || (transposed && w.dims[0] % group != 0)) {
    Refuse(why, "the group count does not divide the weight's input channels");
    return std::nullopt;
  }
  // Output channels: W's first dim for Conv; for ConvTranspose its second times the groups.
  const int64_t channels = transposed ? w.dims[1] * group : w.dims[0];
  std::vector<double> stats[4];
  const char* names[] = {"scale", "bias", "mean", "var"};
  for (int i = 0; i < 4; ++i) {
    const ConstantData& c = m.constant(names[i]);
    auto values = c.AsDoubles();
    if (c.data_type != w.data_type || !values || static_cast<int64_t>(values->size()) != channels) {
      Refuse(why,
             absl::StrCat("BatchNormalization's ", names[i], " is not ", channels, " values of the weights' type"));
      return std::nullopt;
    }
    stats[i] = std::move(*values);
  }
  std::vector<double> conv_bias(static_cast<size_t>(channels), 0.0);
  if (conv.num_inputs() > 2 && conv.input(2)) {
    auto b = GetConstant(conv.input(2));
    auto values = b ? b->AsDoubles() : std::nullopt;
    if (!b || b->data_type != w.data_type || !values || static_cast<int64_t>(values->size()) != channels) {
      Refuse(why, "the Conv bias is not a constant of the weights' type and channel count");
      return std::nullopt;
    }
    conv_bias = std::move(*values);
  }
  const Attribute* eps_attr = bn.FindAttribute("epsilon");
  const double eps = eps_attr ? eps_attr->f(1e-5f) : 1e-5;
  auto weights = w.AsDoubles();
  std::vector<double> scale(static_cast<size_t>(channels)), new_bias(static_cast<size_t>(channels));
  for (size_t m_i = 0; m_i < static_cast<size_t>(channels); ++m_i) {
    scale[m_i] = stats[0][m_i] / std::sqrt(stats[3][m_i] + eps);
    new_bias[m_i] = (conv_bias[m_i] - stats[2][m_i]) * scale[m_i] + stats[1][m_i];
  }
  // W is [rows, cols, k...]: Conv's rows are output channels; ConvTranspose's rows are input
  // channels and its cols the output channels of their group.
  const size_t rows = static_cast<size_t>(w.dims[0]), cols = static_cast<size_t>(w.dims[1]);
  const size_t kernel = weights->size() / (rows * cols);
  const size_t rows_per_group = rows / static_cast<size_t>(group);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < cols; ++c) {
      const size_t out_channel = transposed ? (r / rows_per_group) * cols + c : r;
      double* first = weights->data() + (r * cols + c) * kernel;
      for (size_t k = 0; k < kernel; ++k) first[k] *= scale[out_channel];
    }
  }
  Folded folded;
  folded.weight.mutable_meta().set_data_type(w.data_type);
  for (int64_t d : w.dims) folded.weight.mutable_meta().add_dims(d);
  folded.weight.SetRawBytes(EncodeFloatOrDouble(*weights, w.data_type));
  folded.bias.mutable_meta().set_data_type(w.data_type);
  folded.bias.mutable_meta().add_dims(channels);
  folded.bias.SetRawBytes(EncodeFloatOrDouble(new_bias, w.data_type));
  return folded;
}

std::unique_ptr<RewriteRule> ConvBnRule(const std::string& op) {
  const bool transposed = op == "ConvTranspose";
  const std::string name = transposed ? "fuse-convtranspose-bn" : "fuse-conv-bn";
  Pattern p(name);
  auto conv = p.Op(op, {p.Any("x"), p.Const("w")}).AnyNumberOfInputs().Capture("conv");
  auto bn = p.Op("BatchNormalization", {conv, p.Const("scale"), p.Const("bias"), p.Const("mean"), p.Const("var")})
                .Capture("bn");
  int root = bn.id();
  // The plan is the folded weight and bias: computed once, in the check.
  auto check = [transposed](const Match& m) -> Verdict<Folded> {
    std::string why;
    std::optional<Folded> folded = Fold(m, transposed, &why);
    return Verdict<Folded>::From(std::move(folded), std::move(why));
  };
  auto replace = [op](const Match& m, Folded folded, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
    const Node& conv = *m.node("conv");
    std::vector<onnx::AttributeProto> attributes;
    for (const Attribute& a : conv.attributes()) attributes.push_back(a.proto());
    OS_ASSIGN_OR_RETURN(Value * w, rw.Constant(std::move(folded.weight), "weight"));
    OS_ASSIGN_OR_RETURN(Value * b, rw.Constant(std::move(folded.bias), "bias"));
    std::vector<Value*> outputs(m.node("bn")->num_outputs(), nullptr);
    outputs[0] = rw.Op(op, {m.value("x"), w, b}, std::move(attributes));
    return outputs;
  };
  return std::make_unique<PatternRule<Folded>>(name, std::move(p), root, check, replace);
}

class FuseConvBnPass : public PatternPass {
 public:
  FuseConvBnPass() {
    AddRule(ConvBnRule("Conv"));
    AddRule(ConvBnRule("ConvTranspose"));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseConvBnPass(const PassOptions&) { return std::make_unique<FuseConvBnPass>(); }

}  // namespace onnxsurgeon::passes
