// constant-vector, same-vector and reshape-shape: a computed vector becomes what the
// analysis proved it is (rules.h).
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "passes/resolve_shapes/rules.h"

namespace onnxsurgeon::resolve_shapes {
namespace {

using Types = onnx::TensorProto;

// Given Node `n` with one output `v` the walk computed, all elements constant.
// Result `v` replaced by a constant of those elements.
struct ConstantPlan {
  int32_t dtype = 0;
  std::vector<int64_t> dims;  // {} for a scalar, {n} for a vector
  std::vector<int64_t> values;
};

class ConstantVectorRule : public SymbolicRule<ConstantPlan> {
 public:
  ConstantVectorRule() : SymbolicRule("constant-vector", /*any op*/ "", 2) {}

 protected:
  std::optional<ConstantPlan> Decide(Node* n, const SymbolicShapes& shapes, std::string&) const override {
    Value* out = n->num_outputs() == 1 ? n->output(0) : nullptr;
    if (!out || !shapes.IsComputed(out) || !Replaceable(out) || GetConstant(out)) return std::nullopt;
    const SymbolicVector* v = shapes.VectorOf(out);
    if (!v || !v->AllConst()) return std::nullopt;
    ConstantPlan plan{v->dtype, {}, {}};
    if (!v->scalar) plan.dims.push_back(static_cast<int64_t>(v->elems.size()));
    for (const SymbolicElem& e : v->elems) plan.values.push_back(e.c);
    return plan;
  }

  Status Replace(Node* n, ConstantPlan plan, Rewriter& rw) const override {
    OS_ASSIGN_OR_RETURN(Tensor t, Tensor::FromInt64s(plan.dtype, plan.dims, plan.values));
    OS_ASSIGN_OR_RETURN(Value * constant, rw.Constant(std::move(t), "value"));
    return rw.ReplaceAllUsesWith(n->output(0), constant, GraphOutputs::kKeepNames);
  }
};

// Given Node `n` with one output the walk computed, symbolic, whose element list an
// earlier value (still alive) has. Result `n`'s output replaced by that value.
class SameVectorRule : public SymbolicRule<Value*> {
 public:
  SameVectorRule() : SymbolicRule("same-vector", /*any op*/ "", 2) {}

 protected:
  std::optional<Value*> Decide(Node* n, const SymbolicShapes& shapes, std::string&) const override {
    Value* out = n->num_outputs() == 1 ? n->output(0) : nullptr;
    if (!out || !shapes.IsComputed(out) || !Replaceable(out)) return std::nullopt;
    // (A first value whose readers all went to other rewrites is gone; a later run finds
    // this one's twin, if any, among what is left.)
    Value* first = shapes.FirstWithSameElements(out);
    if (first == out || first->IsErased()) return std::nullopt;
    return first;
  }

  Status Replace(Node* n, Value* first, Rewriter& rw) const override {
    return rw.ReplaceAllUsesWith(n->output(0), first, GraphOutputs::kKeepNames);
  }
};

// Given Reshape(x, s) with s computed. Result s replaced by a constant: each element a
// constant, or 0 for dim i of x -- the same shape for every input.
class ReshapeShapeRule : public SymbolicRule<std::vector<int64_t>> {
 public:
  ReshapeShapeRule() : SymbolicRule("reshape-shape", "Reshape") {}

 protected:
  std::optional<std::vector<int64_t>> Decide(Node* n, const SymbolicShapes& shapes, std::string& why) const override {
    Value* s = n->input(1);
    if (!n->output(0) || !s || GetConstant(s)) return std::nullopt;
    const SymbolicVector* v = shapes.VectorOf(s);
    if (!v || v->scalar || v->dtype != Types::INT64) return std::nullopt;
    int64_t allowzero = n->graph()->OpsetVersion("") >= 14 ? n->GetInt("allowzero", 0) : 0;
    auto shape = ShapeOf(n->input(0));
    std::vector<int64_t> values;
    for (size_t i = 0; i < v->elems.size(); ++i) {
      const SymbolicElem& e = v->elems[i];
      if (e.is_const) {
        values.push_back(e.c);
        continue;
      }
      std::string reason;
      if (allowzero != 0) {
        reason = "allowzero=1: 0 would be a zero-size dim, not a copy";
      } else if (!shape) {
        reason = "the data's rank is unknown";
      } else if (i >= shape->size()) {
        reason = absl::StrCat("position ", i, " is beyond the data's rank ", shape->size());
      } else if (!shapes.DimOf(n->input(0), *shape, i).Same(e)) {
        reason = absl::StrCat("dim ", i, " of the data (", (*shape)[i].ToString(), ") is not provably the same size");
      }
      if (!reason.empty()) {
        why = absl::StrCat("shape element ", i, " is not constant and cannot be 0: ", reason);
        return std::nullopt;
      }
      values.push_back(0);
    }
    return values;
  }

  Status Replace(Node* n, std::vector<int64_t> values, Rewriter& rw) const override {
    rw.SetInput(n, 1, rw.Int64s(values));
    return absl::OkStatus();
  }
};

}  // namespace

std::vector<std::unique_ptr<RewriteRule>> VectorRules() {
  std::vector<std::unique_ptr<RewriteRule>> rules;
  rules.push_back(std::make_unique<ConstantVectorRule>());
  rules.push_back(std::make_unique<SameVectorRule>());
  rules.push_back(std::make_unique<ReshapeShapeRule>());
  return rules;
}

}  // namespace onnxsurgeon::resolve_shapes
