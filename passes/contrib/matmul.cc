// FusedMatMul (com.microsoft): alpha * op(A) @ op(B), op a transpose of the last two axes
// when transA / transB is set.
//   Given:   %y = FusedMatMul<alpha=0.125, transB=1>(%a, %b)        (b of rank 4)
//   Result:  %y = Mul(MatMul(%a, Transpose<perm=[0,1,3,2]>(%b)), 0.125)
// Refused: transBatchA / transBatchB (the batch-axes transposes onnxruntime folds in), a
// transposed operand of unknown rank or of rank 1, alpha != 1 on an unknown element type.
#include <tuple>

#include "absl/strings/str_cat.h"
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

}  // namespace

std::vector<ContribRule> MakeMatMulRules() {
  std::vector<ContribRule> rules;
  rules.push_back({"FusedMatMul", std::make_unique<FusedMatMulRule>()});
  return rules;
}

}  // namespace onnxsurgeon::contrib
