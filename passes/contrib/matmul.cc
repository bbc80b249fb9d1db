// FusedMatMul (com.microsoft): alpha * op(A) @ op(B), op a transpose of the last two axes
// when transA / transB is set.
//   Given:   %y = FusedMatMul<alpha=0.125, transB=1>(%a, %b)        (b of rank 4)
//   Result:  %y = Mul(MatMul(%a, Transpose<perm=[0,1,3,2]>(%b)), 0.125)
// Refused: transBatchA / transBatchB (the batch-axes transposes onnxruntime folds in), a
// transposed operand of unknown rank or of rank 1, alpha != 1 on an unknown element type.
#include <tuple>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/tensor.h"
#include "passes/contrib/common.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::contrib {
namespace {

struct FusedMatMulPlan {
  Value* a;
  Value* b;
  int64_t rank_a;  // > 0 when A is transposed
  int64_t rank_b;
  float alpha;
  int32_t type;
};

class FusedMatMulRule : public NodeRule<FusedMatMulPlan> {
 public:
  FusedMatMulRule() : NodeRule("lower-fused-matmul", "FusedMatMul", kMsDomain) {}

 protected:
  Verdict<FusedMatMulPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || node->num_inputs() > 2) return Refuse("does not have 2 inputs");
    for (const char* attr : {"transBatchA", "transBatchB"})
      if (IntAttr(*node, attr, 0) != 0) return Refuse(absl::StrCat(attr, "=1 is not lowered"));
    const TypeFacts& types = facts.Get<TypeFacts>();
    FusedMatMulPlan plan{node->input(0), node->input(1), 0, 0, FloatAttr(*node, "alpha", 1.0f), 0};
    for (auto [attr, v, rank] :
         {std::tuple{"transA", plan.a, &plan.rank_a}, std::tuple{"transB", plan.b, &plan.rank_b}}) {
      if (IntAttr(*node, attr, 0) == 0) continue;
      *rank = types.Rank(v);
      if (*rank < 0) return Refuse(absl::StrCat(attr, "=1 on an operand of unknown rank (run infer-shapes first)"));
      if (*rank < 2) return Refuse(absl::StrCat(attr, "=1 on an operand of rank ", *rank));
    }
    plan.type = ElemTypeOfAny(*node, {0, 1}, {0}, types);
    if (plan.alpha != 1.0f && !lowering::IsFloatType(plan.type))
      return Refuse(absl::StrCat("alpha != 1 and the element type is ", TypeName(plan.type)));
    return plan;
  }

  Status Replace(Node* node, FusedMatMulPlan plan, Rewriter& rw) const override {
    auto transpose = [&](Value* v, int64_t rank) {
      if (rank <= 0) return v;
      std::vector<int64_t> perm;
      for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
      std::swap(perm[rank - 1], perm[rank - 2]);
      return rw.Op("Transpose", {v}, {Rewriter::AttrInts("perm", perm)});
    };
    Value* y = rw.Op("MatMul", {transpose(plan.a, plan.rank_a), transpose(plan.b, plan.rank_b)});
    if (plan.alpha != 1.0f) {
      OS_ASSIGN_OR_RETURN(Value * alpha, rw.ScalarFloat(plan.alpha, plan.type));
      y = rw.Op("Mul", {y, alpha});
    }
    return rw.ReplaceNode(node, {y});
  }
};

// MatMulNBits (com.microsoft, bits=4) at opset >= 21: the quantization kept, as a blocked
// int4 DequantizeLinear of the constant weight, then MatMul.
//   Given:   %y = MatMulNBits<K=64, N=32, bits=4, block_size=32>(%a, %b, %scales[, %zp][, , %bias])
//            (%b uint8 [N, K/32, 16]: two 4-bit values a byte, the low nibble first)
//   Result:  %w = DequantizeLinear<axis=1, block_size=32>(uint4[32, 64] b, Reshape(%scales, [32, 2]),
//                                                          uint4[32, 2] zp (8 when absent))
//            %y = Add(MatMul(%a, Transpose(%w)), %bias)          (a Slice first when K is padded)
// dequantize=true: float weights instead (W = (q - zero point) * scale, computed by the
// pass, 8x int4's bytes), at any opset.
// Refused: bits other than 4, g_idx, weight_prepacked, a weight that is not a constant,
// float zero points, opset < 21 without dequantize=true.
struct NBitsPlan {
  int64_t n, k, block, blocks;
  std::string weight;          // B's bytes: uint4 [N, blocks * block]
  std::string zero_points;     // uint4 [N, blocks]
  std::vector<double> scales;  // dequantize=true: [N * blocks]
  int32_t type;                // the scales' (and A's) element type
};

class MatMulNBitsRule : public NodeRule<NBitsPlan> {
 public:
  explicit MatMulNBitsRule(bool dequantize)
      : NodeRule("lower-matmul-nbits", "MatMulNBits", kMsDomain), dequantize_(dequantize) {}

 protected:
  Verdict<NBitsPlan> Check(Node* node, RewriteFacts& facts) const override {
    if (!node->input(0) || !node->input(1) || !node->input(2)) return Refuse("lacks A, B or scales");
    if (node->input(4)) return Refuse("g_idx is not lowered");
    if (IntAttr(*node, "weight_prepacked", 0) != 0) return Refuse("weight_prepacked=1 is not lowered");
    const int64_t bits = IntAttr(*node, "bits", 4);
    if (bits != 4) return Refuse(absl::StrCat("bits=", bits, " is not lowered (4 only)"));
    if (!dequantize_ && node->graph()->OpsetVersion("") < 21)
      return Refuse("opset < 21: blocked int4 DequantizeLinear needs opset 21 (dequantize=true: float weights)");
    NBitsPlan plan{IntAttr(*node, "N", 0), IntAttr(*node, "K", 0), IntAttr(*node, "block_size", 0), 0, {}, {}, {}, 0};
    if (plan.n <= 0 || plan.k <= 0 || plan.block < 16 || plan.block % 2 != 0)
      return Refuse("N, K or block_size missing or invalid");
    plan.blocks = (plan.k + plan.block - 1) / plan.block;
    std::optional<ConstantData> b = GetConstant(node->input(1));
    if (!b) return Refuse("B is not a constant");
    if (b->data_type != onnx::TensorProto::UINT8 ||
        static_cast<int64_t>(b->raw.size()) != plan.n * plan.blocks * plan.block / 2)
      return Refuse("B is not uint8 [N, blocks, block_size / 2]");
    plan.weight = std::string(b->raw);
    const int32_t type = ElemTypeOfAny(*node, {2, 0}, {0}, facts.Get<TypeFacts>());
    if (!lowering::IsFloatType(type)) return Refuse(absl::StrCat("scales are ", TypeName(type)));
    plan.type = type;
    if (dequantize_) {
      std::optional<ConstantData> sc = GetConstant(node->input(2));
      std::optional<std::vector<double>> values = sc ? sc->AsDoubles() : std::nullopt;
      if (!values || static_cast<int64_t>(values->size()) != plan.n * plan.blocks)
        return Refuse("dequantize=true needs constant scales of N * blocks elements");
      plan.scales = std::move(*values);
    }
    if (Value* zp = node->input(3)) {
      std::optional<ConstantData> z = GetConstant(zp);
      if (!z) return Refuse("zero_points is not a constant");
      if (z->data_type != onnx::TensorProto::UINT8) return Refuse("float zero points are not lowered");
      // Each row's zero points are packed on their own (ceil(blocks / 2) bytes); uint4 [N,
      // blocks] packs them across rows: repacked nibble by nibble.
      const int64_t row_bytes = (plan.blocks + 1) / 2;
      if (static_cast<int64_t>(z->raw.size()) != plan.n * row_bytes)
        return Refuse("zero_points is not uint8 [N * ceil(blocks / 2)]");
      plan.zero_points.assign((plan.n * plan.blocks + 1) / 2, '\0');
      for (int64_t row = 0; row < plan.n; ++row) {
        for (int64_t blk = 0; blk < plan.blocks; ++blk) {
          const auto byte = static_cast<uint8_t>(z->raw[row * row_bytes + blk / 2]);
          const int nibble = (byte >> (4 * (blk % 2))) & 0xF;
          const int64_t at = row * plan.blocks + blk;
          plan.zero_points[at / 2] =
              static_cast<char>(static_cast<uint8_t>(plan.zero_points[at / 2]) | (nibble << (4 * (at % 2))));
        }
      }
    } else {
      plan.zero_points.assign((plan.n * plan.blocks + 1) / 2, static_cast<char>(0x88));  // 8: the default
    }
    return plan;
  }

  Status Replace(Node* node, NBitsPlan plan, Rewriter& rw) const override {
    if (dequantize_) return ReplaceWithFloatWeight(node, std::move(plan), rw);
    auto uint4 = [&](std::vector<int64_t> dims, std::string bytes, const char* hint) -> StatusOr<Value*> {
      onnx::TensorProto meta;
      meta.set_data_type(onnx::TensorProto::UINT4);
      for (int64_t d : dims) meta.add_dims(d);
      Tensor t(std::move(meta));
      t.SetRawBytes(std::move(bytes));
      return rw.Constant(std::move(t), hint);
    };
    OS_ASSIGN_OR_RETURN(Value * w, uint4({plan.n, plan.blocks * plan.block}, std::move(plan.weight), "weight"));
    OS_ASSIGN_OR_RETURN(Value * zp, uint4({plan.n, plan.blocks}, std::move(plan.zero_points), "zero_point"));
    Value* scales = rw.Op("Reshape", {node->input(2), rw.Int64s({plan.n, plan.blocks})});
    Value* y = rw.Op("DequantizeLinear", {w, scales, zp},
                     {Rewriter::AttrInt("axis", 1), Rewriter::AttrInt("block_size", plan.block)});
    if (plan.blocks * plan.block > plan.k) y = rw.Op("Slice", {y, rw.Int64s({0}), rw.Int64s({plan.k}), rw.Int64s({1})});
    y = rw.Op("MatMul", {node->input(0), rw.Op("Transpose", {y}, {Rewriter::AttrInts("perm", {1, 0})})});
    if (Value* bias = node->input(5)) y = rw.Op("Add", {y, bias});
    return rw.ReplaceNode(node, {y});
  }

 private:
  // dequantize=true: W [K, N] = (q - zero point) * scale, computed here, then MatMul.
  static Status ReplaceWithFloatWeight(Node* node, NBitsPlan plan, Rewriter& rw) {
    auto nibble = [](const std::string& bytes, int64_t at) {
      return (static_cast<uint8_t>(bytes[at / 2]) >> (4 * (at % 2))) & 0xF;
    };
    const int64_t row = plan.blocks * plan.block;  // B's elements per output column
    std::vector<double> w(plan.k * plan.n);
    for (int64_t n = 0; n < plan.n; ++n) {
      for (int64_t k = 0; k < plan.k; ++k) {
        const int64_t blk = n * plan.blocks + k / plan.block;
        w[k * plan.n + n] = (nibble(plan.weight, n * row + k) - nibble(plan.zero_points, blk)) * plan.scales[blk];
      }
    }
    OS_ASSIGN_OR_RETURN(Tensor tensor, Tensor::FromDoubles(plan.type, {plan.k, plan.n}, w));
    OS_ASSIGN_OR_RETURN(Value * weight, rw.Constant(std::move(tensor), "weight"));
    Value* y = rw.Op("MatMul", {node->input(0), weight});
    if (Value* bias = node->input(5)) y = rw.Op("Add", {y, bias});
    return rw.ReplaceNode(node, {y});
  }

  bool dequantize_;
};

}  // namespace

std::vector<ContribRule> MakeMatMulRules(bool dequantize) {
  std::vector<ContribRule> rules;
  rules.push_back({"FusedMatMul", std::make_unique<FusedMatMulRule>()});
  rules.push_back({"MatMulNBits", std::make_unique<MatMulNBitsRule>(dequantize)});
  return rules;
}

}  // namespace onnxsurgeon::contrib
