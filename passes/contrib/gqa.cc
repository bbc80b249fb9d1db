// GroupQueryAttention (com.microsoft): attention with fewer K/V heads than query heads and
// a KV cache, as onnxruntime's CPU kernel computes it, in standard ops (opset >= 13):
//   q, k, v: the inputs (or packed [B, S, D + 2 Dkv], split), heads split; N / kv_num_heads
//   query heads share each K/V head (Tile, Reshape).
//   Each batch's past length: 0 on a first prompt (S == total_sequence_length), else
//   pl = seqlens_k + 1 - S. The cache: past [B, Nkv, P, H] then the new keys, the new ones
//   written at pl (GatherElements over Concat(past, k)); present = its first
//   max(total_sequence_length, P) positions (P + S when the cache is full).
//   Query i of batch b sees key j when j <= pl + i (causal) and j > pl + i -
//   local_window_size (when given: the last local_window_size keys, its own included); the
//   others get the lowest value before Softmax.
//   softcap > 0: scores = softcap * Tanh(scores / softcap) before the mask.
//   do_rotary: Q and the new K rotate as RotaryEmbedding does (rotary.cc), token s of batch
//   b at position pl + s, by cos_cache / sin_cache (rotary_interleaved: channel pairs).
// Refused: position_ids (with do_rotary), smooth_softmax, head_sink, attention_bias, quantized caches
// (k_scale / v_scale, kv_cache_bit_width), q/k norm weights, query_seqlens, qk_output,
// sliding_window_cache, causal=0 with a past, hidden sizes that are not static.
#include "absl/strings/str_cat.h"
#include "passes/contrib/attention_core.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

struct GqaPlan {
  int64_t num_heads, kv_num_heads, head_size;
  bool packed;
  bool has_past;
  bool causal;
  int64_t rotary_half;  // 0: no rotary; else the rotated channels / 2 (cos_cache's width)
  bool interleaved;
  int64_t local_window;
  float scale, softcap;
  int32_t type;
};

class GroupQueryAttentionRule : public NodeRule<GqaPlan> {
 public:
  GroupQueryAttentionRule() : NodeRule("lower-group-query-attention", "GroupQueryAttention", kMsDomain) {}

 protected:
  Verdict<GqaPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(5) || !node->input(6))
      return Refuse("lacks query, seqlens_k or total_sequence_length");
    if (node->num_outputs() > 3) return Refuse("its output_qk is read");
    if (IntAttr(*node, "smooth_softmax", 0) != 0) return Refuse("smooth_softmax=1 is not lowered");
    if (IntAttr(*node, "qk_output", 0) != 0) return Refuse("qk_output is not lowered");
    if (IntAttr(*node, "sliding_window_cache", 0) != 0) return Refuse("sliding_window_cache=1 is not lowered");
    if (node->FindAttribute("kv_cache_bit_width")) return Refuse("a quantized KV cache is not lowered");
    static const char* const kInputs[] = {"cos_cache", "sin_cache", "position_ids",  "attention_bias", "head_sink",
                                          "k_scale",   "v_scale",   "q_norm_weight", "k_norm_weight",  "query_seqlens"};
    const bool rotary = IntAttr(*node, "do_rotary", 0) != 0;
    if (rotary && (!node->input(7) || !node->input(8))) return Refuse("do_rotary=1 without cos_cache and sin_cache");
    for (size_t i = rotary ? 9 : 7; i < node->num_inputs(); ++i)
      if (node->input(i))
        return Refuse(
            absl::StrCat("the ", i - 7 < std::size(kInputs) ? kInputs[i - 7] : "extra", " input is not lowered"));
    if ((node->input(3) == nullptr) != (node->input(4) == nullptr)) return Refuse("past_key without past_value");
    const TypeFacts& types = facts.Get<TypeFacts>();
    GqaPlan plan{};
    plan.type = ElemTypeOfAny(*node, {0, 1, 2, 3, 4}, {0, 1, 2}, types);
    if (node->graph()->OpsetVersion("") < 13)
      return Refuse("opset < 13 (Softmax over the last axis, Unsqueeze with axes inputs)");
    if (plan.type == 0) return Refuse("the element type of the query is unknown (run infer-shapes first)");
    if (!lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("the query is ", TypeName(plan.type), ", not a float type"));
    if (int32_t cache = ElemTypeOfAny(*node, {3, 4}, {1, 2}, types); cache != 0 && cache != plan.type)
      return Refuse(absl::StrCat("a ", TypeName(cache), " KV cache (quantized) is not lowered"));
    plan.num_heads = IntAttr(*node, "num_heads", 0);
    plan.kv_num_heads = IntAttr(*node, "kv_num_heads", 0);
    if (plan.num_heads <= 0 || plan.kv_num_heads <= 0 || plan.num_heads % plan.kv_num_heads != 0)
      return Refuse(
          absl::StrCat("num_heads ", plan.num_heads, " is not a multiple of kv_num_heads ", plan.kv_num_heads));
    plan.packed = node->input(1) == nullptr;
    if (plan.packed != (node->input(2) == nullptr)) return Refuse("key without value");
    std::optional<std::vector<int64_t>> q = types.Dims(node->input(0));
    // Unknown (not yet typed: a lowered MatMulNBits upstream) waits for the pass's next round.
    if (!q) return Refuse("the query's shape is unknown");
    if (q->size() != 3 || (*q)[2] <= 0) return Refuse("the query's hidden size is not static");
    const int64_t width = plan.packed ? plan.num_heads + 2 * plan.kv_num_heads : plan.num_heads;
    if ((*q)[2] % width != 0) return Refuse("the query's hidden size does not split into the heads");
    plan.head_size = (*q)[2] / width;
    plan.has_past = node->input(3) != nullptr;
    plan.causal = IntAttr(*node, "causal", 1) != 0;
    if (!plan.causal && plan.has_past) return Refuse("causal=0 with a past is not lowered");
    if (rotary) {
      std::optional<std::vector<int64_t>> cos = types.Dims(node->input(7));
      if (!cos || cos->size() != 2 || (*cos)[1] <= 0) return Refuse("cos_cache's width is not static");
      if (2 * (*cos)[1] > plan.head_size)
        return Refuse(absl::StrCat("cos_cache's width ", (*cos)[1], " exceeds half the head size ", plan.head_size));
      plan.rotary_half = (*cos)[1];
      plan.interleaved = IntAttr(*node, "rotary_interleaved", 0) != 0;
    }
    plan.local_window = IntAttr(*node, "local_window_size", -1);
    plan.softcap = FloatAttr(*node, "softcap", 0.0f);
    const float scale = FloatAttr(*node, "scale", 0.0f);
    plan.scale = scale != 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(plan.head_size));
    return plan;
  }

  Status Replace(Node* node, GqaPlan plan, Rewriter& rw) const override {
    constexpr int32_t kInt64 = onnx::TensorProto::INT64;
    auto int64 = [&](Value* v) { return rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kInt64)}); };
    const int64_t kv_hidden = plan.kv_num_heads * plan.head_size;
    Value* q = node->input(0);
    Value* k = node->input(1);
    Value* v = node->input(2);
    if (plan.packed) {
      Node* split = rw.Create("Split", {q, rw.Int64s({plan.num_heads * plan.head_size, kv_hidden, kv_hidden})},
                              {Rewriter::AttrInt("axis", -1)}, 3);
      q = split->output(0);
      k = split->output(1);
      v = split->output(2);
    }
    AttentionSpec spec;
    spec.q = SplitHeads(rw, q, plan.num_heads);
    k = SplitHeads(rw, k, plan.kv_num_heads);
    v = SplitHeads(rw, v, plan.kv_num_heads);
    OS_ASSIGN_OR_RETURN(Value * zero_i, ScalarOf(rw, kInt64, 0));
    OS_ASSIGN_OR_RETURN(Value * one_i, ScalarOf(rw, kInt64, 1));
    Value* s = DimOf(rw, spec.q, 2);
    // Each batch's past length [B]: 0 on a first prompt, else seqlens_k + 1 - S.
    Value* total = rw.Op("Reshape", {int64(node->input(6)), rw.Int64s({})});
    Value* past_len = rw.Op("Sub", {rw.Op("Add", {int64(node->input(5)), one_i}), s});
    past_len = rw.Op("Where", {rw.Op("Equal", {s, total}), zero_i, past_len});
    if (plan.rotary_half > 0) {  // positions pl + [0, S): cos/sin [B, 1, S, half]
      Value* positions =
          rw.Op("Add", {rw.Op("Unsqueeze", {past_len, rw.Int64s({1})}), rw.Op("Range", {zero_i, s, one_i})});
      auto angle = [&](Value* cache) {
        Value* a = rw.Op("Gather", {cache, positions}, {Rewriter::AttrInt("axis", 0)});
        return rw.Op("Unsqueeze", {a, rw.Int64s({1})});
      };
      Value* cos = angle(node->input(7));
      Value* sin = angle(node->input(8));
      spec.q = EmitRotation(rw, spec.q, cos, sin, plan.head_size, plan.rotary_half, plan.interleaved);
      k = EmitRotation(rw, k, cos, sin, plan.head_size, plan.rotary_half, plan.interleaved);
    }
    Value* present_k = k;
    Value* present_v = v;
    if (plan.has_past) {  // the new keys at past_len: position j of Concat(past, new) is read from
      //   j (j < pl), P + j - pl (pl <= j < pl + S), j (after: unspecified in onnxruntime)
      Value* p = DimOf(rw, node->input(3), 2);
      Value* cat_k = rw.Op("Concat", {node->input(3), k}, {Rewriter::AttrInt("axis", 2)});
      Value* cat_v = rw.Op("Concat", {node->input(4), v}, {Rewriter::AttrInt("axis", 2)});
      Value* j = rw.Op("Range", {zero_i, rw.Op("Add", {p, s}), one_i});  // [T]
      Value* pl = rw.Op("Unsqueeze", {past_len, rw.Int64s({1})});        // [B, 1]
      Value* fresh = rw.Op("And", {rw.Op("Not", {rw.Op("Less", {j, pl})}), rw.Op("Less", {j, rw.Op("Add", {pl, s})})});
      Value* from =
          rw.Op("Where", {fresh, rw.Op("Sub", {rw.Op("Add", {j, p}), pl}), rw.Op("Add", {j, rw.Op("Sub", {pl, pl})})});
      Value* index = rw.Op("Unsqueeze", {from, rw.Int64s({1, 3})});  // [B, 1, T, 1]
      auto place = [&](Value* cat) {
        Value* expanded = rw.Op("Expand", {index, rw.Op("Shape", {cat})});
        return rw.Op("GatherElements", {cat, expanded}, {Rewriter::AttrInt("axis", 2)});
      };
      k = place(cat_k);
      v = place(cat_v);
      Value* keep = rw.Op("Max", {total, p});  // present's length: max(total_sequence_length, P)
      auto first = [&](Value* x) {
        return rw.Op("Slice", {x, rw.Int64s({0}), rw.Op("Unsqueeze", {keep, rw.Int64s({0})}), rw.Int64s({2})});
      };
      present_k = first(k);
      present_v = first(v);
    }
    // Query heads share K/V heads: [B, Nkv, T, H] -> [B, N, T, H].
    const int64_t group = plan.num_heads / plan.kv_num_heads;
    auto repeat = [&](Value* x) {
      if (group == 1) return x;
      Value* tiled = rw.Op("Tile", {rw.Op("Unsqueeze", {x, rw.Int64s({2})}), rw.Int64s({1, 1, group, 1, 1})});
      return rw.Op("Reshape", {tiled, rw.Int64s({0, plan.num_heads, -1, plan.head_size})});
    };
    spec.k = repeat(k);
    spec.v = repeat(v);
    if (plan.causal) {  // key j for query i of batch b: pl + i - window < j <= pl + i
      Value* t = DimOf(rw, spec.k, 2);
      Value* j = rw.Op("Range", {zero_i, t, one_i});                                         // [T]
      Value* i = rw.Op("Unsqueeze", {rw.Op("Range", {zero_i, s, one_i}), rw.Int64s({1})});   // [S, 1]
      Value* pos = rw.Op("Add", {rw.Op("Unsqueeze", {past_len, rw.Int64s({1, 2, 3})}), i});  // [B, 1, S, 1]
      Value* blocked = rw.Op("Greater", {j, pos});
      if (plan.local_window > 0)
        blocked = rw.Op("Or", {blocked, rw.Op("Less", {j, rw.Op("Sub", {pos, rw.Int64s({plan.local_window - 1})})})});
      OS_ASSIGN_OR_RETURN(Value * lowest, ScalarOf(rw, plan.type, LowestOf(plan.type)));
      OS_ASSIGN_OR_RETURN(Value * zero, ScalarOf(rw, plan.type, 0.0));
      spec.attention_bias = rw.Op("Where", {blocked, lowest, zero});
    }
    spec.scale = plan.scale;
    spec.softcap = plan.softcap;
    spec.type = plan.type;
    OS_ASSIGN_OR_RETURN(Value * y, EmitAttention(rw, spec));
    std::vector<Value*> out = {y, OutputUsed(*node, 1) ? present_k : nullptr,
                               OutputUsed(*node, 2) ? present_v : nullptr};
    out.resize(node->num_outputs());
    return rw.ReplaceNode(node, out);
  }
};

}  // namespace

std::vector<ContribRule> MakeGqaRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"GroupQueryAttention", std::make_unique<GroupQueryAttentionRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
