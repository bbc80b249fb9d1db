// fold-qdq: folds QuantizeLinear -> DequantizeLinear pairs on constants into the float
// constant they compute. simplify keeps such pairs: a QDQ
// model stays a QDQ model, since QAT and TensorRT-style exports store float weights followed
// by Q -> DQ, and that pair is the weight's quantization, which TensorRT and OpenVINO read.
// This pass is for runtimes that quantize from float themselves or run float: on request.
//
// Rule qdq-pair: DequantizeLinear(QuantizeLinear(w, s1, z1), s2, z2), w a float constant,
// scales and zero points constants -> the constant DQ(Q(w)), computed as onnxruntime does:
// q = saturate(round_half_even(w / s1) + z1) in float, then (q - z2) * s2 in float. The
// quantization's rounding stays in the values (it is what the model computed); only its form
// goes. Per-tensor and per-axis scales (axis attribute); int8, uint8, int16, uint16.
// With weights=true, also rule dequantize-weight: DequantizeLinear(q, s, z) of a constant
// quantized tensor -> its float constant (stored weights become float: 4x the bytes).
// With activations=true, also rule activation-clip: DequantizeLinear(QuantizeLinear(x, s, z),
// s, z) of a computed x, per tensor, the DequantizeLinear the QuantizeLinear's only reader ->
// Clip(x, (qmin - z) * s, (qmax - z) * s): the quantization's saturation kept (a uint8 Q with
// zero point 0 is the Relu quantize_static removed), its rounding dropped, each value moves
// by at most s / 2. Not an equivalence: for backends that quantize from float themselves and
// compute an activation's Q/DQ as the identity (tflite, nncase: targets/probes/qdq_models.txt).
// Refused, with a reason under --debug-patterns: a non-float input or scale, blocked
// quantization (block_size, opset 21), 4-bit and float8 types, a zero or non-finite scale,
// a scale or zero point that is not a constant of the axis' size.
//
// The report gives, before and after: Q and DQ node counts (qdq/Q-before, qdq/DQ-after, ...)
// and the bytes of quantized weights (constants a DequantizeLinear reads as its data).
//   Before:  q = QuantizeLinear(W, s, z)   w = DequantizeLinear(q, s, z)   y = MatMul(x, w)
//   After:   y = MatMul(x, W')   with W' = (saturate(round(W / s) + z) - z) * s
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/inspect/quantization.h"
#include "core/ir/constant.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using Types = onnx::TensorProto;

struct Range {
  double lo, hi;
};
std::optional<Range> QuantRange(int32_t type) {
  switch (type) {
    case Types::INT8: return Range{-128, 127};
    case Types::UINT8: return Range{0, 255};
    case Types::INT16: return Range{-32768, 32767};
    case Types::UINT16: return Range{0, 65535};
    // A bias a quantizer stores as int32 (DequantizeLinear only: QuantizeLinear makes no int32).
    case Types::INT32: return Range{-2147483648.0, 2147483647.0};
    default: return std::nullopt;
  }
}

// Scale and zero point of a Q or DQ node, one per element of `dims` along its axis.
struct Params {
  std::vector<float> scale;
  std::vector<double> zero;
  int64_t axis = -1;  // -1: per tensor
  int32_t qtype = Types::UINT8;
};

std::optional<Params> ReadParams(const Node& n, const std::vector<int64_t>& dims, std::string* why) {
  if (const Attribute* b = n.FindAttribute("block_size"); b && b->proto().i() != 0)
    return Refuse(why, "blocked quantization (block_size)"), std::nullopt;
  if (n.num_inputs() < 2 || !n.input(1)) return Refuse(why, "no scale"), std::nullopt;
  auto s = GetConstant(n.input(1));
  if (!s || s->data_type != Types::FLOAT) return Refuse(why, "the scale is not a float constant"), std::nullopt;
  auto sv = s->AsDoubles();
  if (!sv || sv->empty()) return Refuse(why, "the scale is empty"), std::nullopt;
  Params p;
  for (double v : *sv) {
    if (v == 0 || !std::isfinite(v)) return Refuse(why, "a zero or non-finite scale"), std::nullopt;
    p.scale.push_back(static_cast<float>(v));
  }
  if (n.num_inputs() > 2 && n.input(2)) {
    auto z = GetConstant(n.input(2));
    if (!z) return Refuse(why, "the zero point is not a constant"), std::nullopt;
    if (!QuantRange(z->data_type)) return Refuse(why, "a 4-bit, float8 or other quantized type"), std::nullopt;
    p.qtype = z->data_type;
    auto zv = z->AsDoubles();
    if (!zv || zv->size() != p.scale.size())
      return Refuse(why, "the zero point's size is not the scale's"), std::nullopt;
    p.zero = *zv;
  } else {
    if (const Attribute* t = n.FindAttribute("output_dtype"); t && t->proto().i() != 0) p.qtype = t->proto().i();
    if (!QuantRange(p.qtype)) return Refuse(why, "a 4-bit, float8 or other quantized type"), std::nullopt;
    p.zero.assign(p.scale.size(), 0.0);
  }
  // One scale is per tensor whatever its shape ([1] included, as onnxruntime reads it).
  if (p.scale.size() > 1) {
    int64_t axis = 1;
    if (const Attribute* a = n.FindAttribute("axis")) axis = a->proto().i();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return Refuse(why, "the axis is outside the input's rank"), std::nullopt;
    if (s->dims.size() != 1 || s->dims[0] != dims[static_cast<size_t>(axis)])
      return Refuse(why, "the scale is not one per element of the axis"), std::nullopt;
    p.axis = p.scale.size() > 1 ? axis : -1;
  }
  return p;
}

// The index into Params of element `i` of a tensor of `dims`.
struct AxisIndex {
  int64_t inner = 1, size = 1;
  AxisIndex(const std::vector<int64_t>& dims, int64_t axis) {
    if (axis < 0) return;
    size = dims[static_cast<size_t>(axis)];
    for (size_t k = static_cast<size_t>(axis) + 1; k < dims.size(); ++k) inner *= dims[k];
  }
  size_t operator()(size_t i, const Params& p) const {
    return p.axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % size);
  }
};

double Quantize(float x, const Params& p, size_t k) {
  const Range r = *QuantRange(p.qtype);
  double q = std::nearbyint(x / p.scale[k]) + p.zero[k];  // float division, half to even
  return std::min(r.hi, std::max(r.lo, q));
}

float Dequantize(double q, const Params& p, size_t k) { return static_cast<float>(q - p.zero[k]) * p.scale[k]; }

Tensor FloatTensor(const std::vector<float>& values, const std::vector<int64_t>& dims) {
  Tensor t;
  t.mutable_meta().set_data_type(Types::FLOAT);
  for (int64_t d : dims) t.mutable_meta().add_dims(d);
  std::string raw(values.size() * sizeof(float), '\0');
  std::memcpy(raw.data(), values.data(), raw.size());
  t.SetRawBytes(std::move(raw));
  return t;
}

struct Folded {
  std::vector<float> values;
  std::vector<int64_t> dims;
};

class QdqPair : public NodeRule<Folded> {
 public:
  QdqPair() : NodeRule("fold-qdq/qdq-pair", "DequantizeLinear") {}

 protected:
  Verdict<Folded> Check(Node* dq, RewriteFacts&) const override {
    Node* q = dq->input(0) ? dq->input(0)->producer() : nullptr;
    if (!q || !q->Is("QuantizeLinear") || !CanonicalDomain(q->domain()).empty())
      return Refuse("the data is not a QuantizeLinear's output");
    auto w = q->input(0) ? GetConstant(q->input(0)) : std::nullopt;
    if (!w) return Refuse("the QuantizeLinear's input is not a constant");
    if (w->data_type != Types::FLOAT) return Refuse("the quantized constant is not float");
    std::string why;
    auto qp = ReadParams(*q, w->dims, &why);
    if (!qp) return Refuse(absl::StrCat("QuantizeLinear: ", why));
    auto dp = ReadParams(*dq, w->dims, &why);
    if (!dp) return Refuse(absl::StrCat("DequantizeLinear: ", why));
    if (dp->qtype != qp->qtype) return Refuse("the zero points' types differ");
    auto x = w->AsDoubles();
    if (!x) return Refuse("the constant's elements cannot be read");
    AxisIndex qi(w->dims, qp->axis), di(w->dims, dp->axis);
    Folded f{std::vector<float>(x->size()), w->dims};
    for (size_t i = 0; i < x->size(); ++i)
      f.values[i] = Dequantize(Quantize(static_cast<float>((*x)[i]), *qp, qi(i, *qp)), *dp, di(i, *dp));
    return f;
  }

  Status Replace(Node* dq, Folded plan, Rewriter& rw) const override {
    Node* q = dq->input(0)->producer();
    OS_ASSIGN_OR_RETURN(Value * c, rw.Constant(FloatTensor(plan.values, plan.dims), "dequantized"));
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(dq->output(0), c, GraphOutputs::kKeepNames));
    rw.EraseDead({dq, q});  // the QuantizeLinear stays while another node reads it
    return absl::OkStatus();
  }
};

struct ClipBounds {
  float lo, hi;
};

class ActivationClip : public NodeRule<ClipBounds> {
 public:
  ActivationClip() : NodeRule("fold-qdq/activation-clip", "DequantizeLinear") {}

 protected:
  Verdict<ClipBounds> Check(Node* dq, RewriteFacts&) const override {
    Node* q = dq->input(0) ? dq->input(0)->producer() : nullptr;
    if (!q || !q->Is("QuantizeLinear") || !CanonicalDomain(q->domain()).empty())
      return Refuse("the data is not a QuantizeLinear's output");
    if (!q->input(0) || GetConstant(q->input(0))) return Refuse("the QuantizeLinear's input is a constant (qdq-pair)");
    if (q->output(0)->uses().size() != 1 || q->output(0)->IsGraphOutput())
      return Refuse("the quantized value has other readers than this DequantizeLinear");
    for (const Node* n : {q, dq}) {
      auto scale = n->num_inputs() > 1 && n->input(1) ? GetConstantTypeAndDims(n->input(1)) : std::nullopt;
      int64_t count = 1;
      for (int64_t d : scale ? scale->second : std::vector<int64_t>{}) count *= d;
      if (count > 1) return Refuse("per-axis quantization of an activation");
    }
    std::string why;
    auto qp = ReadParams(*q, {}, &why);
    if (!qp) return Refuse(absl::StrCat("QuantizeLinear: ", why));
    auto dp = ReadParams(*dq, {}, &why);
    if (!dp) return Refuse(absl::StrCat("DequantizeLinear: ", why));
    if (qp->scale.size() != 1 || dp->scale.size() != 1) return Refuse("per-axis quantization of an activation");
    if (qp->qtype != dp->qtype || qp->scale[0] != dp->scale[0] || qp->zero[0] != dp->zero[0])
      return Refuse("the QuantizeLinear's and DequantizeLinear's scale or zero point differ");
    if (dq->graph()->OpsetVersion("") < 11) return Refuse("opset < 11: Clip takes its bounds as inputs from 11");
    const Range r = *QuantRange(qp->qtype);
    return ClipBounds{Dequantize(r.lo, *qp, 0), Dequantize(r.hi, *qp, 0)};
  }

  Status Replace(Node* dq, ClipBounds plan, Rewriter& rw) const override {
    Node* q = dq->input(0)->producer();
    OS_ASSIGN_OR_RETURN(Value * lo, rw.ScalarFloat(plan.lo));
    OS_ASSIGN_OR_RETURN(Value * hi, rw.ScalarFloat(plan.hi));
    Value* clipped = rw.Op("Clip", {q->input(0), lo, hi});
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(dq->output(0), clipped, GraphOutputs::kKeepNames));
    rw.EraseDead({dq, q});
    return absl::OkStatus();
  }
};

class DequantizeWeight : public NodeRule<Folded> {
 public:
  DequantizeWeight() : NodeRule("fold-qdq/dequantize-weight", "DequantizeLinear") {}

 protected:
  Verdict<Folded> Check(Node* dq, RewriteFacts&) const override {
    auto q = dq->input(0) ? GetConstant(dq->input(0)) : std::nullopt;
    if (!q) return Refuse("the data is not a constant");
    std::string why;
    auto dp = ReadParams(*dq, q->dims, &why);
    if (!dp) return Refuse(std::move(why));
    if (q->data_type != dp->qtype) return Refuse("the data's type is not the zero point's");
    auto x = q->AsDoubles();
    if (!x) return Refuse("the constant's elements cannot be read");
    AxisIndex di(q->dims, dp->axis);
    Folded f{std::vector<float>(x->size()), q->dims};
    for (size_t i = 0; i < x->size(); ++i) f.values[i] = Dequantize((*x)[i], *dp, di(i, *dp));
    return f;
  }

  Status Replace(Node* dq, Folded plan, Rewriter& rw) const override {
    OS_ASSIGN_OR_RETURN(Value * c, rw.Constant(FloatTensor(plan.values, plan.dims), "dequantized"));
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(dq->output(0), c, GraphOutputs::kKeepNames));
    rw.EraseDead({dq});
    return absl::OkStatus();
  }
};

class FoldQdqPass : public PatternPass {
 public:
  FoldQdqPass(bool weights, bool activations) {
    AddRule(std::make_unique<QdqPair>());
    if (weights) AddRule(std::make_unique<DequantizeWeight>());
    if (activations) AddRule(std::make_unique<ActivationClip>());
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    const QuantizationStats before = CountQuantization(model);
    OS_ASSIGN_OR_RETURN(PassResult result, PatternPass::Run(model, context));
    const QuantizationStats after = CountQuantization(model);
    if (before.q + before.dq > 0) {
      result.counts["qdq/Q-before"] = before.q;
      result.counts["qdq/Q-after"] = after.q;
      result.counts["qdq/DQ-before"] = before.dq;
      result.counts["qdq/DQ-after"] = after.dq;
      result.counts["qdq/quantized-weight-bytes-before"] = before.weight_bytes;
      result.counts["qdq/quantized-weight-bytes-after"] = after.weight_bytes;
    }
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFoldQdqPass(const PassOptions& o) {
  return std::make_unique<FoldQdqPass>(o.Bool("weights"), o.Bool("activations"));
}

}  // namespace onnxsurgeon::passes
