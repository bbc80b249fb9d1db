// split-grouped-convtranspose: writes a grouped ConvTranspose (group G > 1) as a Split of
// its input into G channel blocks, one ConvTranspose (group 1) per block, and a Concat of
// their outputs, for converters that mistranslate grouped ConvTranspose: onnx2tf 1.29.24
// splits the input on its last TensorFlow axis, assuming NWC/NHWC, and refuses the model
// when the input reaches it channels-first ('Dimension size must be evenly divisible by 64
// but is 23', the Kokoro predictor's AdaIN upsampling after a Transpose; measured here,
// targets/probes/tflite_models.py). Its group-1 path finds the layout by itself.
//
// Exact: by the ONNX spec, output channels [g*M/G, (g+1)*M/G) of a grouped ConvTranspose
// are the ConvTranspose (group 1) of input channels [g*C/G, (g+1)*C/G) with weight rows
// W[g*C/G : (g+1)*C/G] (W is [C, M/G, k...]) plus bias B[g*M/G : (g+1)*M/G]: the same
// products and sums, per block. Every other attribute (kernel_shape, strides, pads,
// dilations, output_padding, output_shape, auto_pad) holds per block unchanged. Weights
// and bias must be constants (their blocks are sliced here); C must be a multiple of G.
// Split's sizes are an attribute below opset 13 and an input from 13.
//
// Options: none.
//
// Given:  %y = ConvTranspose<group=2, strides=[2]>(%x, %w, %b)   x: float[1,4,5], w: float[4,1,3]
// Result: %x0, %x1 = Split<axis=1>(%x, [2,2])
//         %y0 = ConvTranspose<strides=[2]>(%x0, %w[0:2], %b[0:1])
//         %y1 = ConvTranspose<strides=[2]>(%x1, %w[2:4], %b[1:2])
//         %y = Concat<axis=1>(%y0, %y1)
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct GroupPlan {
  int64_t groups = 0;
  ConstantData weight;
  std::optional<ConstantData> bias;
};

// Rows [begin, begin+count) of `c` along axis 0 (contiguous in row-major order).
Tensor Rows(const ConstantData& c, int64_t begin, int64_t count) {
  const size_t elem = c.raw.size() / static_cast<size_t>(c.num_elements());
  int64_t row = 1;
  for (size_t i = 1; i < c.dims.size(); ++i) row *= c.dims[i];
  const size_t row_bytes = static_cast<size_t>(row) * elem;
  Tensor t;
  t.mutable_meta().set_data_type(c.data_type);
  t.mutable_meta().add_dims(count);
  for (size_t i = 1; i < c.dims.size(); ++i) t.mutable_meta().add_dims(c.dims[i]);
  t.SetRawBytes(
      std::string(c.raw.substr(static_cast<size_t>(begin) * row_bytes, static_cast<size_t>(count) * row_bytes)));
  return t;
}

class SplitGroupedConvTransposePass : public PatternPass {
 public:
  SplitGroupedConvTransposePass() {
    pattern::Pattern p("grouped-convtranspose");
    pattern::OpRef ct = p.Op("ConvTranspose", {p.Any("x"), p.Any("w")})
                            .AnyNumberOfInputs()
                            .Attr("group",
                                  [](const Attribute* a, std::string* why) {
                                    if (a && a->is_ref()) {
                                      if (why) *why = "group is a function attribute reference";
                                      return false;
                                    }
                                    if (a && a->proto().i() != 1) return true;
                                    if (why) *why = "group is 1";
                                    return false;
                                  })
                            .Capture("ct");
    AddRule(std::make_unique<PatternRule<GroupPlan>>(
        "grouped-convtranspose", std::move(p), ct.id(),
        [](const pattern::Match& m) -> Verdict<GroupPlan> {
          const Node* n = m.node("ct");
          GroupPlan plan;
          plan.groups = n->FindAttribute("group")->proto().i();
          if (plan.groups < 1) return Refuse(absl::StrCat("group=", plan.groups, " is not positive"));
          auto w = GetConstant(m.value("w"));
          if (!w) return Refuse("its weights are computed at run time");
          if (w->dims.size() < 3) return Refuse(absl::StrCat("its weights have rank ", w->dims.size(), ", below 3"));
          if (w->num_elements() <= 0) return Refuse("its weights are empty");
          if (w->dims[0] % plan.groups != 0)
            return Refuse(
                absl::StrCat("its ", w->dims[0], " input channels are not a multiple of group=", plan.groups));
          plan.weight = *std::move(w);
          if (n->num_inputs() >= 3 && n->input(2)) {
            auto b = GetConstant(n->input(2));
            if (!b) return Refuse("its bias is computed at run time");
            const int64_t m_total = plan.weight.dims[1] * plan.groups;
            if (b->dims.size() != 1 || b->dims[0] != m_total)
              return Refuse(absl::StrCat("its bias is not a vector of its ", m_total, " output channels"));
            plan.bias = *std::move(b);
          }
          return plan;
        },
        [](const pattern::Match& m, GroupPlan plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          const Node* n = m.node("ct");
          const int64_t g = plan.groups;
          const int64_t c = plan.weight.dims[0] / g;  // input channels per block
          const int64_t mo = plan.weight.dims[1];     // output channels per block
          std::vector<onnx::AttributeProto> attrs;
          for (const Attribute& a : n->attributes())
            if (a.name() != "group") attrs.push_back(a.proto());
          std::vector<onnx::AttributeProto> split_attrs = {Rewriter::AttrInt("axis", 1)};
          std::vector<Value*> split_inputs = {m.value("x")};
          const std::vector<int64_t> sizes(static_cast<size_t>(g), c);
          if (n->graph()->OpsetVersion("") >= 13) split_inputs.push_back(rw.Int64s(sizes));
          else split_attrs.push_back(Rewriter::AttrInts("split", sizes));
          Node* split = rw.Create("Split", std::move(split_inputs), std::move(split_attrs), static_cast<int>(g));
          std::vector<Value*> blocks;
          for (int64_t i = 0; i < g; ++i) {
            OS_ASSIGN_OR_RETURN(Value * w, rw.Constant(Rows(plan.weight, i * c, c), "weight"));
            std::vector<Value*> inputs = {split->output(static_cast<size_t>(i)), w};
            if (plan.bias) {
              OS_ASSIGN_OR_RETURN(Value * b, rw.Constant(Rows(*plan.bias, i * mo, mo), "bias"));
              inputs.push_back(b);
            }
            blocks.push_back(rw.Op("ConvTranspose", std::move(inputs), attrs));
          }
          return std::vector<Value*>{rw.Op("Concat", std::move(blocks), {Rewriter::AttrInt("axis", 1)})};
        }));
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateSplitGroupedConvTransposePass(const PassOptions&) {
  return std::make_unique<SplitGroupedConvTransposePass>();
}

}  // namespace onnxsurgeon::passes
