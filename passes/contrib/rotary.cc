// RotaryEmbedding (com.microsoft) as standard ops (opset >= 13), following onnxruntime's
// CPU kernel: per head, the first rotary_dim channels rotate by the cached angle of the
// token's position, the rest pass through.
//   position_ids of shape [1]: an offset, token s at position_ids[0] + s; [B, S]: per token.
//   3D input [B, S, N*H] is viewed as [B, S, N, H]; 4D input is [B, N, S, H].
//   not interleaved: x1, x2 the halves of the rotary part;  interleaved: the even and odd
//   channels. out1 = x1 cos - x2 sin, out2 = x2 cos + x1 sin.
//   Given:   %y = RotaryEmbedding<num_heads=2>(%x, %pos, %cos, %sin)     x [B, S, 8], cos [P, 2]
//   Result:  %c = Unsqueeze(Gather(%cos, %pos), 2)  (same for sin)  %v = Reshape(%x, [0, 0, -1, 4])
//            %y = Reshape(Concat(Sub(Mul(%v1, %c), Mul(%v2, %s)), Add(Mul(%v2, %c), Mul(%v1, %s))), [0, 0, -1])
// Refused: is_packed_batching, scale != 1, a head size that is not static, position_ids
// of unknown rank, opset < 13.
#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {

Value* EmitRotation(Rewriter& rw, Value* v, Value* cos, Value* sin, int64_t head_size, int64_t half, bool interleaved) {
  auto slice = [&](Value* x, int64_t begin, int64_t end) {
    return rw.Op("Slice", {x, rw.Int64s({begin}), rw.Int64s({end}), rw.Int64s({-1})});
  };
  const int64_t rotary_dim = 2 * half;
  Value* rot = rotary_dim < head_size ? slice(v, 0, rotary_dim) : v;
  Value* x1;
  Value* x2;
  if (interleaved) {  // [..., half, 2]: channel pairs
    rot = rw.Op("Reshape", {rot, rw.Int64s({0, 0, 0, half, 2})});
    x1 = slice(rot, 0, 1);
    x2 = slice(rot, 1, 2);
    cos = rw.Op("Unsqueeze", {cos, rw.Int64s({-1})});
    sin = rw.Op("Unsqueeze", {sin, rw.Int64s({-1})});
  } else {
    x1 = slice(rot, 0, half);
    x2 = slice(rot, half, rotary_dim);
  }
  Value* out1 = rw.Op("Sub", {rw.Op("Mul", {x1, cos}), rw.Op("Mul", {x2, sin})});
  Value* out2 = rw.Op("Add", {rw.Op("Mul", {x2, cos}), rw.Op("Mul", {x1, sin})});
  Value* y = rw.Op("Concat", {out1, out2}, {Rewriter::AttrInt("axis", -1)});
  if (interleaved) y = rw.Op("Reshape", {y, rw.Int64s({0, 0, 0, rotary_dim})});
  if (rotary_dim < head_size)
    y = rw.Op("Concat", {y, slice(v, rotary_dim, head_size)}, {Rewriter::AttrInt("axis", -1)});
  return y;
}

namespace {

struct RotaryPlan {
  int64_t rank;       // of the input: 3 or 4
  int64_t head_size;  // H
  int64_t half;       // rotary_dim / 2
  bool offset;        // position_ids is [1]
  bool interleaved;
};

class RotaryRule : public NodeRule<RotaryPlan> {
 public:
  RotaryRule() : NodeRule("lower-rotary-embedding", "RotaryEmbedding", kMsDomain) {}

 protected:
  Verdict<RotaryPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (node->num_inputs() != 4 || !node->input(0) || !node->input(1) || !node->input(2) || !node->input(3))
      return Refuse("does not have its 4 inputs");
    if (IntAttr(*node, "is_packed_batching", 0) != 0) return Refuse("is_packed_batching=1 is not lowered");
    if (FloatAttr(*node, "scale", 1.0f) != 1.0f) return Refuse("scale != 1 is not lowered");
    if (node->graph()->OpsetVersion("") < 13) return Refuse("opset < 13 (Unsqueeze/Squeeze with axes inputs)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    RotaryPlan plan{};
    plan.interleaved = IntAttr(*node, "interleaved", 0) != 0;
    std::optional<std::vector<int64_t>> x = types.Dims(node->input(0));
    std::optional<std::vector<int64_t>> pos = types.Dims(node->input(1));
    std::optional<std::vector<int64_t>> cos = types.Dims(node->input(2));
    if (!x || (x->size() != 3 && x->size() != 4)) return Refuse("the input's rank is unknown or not 3 or 4");
    if (!pos || pos->empty() || pos->size() > 2) return Refuse("position_ids' rank is unknown or not 1 or 2");
    plan.rank = static_cast<int64_t>(x->size());
    plan.offset = pos->size() == 1;
    const int64_t num_heads = IntAttr(*node, "num_heads", 0);
    const int64_t cos_half = cos && cos->size() == 2 ? (*cos)[1] : -1;
    if (plan.rank == 4) {
      plan.head_size = (*x)[3];
    } else if (num_heads > 0) {
      plan.head_size = (*x)[2] > 0 ? (*x)[2] / num_heads : -1;
    } else {
      plan.head_size = cos_half > 0 ? 2 * cos_half : -1;
    }
    if (plan.head_size <= 0) return Refuse("the head size is not static");
    const int64_t rotary = IntAttr(*node, "rotary_embedding_dim", 0);
    const int64_t rotary_dim = rotary > 0 ? rotary : plan.head_size;
    if (rotary_dim % 2 != 0 || rotary_dim > plan.head_size)
      return Refuse(absl::StrCat("rotary_embedding_dim ", rotary_dim, " does not fit head size ", plan.head_size));
    plan.half = rotary_dim / 2;
    return plan;
  }

  Status Replace(Node* node, RotaryPlan plan, Rewriter& rw) const override {
    Value* x = node->input(0);
    Value* pos = node->input(1);
    // [B, S, N, H] (3D input) or [B, N, S, H].
    Value* v = plan.rank == 3 ? rw.Op("Reshape", {x, rw.Int64s({0, 0, -1, plan.head_size})}) : x;
    Value* positions = pos;
    if (plan.offset) {  // position_ids[0] + [0, S)
      const int64_t seq_axis = plan.rank == 3 ? 1 : 2;
      Value* start = rw.Op("Squeeze", {pos, rw.Int64s({0})});
      Value* seq = rw.Op("Gather", {rw.Op("Shape", {x}), rw.Int64s({seq_axis})});
      Value* limit = rw.Op("Add", {start, rw.Op("Squeeze", {seq, rw.Int64s({0})})});
      Value* one = rw.Op("Squeeze", {rw.Int64s({1}), rw.Int64s({0})});
      positions = rw.Op("Range", {start, limit, one});  // [S]
    }
    // cos/sin of each token, broadcastable against v's rotary part: offset: [S, half] ->
    // [S, 1, half] (3D) or as is (4D); per token: [B, S, half] -> [B, S, 1, half] / [B, 1, S, half].
    auto angle = [&](Value* cache) {
      Value* c = rw.Op("Gather", {cache, positions}, {Rewriter::AttrInt("axis", 0)});
      if (plan.offset) return plan.rank == 3 ? rw.Op("Unsqueeze", {c, rw.Int64s({1})}) : c;
      return rw.Op("Unsqueeze", {c, rw.Int64s({plan.rank == 3 ? 2 : 1})});
    };
    Value* cos = angle(node->input(2));
    Value* sin = angle(node->input(3));
    Value* y = EmitRotation(rw, v, cos, sin, plan.head_size, plan.half, plan.interleaved);
    if (plan.rank == 3) y = rw.Op("Reshape", {y, rw.Int64s({0, 0, -1})});
    return rw.ReplaceNode(node, {y});
  }
};

}  // namespace

std::vector<ContribRule> MakeRotaryRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"RotaryEmbedding", std::make_unique<RotaryRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
