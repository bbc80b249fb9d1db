// decompose-dynamic-quantize: writes DynamicQuantizeLinear (what onnxruntime's
// quantize_dynamic puts before every MatMulInteger/ConvInteger) in standard ops, for runtimes
// that refuse it (rknn-toolkit2: "will cause the graph to be a dynamic graph").
//
// Exact against onnxruntime's kernel (GetQuantizationParameter + MlasQuantizeLinear), which
// is what the schema's function body computes except for one case: when x's range includes
// only 0 (all zeros, or empty) the function body divides 0 by 0, onnxruntime returns scale 1
// and zero point 0; the 1 - Sign(range) below does the same. Each step is the kernel's own float32
// operation, in its order, so the results are element-exact (tests/python/
// test_decompose_dynamic_quantize.py compares y, y_scale and y_zero_point with onnxruntime's
// DynamicQuantizeLinear on random and edge inputs):
//   scale = (max(0, max(x)) - min(0, min(x))) / 255, or 1 when that range is 0
//   zero point = round_half_to_even(clip(0 - min(0, min(x)) / scale, 0, 255))
//   y = QuantizeLinear(x, scale, zero point)      (x / scale rounded half to even, + zp, saturated)
// x must be float32 (the op's only type); an unknown type is refused.
// Later passes of the same pipeline may not bring DynamicQuantizeLinear back (ForbiddenOps).
//
// to=float (for runtimes that also refuse QuantizeLinear with a computed scale, rknn-toolkit2
// and nncase 1.9, or MatMulInteger/ConvInteger: targets/probes/dynamic_quant_models.txt):
// the quantization and the MatMulInteger/ConvInteger nodes reading it in float arithmetic on
// the same integers. Clip(Round(x / scale) + zp, 0, 255) is QuantizeLinear's integer (an
// integer bound clamps alike before and after rounding), and a MatMul/Conv of (q - zp) by
// the float weights W - w_zp sums integers exactly while 255 * sum |W - w_zp| of every
// output stays within 2^24 (dynamic_quantize_float.h; refused above it, naming the sum).
// The int32 result read by a Cast to float is that Cast's output; other readers get
// Cast(result, int32). Refused when the quantized value has any other reader.
// Exact in float32 only: a runtime computing in fp16 (rknn-toolkit2's simulator) rounds
// x / scale otherwise and cannot hold the sums (measured wrong, so its profile does not plan it).
//
// Given:  %y, %s, %zp = DynamicQuantizeLinear(%x)   %a = MatMulInteger(%y, W, %zp, w_zp)
//         %f = Cast<to=float>(%a)
// Result: (%s, zero point %z as float, as above)   %q = Clip(Add(Round(Div(%x, %s)), %z), 0, 255)
//         %f = MatMul(Sub(%q, %z), W - w_zp as float)     (ConvInteger: Conv, its attributes)
//
// Given:  %y, %s, %zp = DynamicQuantizeLinear(%x)
// Result: %lo = Min(ReduceMin<keepdims=0>(%x), 0)   %hi = Max(ReduceMax<keepdims=0>(%x), 0)
//         %r = Sub(%hi, %lo)    %s = Add(Div(%r, 255), Sub(1, Sign(%r)))      (1 where %r is 0)
//         %zp = Cast<to=uint8>(Round(Clip(Sub(0, Div(%lo, %s)), 0, 255)))
//         %y = QuantizeLinear(%x, %s, %zp)
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/dtypes.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/quantization/dynamic_quantize_float.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct NoPlan {};

// The scale and the zero point (float, before its Cast to uint8) onnxruntime computes.
struct ScaleAndZero {
  Value* scale;
  Value* zero;
};

StatusOr<ScaleAndZero> EmitScaleAndZero(Value* x, Rewriter& rw) {
  OS_ASSIGN_OR_RETURN(Value * zero, rw.ScalarFloat(0.0f));
  OS_ASSIGN_OR_RETURN(Value * one, rw.ScalarFloat(1.0f));
  OS_ASSIGN_OR_RETURN(Value * qmax, rw.ScalarFloat(255.0f));
  // The range always includes 0 (the kernel's min(min, 0), max(max, 0)).
  Value* lo = rw.Op("Min", {rw.Op("ReduceMin", {x}, {Rewriter::AttrInt("keepdims", 0)}), zero});
  Value* hi = rw.Op("Max", {rw.Op("ReduceMax", {x}, {Rewriter::AttrInt("keepdims", 0)}), zero});
  Value* range = rw.Op("Sub", {hi, lo});
  // onnxruntime: scale = max == min ? 1.0f : (max - min) / 255. The range is >= 0, so
  // Sign(range) is 0 or 1 and adding 1 - Sign(range) (0, or 1 where the range is 0) is exact;
  // Where(Equal(range, 0), ...) crashes rknn-toolkit2 2.5 (targets/probes/dynamic_quant_models.txt).
  Value* empty = rw.Op("Sub", {one, rw.Op("Sign", {range})});
  Value* scale = rw.Op("Add", {rw.Op("Div", {range, qmax}), empty});
  Value* initial = rw.Op("Sub", {zero, rw.Op("Div", {lo, scale})});
  return ScaleAndZero{scale, rw.Op("Round", {rw.Op("Clip", {initial, zero, qmax})})};
}

Value* CastTo(Rewriter& rw, Value* v, int32_t type) { return rw.Op("Cast", {v}, {Rewriter::AttrInt("to", type)}); }

class DecomposeDynamicQuantizeRule : public NodeRule<NoPlan> {
 public:
  DecomposeDynamicQuantizeRule() : NodeRule("decompose-dynamic-quantize", "DynamicQuantizeLinear") {}

 protected:
  Verdict<NoPlan> Check(Node* node, RewriteFacts&) const override {
    if (node->num_inputs() != 1 || !node->input(0)) return Refuse("it does not have exactly one input");
    if (node->num_outputs() == 0) return Refuse("it has no outputs");
    const Value* x = node->input(0);
    if (ElementType(x) != onnx::TensorProto::FLOAT) {
      if (ElementType(x) == 0) return Refuse(lowering::WhyNotFloat(*node, x));
      return Refuse(absl::StrCat("'", x->name(), "' has element type ", DataTypeName(ElementType(x)),
                                 ", not float (the only type DynamicQuantizeLinear and onnxruntime's kernel take)"));
    }
    return NoPlan{};
  }

  Status Replace(Node* node, NoPlan, Rewriter& rw) const override {
    Value* x = node->input(0);
    OS_ASSIGN_OR_RETURN(ScaleAndZero sz, EmitScaleAndZero(x, rw));
    Value* zp = CastTo(rw, sz.zero, onnx::TensorProto::UINT8);
    std::vector<Value*> outputs = {rw.Op("QuantizeLinear", {x, sz.scale, zp}), sz.scale, zp};
    outputs.resize(node->num_outputs());
    return rw.ReplaceNode(node, outputs);
  }
};

class FloatDynamicQuantizeRule : public NodeRule<FloatDynamicQuantPlan> {
 public:
  FloatDynamicQuantizeRule() : NodeRule("decompose-dynamic-quantize-float", "DynamicQuantizeLinear") {}

 protected:
  Verdict<FloatDynamicQuantPlan> Check(Node* node, RewriteFacts&) const override {
    std::string why;
    std::optional<FloatDynamicQuantPlan> plan = PlanFloatDynamicQuant(*node, &why);
    if (!plan) return Refuse(why);
    return std::move(*plan);
  }

  Status Replace(Node* node, FloatDynamicQuantPlan plan, Rewriter& rw) const override {
    Value* x = node->input(0);
    OS_ASSIGN_OR_RETURN(ScaleAndZero sz, EmitScaleAndZero(x, rw));
    OS_ASSIGN_OR_RETURN(Value * zero, rw.ScalarFloat(0.0f));
    OS_ASSIGN_OR_RETURN(Value * qmax, rw.ScalarFloat(255.0f));
    // QuantizeLinear's integer, in float, and minus the zero point.
    Value* rounded = rw.Op("Round", {rw.Op("Div", {x, sz.scale})});
    Value* q = rw.Op("Clip", {rw.Op("Add", {rounded, sz.zero}), zero, qmax});
    Value* centered = rw.Op("Sub", {q, sz.zero});
    for (const IntegerConsumer& c : plan.consumers) OS_RETURN_IF_ERROR(ReplaceConsumer(c, centered, rw));
    // The consumers are gone; a zero point read elsewhere stays uint8.
    Value* zp = node->output(2)->HasUsers() ? CastTo(rw, sz.zero, onnx::TensorProto::UINT8) : nullptr;
    return rw.ReplaceNode(node, {nullptr, node->output(1)->HasUsers() ? sz.scale : nullptr, zp});
  }

 private:
  static Status ReplaceConsumer(const IntegerConsumer& c, Value* centered, Rewriter& rw) {
    OS_ASSIGN_OR_RETURN(Tensor wt, Tensor::FromDoubles(onnx::TensorProto::FLOAT, c.dims, c.weight));
    OS_ASSIGN_OR_RETURN(Value * w, rw.Constant(std::move(wt), "weight"));
    Value* acc;
    if (c.node->Is("ConvInteger")) {
      std::vector<onnx::AttributeProto> attrs;
      for (const Attribute& a : c.node->attributes()) attrs.push_back(a.proto());
      acc = rw.Op("Conv", {centered, w}, std::move(attrs));
    } else {
      acc = rw.Op("MatMul", {centered, w});
    }
    // The int32 result's Casts to float read the float result itself.
    Value* result = c.node->output(0);
    std::vector<Node*> float_casts;
    for (const Use& use : result->uses())
      if (use.node->Is("Cast") && use.node->GetInt("to", 0) == onnx::TensorProto::FLOAT)
        float_casts.push_back(use.node);
    for (Node* cast : float_casts) OS_RETURN_IF_ERROR(rw.ReplaceNode(cast, {acc}));
    return rw.ReplaceNode(c.node, {result->HasUsers() ? CastTo(rw, acc, onnx::TensorProto::INT32) : nullptr});
  }
};

class DecomposeDynamicQuantizePass : public PatternPass {
 public:
  explicit DecomposeDynamicQuantizePass(bool to_float) {
    if (to_float) {
      AddRule(std::make_unique<FloatDynamicQuantizeRule>());
    } else {
      AddRule(std::make_unique<DecomposeDynamicQuantizeRule>());
    }
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid("DynamicQuantizeLinear", "decompose-dynamic-quantize");
    lowering::InferTypesIfNeeded(model, "DynamicQuantizeLinear");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDecomposeDynamicQuantizePass(const PassOptions& o) {
  return std::make_unique<DecomposeDynamicQuantizePass>(o.String("to") == "float");
}

}  // namespace onnxsurgeon::passes
