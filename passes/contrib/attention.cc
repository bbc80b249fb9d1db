// Attention (com.microsoft): packed Q/K/V projection and multi-head attention, as
// onnxruntime's CPU kernel computes it, in standard ops (opset >= 13):
//   qkv = MatMul(input, weights) (+ bias)     weights [D_in, Dq + Dk + Dv], columns Q, K, V
//   q, k, v = Split(qkv, [Dq, Dk, Dv]), heads split to [B, N, S, H] (constant weights: one
//     MatMul per part on Slices of them, Projections below)
//   past [2, B, N, P, H]: k = Concat(past[0], k), v = Concat(past[1], v) along the sequence;
//   present = Concat(Unsqueeze(k, 0), Unsqueeze(v, 0))
//   output = softmax(scale q k^T + mask (+ attention_bias)) v, heads merged
//     (passes/contrib/attention_core.h; scale default 1 / sqrt(Dq / num_heads))
//   Given:   %y = Attention<num_heads=2>(%x, %w, %b, %mask)          x [B, S, 8], w [8, 24]
//   Result:  %qkv = Add(MatMul(%x, %w), %b)   %q, %k, %v = Split(%qkv, [8, 8, 8])
//            %y = Reshape(Transpose(MatMul(Softmax(Add(Mul(MatMul(%q', Transpose(%k')), s), %m)), %v')), [0, 0, -1])
// mask_index: [B, T] or [B, S, T] of 0/1, [B] lengths, [2B] ends and starts (with a
// dynamic batch size, told apart at run time by the mask's length).
// Refused: do_rotary, past_present_share_buffer, the past_sequence_length input, a 4-D
// (Megatron) or a static [3B + 2] mask_index, hidden sizes that are not static, opset < 13.
// QAttention (the quantizer's, int8/uint8 input and weights): the same attention, its
// projection as onnxruntime computes it, the quantization kept:
//   qkv = Cast(MatMulInteger(input, weight, input_zero_point, weight_zero_point), float)
//         * (input_scale * weight_scale) + bias        (weight_scale scalar or per column)
// (inputs: input, weight, bias, input_scale, weight_scale, mask_index, input_zero_point,
// weight_zero_point, past; no attention_bias). Refused besides: an output that is not float.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "passes/contrib/attention_core.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

// What the attention rules check alike: the element type, the opset.
std::string WhyNotLowerable(const Node& node, int32_t type) {
  if (node.graph()->OpsetVersion("") < 13) return "opset < 13 (Softmax over the last axis, Unsqueeze with axes inputs)";
  if (type == 0) return "the element type of the input is unknown (run infer-shapes first)";
  if (!lowering::IsFloatType(type)) return absl::StrCat("the input is ", TypeName(type), ", not a float type");
  return "";
}

// The mask's form from its shape (`batch`: the static batch size, -1 when not static).
std::optional<MaskKind> MaskKindOf(const std::optional<std::vector<int64_t>>& dims, int64_t batch, std::string* why) {
  if (!dims) return Refuse(why, "the rank of the mask is unknown"), std::nullopt;
  switch (dims->size()) {
    case 2: return MaskKind::kRaw2D;
    case 3: return MaskKind::kRaw3D;
    case 1:
      if (batch > 0 && (*dims)[0] == batch) return MaskKind::kLengths;
      if (batch > 0 && (*dims)[0] == 2 * batch) return MaskKind::kEndsStarts;
      if (batch > 0 && (*dims)[0] == 3 * batch + 2)
        return Refuse(why, "a [3B + 2] mask (cumulative lengths, for onnxruntime's GPU kernels) is not lowered"),
               std::nullopt;
      if (batch > 0 && (*dims)[0] > 0)
        return Refuse(why, absl::StrCat("a 1-D mask of ", (*dims)[0], " for a batch of ", batch)), std::nullopt;
      return MaskKind::kOneD;  // [B] or [2B], told apart at run time
    default: return Refuse(why, absl::StrCat("a ", dims->size(), "-D mask is not lowered")), std::nullopt;
  }
}

float DefaultScale(const Node& node, int64_t head_size) {
  const float scale = FloatAttr(node, "scale", 0.0f);
  return scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(head_size));
}

// A packed projection [.., Dq + Dk + Dv] split into Q, K and V.
std::vector<Value*> SplitQkv(Value* qkv, const std::vector<int64_t>& hidden, Rewriter& rw) {
  Node* split = rw.Create("Split", {qkv, rw.Int64s(hidden)}, {Rewriter::AttrInt("axis", -1)}, 3);
  return {split->output(0), split->output(1), split->output(2)};
}

// The Q, K and V projections. Weights given as initializers (what the optimizer writes):
// one MatMul (+ Add) per part on its columns, Slice(%w, [a], [b], [1]) (and of %b), the form
// exporters write, which converters fold and whose attention fusions expect (rknn-toolkit2
// 2.5 fails on a packed MatMul split afterwards: 'assignment destination is read-only', in
// its multi-head attention fusion; tests/backends). Else one MatMul, then Split.
//   Given:   %y = Attention(%x, %w, %b, ...)        w [8, 24] an initializer
//   Result:  %q = Add(MatMul(%x, Slice(%w, [0], [8], [1])), Slice(%b, [0], [8], [0])), %k, %v alike
std::vector<Value*> Projections(Node* node, const std::vector<int64_t>& hidden, Rewriter& rw) {
  Value* w = node->input(1);
  Value* b = node->input(2);
  if (w->IsInitializer() && (!b || b->IsInitializer())) {
    std::vector<Value*> parts;
    int64_t start = 0;
    for (int64_t size : hidden) {
      Value* starts = rw.Int64s({start});
      Value* ends = rw.Int64s({start + size});
      Value* part = rw.Op("MatMul", {node->input(0), rw.Op("Slice", {w, starts, ends, rw.Int64s({1})})});
      if (b) part = rw.Op("Add", {part, rw.Op("Slice", {b, starts, ends, rw.Int64s({0})})});
      parts.push_back(part);
      start += size;
    }
    return parts;
  }
  Value* qkv = rw.Op("MatMul", {node->input(0), w});
  if (b) qkv = rw.Op("Add", {qkv, b});
  return SplitQkv(qkv, hidden, rw);
}

// ---- Attention ------------------------------------------------------------------------

// Where the operands are: QAttention has its quantization inputs among Attention's.
struct AttentionInputs {
  int mask, past, attention_bias;  // -1: the op has none
  size_t max_inputs;
};
constexpr AttentionInputs kAttentionInputs{3, 4, 5, 7};
constexpr AttentionInputs kQAttentionInputs{5, 8, -1, 9};

struct AttentionPlan {
  int64_t num_heads;
  std::vector<int64_t> hidden;  // Dq, Dk, Dv
  MaskKind mask_kind;
  bool has_past;
  float scale;
  int32_t type;
};

class AttentionRule : public NodeRule<AttentionPlan> {
 public:
  explicit AttentionRule(bool quantized)
      : NodeRule(quantized ? "lower-qattention" : "lower-attention", quantized ? "QAttention" : "Attention", kMsDomain),
        quantized_(quantized),
        at_(quantized ? kQAttentionInputs : kAttentionInputs) {}

 protected:
  Verdict<AttentionPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1)) return Refuse("lacks input or weights");
    if (node->num_inputs() > at_.max_inputs || node->num_outputs() > 2)
      return Refuse(absl::StrCat("more than ", at_.max_inputs, " inputs or 2 outputs"));
    if (IntAttr(*node, "do_rotary", 0) != 0) return Refuse("do_rotary=1 is not lowered");
    if (IntAttr(*node, "past_present_share_buffer", 0) != 0)
      return Refuse("past_present_share_buffer=1 is not lowered");
    if (!quantized_ && node->input(6))
      return Refuse("the past_sequence_length input (a shared past buffer) is not lowered");
    const TypeFacts& types = facts.Get<TypeFacts>();
    AttentionPlan plan{};
    plan.type =
        quantized_ ? ElemTypeOfAny(*node, {2, 3}, {0, 1}, types) : ElemTypeOfAny(*node, {0, 1, 2, 4, 5}, {0, 1}, types);
    if (std::string why = WhyNotLowerable(*node, plan.type); !why.empty()) return Refuse(why);
    if (quantized_ && plan.type != onnx::TensorProto::FLOAT)
      return Refuse(absl::StrCat("the output is ", TypeName(plan.type), ", not float"));
    if (quantized_ && (!node->input(3) || !node->input(4))) return Refuse("lacks input_scale or weight_scale");
    plan.num_heads = IntAttr(*node, "num_heads", 0);
    if (plan.num_heads <= 0) return Refuse("num_heads is not positive");
    if (const Attribute* sizes = node->FindAttribute("qkv_hidden_sizes")) {
      plan.hidden = sizes->ints();
    } else {
      std::optional<std::vector<int64_t>> w = types.Dims(node->input(1));
      if (!w || w->size() != 2 || (*w)[1] <= 0) return Refuse("the weights' second dimension is not static");
      if ((*w)[1] % 3 != 0)
        return Refuse(absl::StrCat("the weights' second dimension ", (*w)[1], " is not 3 hidden sizes"));
      plan.hidden = {(*w)[1] / 3, (*w)[1] / 3, (*w)[1] / 3};
    }
    if (plan.hidden.size() != 3 || plan.hidden[0] != plan.hidden[1])
      return Refuse(absl::StrCat("qkv_hidden_sizes [", absl::StrJoin(plan.hidden, ", "), "] is not [D, D, Dv]"));
    for (int64_t d : plan.hidden)
      if (d <= 0 || d % plan.num_heads != 0)
        return Refuse(absl::StrCat("hidden size ", d, " is not a positive multiple of num_heads ", plan.num_heads));
    plan.has_past = node->input(at_.past) != nullptr;
    if (plan.has_past && plan.hidden[2] != plan.hidden[0]) return Refuse("past with a V hidden size unlike Q's");
    if (plan.has_past && types.Rank(node->input(at_.past)) != 5) return Refuse("past's rank is unknown or not 5");
    plan.mask_kind = MaskKind::kNone;
    if (Value* mask = node->input(at_.mask)) {
      std::optional<std::vector<int64_t>> x = types.Dims(node->input(0));
      std::string why;
      std::optional<MaskKind> kind = MaskKindOf(types.Dims(mask), x && !x->empty() ? (*x)[0] : -1, &why);
      if (!kind) return Refuse(absl::StrCat("mask_index: ", why));
      plan.mask_kind = *kind;
    }
    plan.scale = DefaultScale(*node, plan.hidden[0] / plan.num_heads);
    return plan;
  }

  Status Replace(Node* node, AttentionPlan plan, Rewriter& rw) const override {
    std::vector<Value*> parts;
    if (quantized_) {  // onnxruntime's int32 GEMM, scaled by input_scale * weight_scale
      Value* qkv = rw.Op("MatMulInteger", {node->input(0), node->input(1), node->input(6), node->input(7)});
      qkv = rw.Op("Cast", {qkv}, {Rewriter::AttrInt("to", plan.type)});
      qkv = rw.Op("Mul", {qkv, rw.Op("Mul", {node->input(3), node->input(4)})});
      if (Value* bias = node->input(2)) qkv = rw.Op("Add", {qkv, bias});
      parts = SplitQkv(qkv, plan.hidden, rw);
    } else {
      parts = Projections(node, plan.hidden, rw);
    }
    AttentionSpec spec;
    spec.q = SplitHeads(rw, parts[0], plan.num_heads);
    spec.k = SplitHeads(rw, parts[1], plan.num_heads);
    spec.v = SplitHeads(rw, parts[2], plan.num_heads);
    if (plan.has_past) {  // [2, B, N, P, H]: keys, then values
      Node* past = rw.Create("Split", {node->input(at_.past), rw.Int64s({1, 1})}, {Rewriter::AttrInt("axis", 0)}, 2);
      auto cat = [&](Value* before, Value* now) {
        return rw.Op("Concat", {rw.Op("Squeeze", {before, rw.Int64s({0})}), now}, {Rewriter::AttrInt("axis", 2)});
      };
      spec.k = cat(past->output(0), spec.k);
      spec.v = cat(past->output(1), spec.v);
    }
    Value* present = nullptr;
    if (OutputUsed(*node, 1))
      present =
          rw.Op("Concat", {rw.Op("Unsqueeze", {spec.k, rw.Int64s({0})}), rw.Op("Unsqueeze", {spec.v, rw.Int64s({0})})},
                {Rewriter::AttrInt("axis", 0)});
    spec.mask = node->input(at_.mask);
    spec.mask_kind = plan.mask_kind;
    spec.attention_bias = at_.attention_bias >= 0 ? node->input(at_.attention_bias) : nullptr;
    spec.causal = IntAttr(*node, "unidirectional", 0) != 0;
    spec.scale = plan.scale;
    spec.mask_filter_value = FloatAttr(*node, "mask_filter_value", -10000.0f);
    spec.type = plan.type;
    OS_ASSIGN_OR_RETURN(Value * y, EmitAttention(rw, spec));
    std::vector<Value*> out = {y, present};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }

 private:
  bool quantized_;
  AttentionInputs at_;
};

// ---- MultiHeadAttention ----------------------------------------------------------------

enum class MhaForm {
  kSeparate,   // query [B, S, D], key [B, L, D], value [B, L, Dv]
  kPackedQkv,  // query [B, S, N, 3, H], no key or value
  kPackedKv,   // query [B, S, D], key [B, L, N, 2, H], no value
  kHeadsKv,    // query [B, S, D], key and value already [B, N, L, H] (no bias)
};

struct MhaPlan {
  MhaForm form;
  int64_t num_heads;
  std::vector<int64_t> bias_sizes;  // D, D, Dv when there is a bias
  MaskKind mask_kind;
  float scale;
  int32_t type;
};

class MultiHeadAttentionRule : public NodeRule<MhaPlan> {
 public:
  MultiHeadAttentionRule() : NodeRule("lower-multi-head-attention", "MultiHeadAttention", kMsDomain) {}

 protected:
  Verdict<MhaPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0)) return Refuse("lacks query");
    if (node->num_inputs() > 10 || node->num_outputs() > 4) return Refuse("more than 10 inputs or 4 outputs");
    if (node->input(8)) return Refuse("the past_sequence_length input (a shared past buffer) is not lowered");
    if (node->input(9)) return Refuse("cache_indirection (beam search) is not lowered");
    if (OutputUsed(*node, 3)) return Refuse("its qk output is read");
    if ((node->input(6) == nullptr) != (node->input(7) == nullptr)) return Refuse("past_key without past_value");
    const TypeFacts& types = facts.Get<TypeFacts>();
    MhaPlan plan{};
    plan.type = ElemTypeOfAny(*node, {0, 1, 2, 3, 5, 6, 7}, {0, 1, 2}, types);
    if (std::string why = WhyNotLowerable(*node, plan.type); !why.empty()) return Refuse(why);
    plan.num_heads = IntAttr(*node, "num_heads", 0);
    if (plan.num_heads <= 0) return Refuse("num_heads is not positive");
    std::optional<std::vector<int64_t>> q = types.Dims(node->input(0));
    const int64_t k_rank = node->input(1) ? types.Rank(node->input(1)) : 0;
    const int64_t v_rank = node->input(2) ? types.Rank(node->input(2)) : 0;
    if (!q || (k_rank < 0) || (v_rank < 0)) return Refuse("the rank of query, key or value is unknown");
    int64_t head_size = -1;
    if (q->size() == 5 && k_rank == 0 && v_rank == 0) {
      plan.form = MhaForm::kPackedQkv;
      head_size = (*q)[4];
    } else if (q->size() == 3 && k_rank == 5 && v_rank == 0) {
      plan.form = MhaForm::kPackedKv;
    } else if (q->size() == 3 && k_rank == 3 && v_rank == 3) {
      plan.form = MhaForm::kSeparate;
    } else if (q->size() == 3 && k_rank == 4 && v_rank == 4) {
      plan.form = MhaForm::kHeadsKv;
    } else {
      return Refuse(absl::StrCat("query, key, value of ranks ", q->size(), ", ", k_rank, ", ", v_rank,
                                 " are not a form onnxruntime defines"));
    }
    if (q->size() == 3 && (*q)[2] > 0) {
      if ((*q)[2] % plan.num_heads != 0) return Refuse("the hidden size is not a multiple of num_heads");
      head_size = (*q)[2] / plan.num_heads;
    }
    if (plan.form != MhaForm::kSeparate && node->input(3))
      return Refuse("a bias with packed or per-head key/value is not lowered");
    if (plan.form == MhaForm::kHeadsKv && node->input(6)) return Refuse("past_key with per-head key/value");
    if (node->input(3)) {
      std::optional<std::vector<int64_t>> v = types.Dims(node->input(2));
      if (head_size <= 0 || !v || (*v)[2] <= 0) return Refuse("a bias with hidden sizes that are not static");
      plan.bias_sizes = {(*q)[2], (*q)[2], (*v)[2]};
    }
    plan.mask_kind = MaskKind::kNone;
    if (Value* mask = node->input(4)) {
      std::string why;
      std::optional<MaskKind> kind = MaskKindOf(types.Dims(mask), (*q)[0], &why);
      if (!kind) return Refuse(absl::StrCat("key_padding_mask: ", why));
      plan.mask_kind = *kind;
    }
    if (FloatAttr(*node, "scale", 0.0f) == 0.0f && head_size <= 0) return Refuse("the head size is not static");
    plan.scale = DefaultScale(*node, head_size);
    return plan;
  }

  Status Replace(Node* node, MhaPlan plan, Rewriter& rw) const override {
    const int64_t n = plan.num_heads;
    // One of `packed`'s [B, L, N, i, H] slices, as [B, N, L, H].
    auto unpack = [&](Value* packed, int64_t i) {
      Value* one = rw.Op("Slice", {packed, rw.Int64s({i}), rw.Int64s({i + 1}), rw.Int64s({3})});
      Value* heads = rw.Op("Squeeze", {one, rw.Int64s({3})});
      return rw.Op("Transpose", {heads}, {Rewriter::AttrInts("perm", {0, 2, 1, 3})});
    };
    Value* q = node->input(0);
    Value* k = node->input(1);
    Value* v = node->input(2);
    AttentionSpec spec;
    switch (plan.form) {
      case MhaForm::kPackedQkv:
        spec.q = unpack(q, 0);
        spec.k = unpack(q, 1);
        spec.v = unpack(q, 2);
        break;
      case MhaForm::kPackedKv:
        spec.q = SplitHeads(rw, q, n);
        spec.k = unpack(k, 0);
        spec.v = unpack(k, 1);
        break;
      case MhaForm::kHeadsKv:
        spec.q = SplitHeads(rw, q, n);
        spec.k = k;
        spec.v = v;
        break;
      case MhaForm::kSeparate:
        if (Value* bias = node->input(3)) {
          Node* split = rw.Create("Split", {bias, rw.Int64s(plan.bias_sizes)}, {Rewriter::AttrInt("axis", 0)}, 3);
          q = rw.Op("Add", {q, split->output(0)});
          k = rw.Op("Add", {k, split->output(1)});
          v = rw.Op("Add", {v, split->output(2)});
        }
        spec.q = SplitHeads(rw, q, n);
        spec.k = SplitHeads(rw, k, n);
        spec.v = SplitHeads(rw, v, n);
        break;
    }
    if (node->input(6)) {
      spec.k = rw.Op("Concat", {node->input(6), spec.k}, {Rewriter::AttrInt("axis", 2)});
      spec.v = rw.Op("Concat", {node->input(7), spec.v}, {Rewriter::AttrInt("axis", 2)});
    }
    spec.mask = node->input(4);
    spec.mask_kind = plan.mask_kind;
    spec.attention_bias = node->input(5);
    spec.causal = IntAttr(*node, "unidirectional", 0) != 0;
    spec.scale = plan.scale;
    spec.mask_filter_value = FloatAttr(*node, "mask_filter_value", -10000.0f);
    spec.type = plan.type;
    OS_ASSIGN_OR_RETURN(Value * y, EmitAttention(rw, spec));
    std::vector<Value*> out = {y, OutputUsed(*node, 1) ? spec.k : nullptr, OutputUsed(*node, 2) ? spec.v : nullptr};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }
};

}  // namespace

std::vector<ContribRule> MakeAttentionRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"Attention", std::make_unique<AttentionRule>(false)});
  rules.push_back({"QAttention", std::make_unique<AttentionRule>(true)});
  rules.push_back({"MultiHeadAttention", std::make_unique<MultiHeadAttentionRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
