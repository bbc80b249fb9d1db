// The relative position biases (com.microsoft) onnxruntime has CUDA kernels only for,
// lowered to standard ops following those kernels
// (onnxruntime/contrib_ops/cuda/bert/relative_attn_bias.cc, relative_attn_bias_impl.cu).
//
// RelativePositionBias(bias_table, query_length, key_length)<max_distance, is_bidirectional>
// -> [1, num_heads, query_length, key_length]: T5's bucketed bias, what the transformer
// optimizer writes for T5 (onnx_model_t5.py). Relative position r = key - query; its bucket:
//   bidirectional: n = num_buckets / 2, r > 0 adds n, r = |r|;  else: n = num_buckets, r = max(-r, 0)
//   max_exact = n / 2; r < max_exact: r; else min(max_exact + int(logf(r / max_exact) /
//   logf(max_distance / max_exact) * (n - max_exact)), n - 1)       (float, truncated)
// The bucket of every r in [-max_distance, max_distance] is computed here, in float as the
// kernel does, into a table; beyond it the bucket saturates at n - 1 (the log ratio is at
// least 1), so r is clamped into that range. The table [num_buckets, num_heads] is read as
// the kernel reads it, head-major (the optimizer stores the transposed weight).
//   Result:  %r = Sub(Reshape(Range(0, k, 1), [1, -1]), Reshape(Range(0, q, 1), [-1, 1]))
//            %b = Gather(buckets, Add(Where(r < -md, -md, Where(r > md, md, r)), md))
//            %y = Gather<axis=2>(Reshape(%bias_table, [1, -1, num_buckets]), %b)
// Refused: max_distance missing or <= max_exact (the kernel's log ratio is 0 or negative:
// buckets undefined), max_exact < 1, a table whose rank is not 2 or num_buckets not static,
// opset < 11 (Range).
//
// GatedRelativePositionBias(query_layer, query_bias, rel_pos, weight, bias, eco_a)<num_heads>
// -> [B, N, S, S]: q = (query_layer + query_bias) as [B, N, S, H]; g = q @ weight + bias
// [B, N, S, D]; u, r = Sigmoid of the sums of g's halves; gate = u * (r * eco_a - 1) + 2;
// output = gate * rel_pos. The projection in the input's type, the rest in float (the
// kernel's), cast back. Refused: token_offset (the packed form), query_layer not 3-D,
// an odd static D, element types unknown or not float/float16, opset < 13.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

// ---- RelativePositionBias ------------------------------------------------------------

struct RelPosPlan {
  int64_t num_buckets;
  int64_t max_distance;
  bool bidirectional;
};

// The kernel's bucket of relative position r (key - query), in its float arithmetic.
int64_t Bucket(int64_t r, const RelPosPlan& plan) {
  int64_t bucket = 0;
  int64_t n = plan.num_buckets;
  if (plan.bidirectional) {
    n /= 2;
    if (r > 0) bucket += n;
    else r = -r;
  } else {
    r = r > 0 ? 0 : -r;
  }
  const int64_t max_exact = n / 2;
  if (r < max_exact) return bucket + r;
  const float ratio = std::log(static_cast<float>(r) * 1.0f / static_cast<float>(max_exact)) /
                      std::log(static_cast<float>(plan.max_distance) / static_cast<float>(max_exact));
  const int64_t large = max_exact + static_cast<int64_t>(ratio * static_cast<float>(n - max_exact));
  return bucket + std::min(large, n - 1);
}

class RelPosBiasRule : public NodeRule<RelPosPlan> {
 public:
  RelPosBiasRule() : NodeRule("lower-relative-position-bias", "RelativePositionBias", kMsDomain) {}

 protected:
  Verdict<RelPosPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (node->num_inputs() != 3 || !node->input(0) || !node->input(1) || !node->input(2))
      return Refuse("does not have its 3 inputs");
    if (node->graph()->OpsetVersion("") < 11) return Refuse("opset < 11 (Range)");
    RelPosPlan plan{};
    plan.max_distance = IntAttr(*node, "max_distance", 0);
    plan.bidirectional = IntAttr(*node, "is_bidirectional", 0) != 0;
    std::optional<std::vector<int64_t>> table = facts.Get<TypeFacts>().Dims(node->input(0));
    if (!table || table->size() != 2 || (*table)[0] <= 0)
      return Refuse("bias_table's rank is not 2 or its num_buckets is not static");
    plan.num_buckets = (*table)[0];
    const int64_t max_exact = (plan.bidirectional ? plan.num_buckets / 2 : plan.num_buckets) / 2;
    if (max_exact < 1) return Refuse(absl::StrCat("num_buckets ", plan.num_buckets, " leaves no exact bucket"));
    if (plan.max_distance <= max_exact)
      return Refuse(absl::StrCat("max_distance ", plan.max_distance, " <= max_exact ", max_exact,
                                 ": the kernel's log(max_distance / max_exact) is 0 or negative"));
    return plan;
  }

  Status Replace(Node* node, RelPosPlan plan, Rewriter& rw) const override {
    constexpr int32_t kInt64 = onnx::TensorProto::INT64;
    const int64_t md = plan.max_distance;
    std::vector<int64_t> buckets;
    for (int64_t r = -md; r <= md; ++r) buckets.push_back(Bucket(r, plan));
    OS_ASSIGN_OR_RETURN(Tensor lut_t, Tensor::FromInt64s(kInt64, {2 * md + 1}, buckets));
    OS_ASSIGN_OR_RETURN(Value * lut, rw.Constant(std::move(lut_t), "buckets"));
    auto scalar = [&](int64_t v) -> StatusOr<Value*> {
      OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromInt64s(kInt64, {}, {v}));
      return rw.Constant(std::move(t), "scalar");
    };
    OS_ASSIGN_OR_RETURN(Value * zero, scalar(0));
    OS_ASSIGN_OR_RETURN(Value * one, scalar(1));
    OS_ASSIGN_OR_RETURN(Value * low, scalar(-md));
    OS_ASSIGN_OR_RETURN(Value * high, scalar(md));
    auto positions = [&](Value* length, std::vector<int64_t> shape) {
      Value* n = rw.Op("Reshape", {length, rw.Int64s({})});  // [] or [1] -> []
      return rw.Op("Reshape", {rw.Op("Range", {zero, n, one}), rw.Int64s(shape)});
    };
    Value* r = rw.Op("Sub", {positions(node->input(2), {1, -1}), positions(node->input(1), {-1, 1})});
    r = rw.Op("Where", {rw.Op("Greater", {r, high}), high, r});
    r = rw.Op("Where", {rw.Op("Less", {r, low}), low, r});
    Value* bucket = rw.Op("Gather", {lut, rw.Op("Add", {r, high})}, {Rewriter::AttrInt("axis", 0)});
    Value* table = rw.Op("Reshape", {node->input(0), rw.Int64s({1, -1, plan.num_buckets})});
    return rw.ReplaceNode(node, {rw.Op("Gather", {table, bucket}, {Rewriter::AttrInt("axis", 2)})});
  }
};

// ---- GatedRelativePositionBias -------------------------------------------------------

struct GatedPlan {
  int64_t num_heads;
  int32_t type;
};

class GatedRelPosBiasRule : public NodeRule<GatedPlan> {
 public:
  GatedRelPosBiasRule() : NodeRule("lower-gated-relative-position-bias", "GatedRelativePositionBias", kMsDomain) {}

 protected:
  Verdict<GatedPlan> Check(Node* node, RewriteFacts& facts) const override {
    for (size_t i = 0; i < 6; ++i)
      if (!node->input(i)) return Refuse("does not have its 6 inputs");
    if (node->input(6)) return Refuse("token_offset (the packed form) is not lowered");
    if (node->num_inputs() > 7) return Refuse("more than 7 inputs");
    if (node->graph()->OpsetVersion("") < 13) return Refuse("opset < 13 (ReduceSum with axes input)");
    const TypeFacts& types = facts.Get<TypeFacts>();
    GatedPlan plan{IntAttr(*node, "num_heads", 0), ElemTypeOfAny(*node, {0, 1, 2, 3, 4, 5}, {0}, types)};
    if (plan.num_heads < 1) return Refuse("num_heads is missing or < 1");
    if (plan.type == 0) return Refuse("the element type of query_layer is unknown (run infer-shapes first)");
    if (plan.type != onnx::TensorProto::FLOAT && plan.type != onnx::TensorProto::FLOAT16)
      return Refuse(absl::StrCat("query_layer is ", TypeName(plan.type), ", not float or float16"));
    if (types.Rank(node->input(0)) != 3) return Refuse("query_layer's rank is unknown or not 3");
    std::optional<std::vector<int64_t>> w = types.Dims(node->input(3));
    if (w && w->size() == 2 && (*w)[1] > 0 && (*w)[1] % 2 != 0)
      return Refuse(absl::StrCat("D = ", (*w)[1], " is odd: no halves"));
    return plan;
  }

  Status Replace(Node* node, GatedPlan plan, Rewriter& rw) const override {
    constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
    auto up = [&](Value* v) { return plan.type == kFloat ? v : rw.Op("Cast", {v}, {Rewriter::AttrInt("to", kFloat)}); };
    auto last = [&](Value* v, int64_t begin) {
      return rw.Op("Slice", {v, rw.Int64s({begin}), rw.Int64s({begin + 1}), rw.Int64s({-1})});
    };
    Value* q = rw.Op("Add", {node->input(0), node->input(1)});
    q = rw.Op("Reshape", {q, rw.Int64s({0, 0, plan.num_heads, -1})});
    q = rw.Op("Transpose", {q}, {Rewriter::AttrInts("perm", {0, 2, 1, 3})});                  // [B, N, S, H]
    Value* g = rw.Op("Add", {up(rw.Op("MatMul", {q, node->input(3)})), up(node->input(4))});  // [B, N, S, D]
    g = rw.Op("Reshape", {g, rw.Int64s({0, 0, 0, 2, -1})});
    g = rw.Op("Sigmoid", {rw.Op("ReduceSum", {g, rw.Int64s({-1})}, {Rewriter::AttrInt("keepdims", 0)})});
    OS_ASSIGN_OR_RETURN(Value * one, rw.ScalarFloat(1.0f));
    OS_ASSIGN_OR_RETURN(Value * two, rw.ScalarFloat(2.0f));
    Value* r_eco = rw.Op("Sub", {rw.Op("Mul", {last(g, 1), up(node->input(5))}), one});
    Value* gate = rw.Op("Add", {rw.Op("Mul", {last(g, 0), r_eco}), two});  // [B, N, S, 1]
    Value* y = rw.Op("Mul", {gate, up(node->input(2))});
    if (plan.type != kFloat) y = rw.Op("Cast", {y}, {Rewriter::AttrInt("to", plan.type)});
    return rw.ReplaceNode(node, {y});
  }
};

}  // namespace

std::vector<ContribRule> MakeRelPosBiasRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"RelativePositionBias", std::make_unique<RelPosBiasRule>()});
  rules.push_back({"GatedRelativePositionBias", std::make_unique<GatedRelPosBiasRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
