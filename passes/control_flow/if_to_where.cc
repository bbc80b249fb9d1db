// if-to-where: computes both branches of an If whose condition is known only at run time,
// and picks each output with Where(cond, then, else), for runtimes without If (rknn2,
// nncase; targets/probes/control_flow_models.py).
//
// Exact: Where with a scalar condition returns the whole of one of its operands, so each
// output is what the taken branch computes, provided the untaken branch runs without
// raising (its NaN or inf values are never picked). The pass converts an If only when:
// - its condition is a bool computed at run time (a constant one is fold-constants' job);
// - each branch has no inputs, and at most max-nodes nodes besides Constants (both are
//   computed on every run: the bound keeps that cost small);
// - every branch node is proven safe to run on data it was not meant to see
//   (run_safety.h: no ops that raise on their data, such as a Gather with computed
//   indices, a Reshape whose counts may differ, a broadcast of unproven shapes; no
//   custom ops, no random ops; a nested If or Loop must convert first);
// - each pair of outputs are tensors of the same element type and proven-identical shape
//   (a Where of different shapes would broadcast them into a shape neither branch has).
// Outer-scope values the branches read become ordinary reads; branch initializers become
// initializers of the If's graph. The condition is reshaped to a scalar where its rank is
// not known to be 0 (If accepts any one-element bool tensor; a [1] condition would
// broadcast a scalar output to [1]).
//
// Options: max-nodes (per branch, Constants not counted).
//
// Given:  %y = If(%c) <then_branch = () => (%a) { %a = Relu(%x) }, else_branch = () => (%b) { %b = Neg(%x) }>
// Result: %a = Relu(%x)   %b = Neg(%x)   %y = Where(%c, %a, %b)
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/clone.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/control_flow/if_to_where.h"
#include "passes/control_flow/innermost_first.h"
#include "passes/control_flow/run_safety.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct IfPlan {
  Graph* then_branch = nullptr;
  Graph* else_branch = nullptr;
  bool scalar_condition = false;  // the condition's rank is known to be 0
};

Graph* Branch(const Node& n, const char* name) {
  const Attribute* a = n.FindAttribute(name);
  return a && a->graphs().size() == 1 ? a->graphs()[0].get() : nullptr;
}

std::string ShapeText(const std::optional<Shape>& s) {
  if (!s) return "of unknown rank";
  std::string out = "[";
  for (size_t i = 0; i < s->size(); ++i) absl::StrAppend(&out, i ? "," : "", (*s)[i].ToString());
  return out + "]";
}

bool SameShape(const std::optional<Shape>& a, const std::optional<Shape>& b) {
  if (!a || !b || a->size() != b->size()) return false;
  for (size_t i = 0; i < a->size(); ++i)
    if (!(*a)[i].SameAs((*b)[i])) return false;
  return true;
}

// The plan for `root`, or why it stays an If.
Verdict<IfPlan> Decide(const Node* root, const TypeFacts& types, int64_t max_nodes) {
  if (!root->domain().empty() && root->domain() != "ai.onnx") return Refuse("a custom-domain If");
  if (root->graph()->model()->OpsetVersion("") < 9) return Refuse("Where needs opset 9");
  const Value* cond = root->input(0);
  if (GetConstantTypeAndDims(cond)) return Refuse("the condition is a constant (fold-constants folds it)");
  if (types.ElemType(cond) != onnx::TensorProto::BOOL) return Refuse("the condition's type is not known to be bool");
  IfPlan plan;
  plan.then_branch = Branch(*root, "then_branch");
  plan.else_branch = Branch(*root, "else_branch");
  if (!plan.then_branch || !plan.else_branch) return Refuse("a branch is missing");
  plan.scalar_condition = types.Rank(cond) == 0;
  for (auto [name, g] : {std::pair{"then", plan.then_branch}, std::pair{"else", plan.else_branch}}) {
    if (!g->inputs().empty()) return Refuse(absl::StrCat("the ", name, " branch has inputs"));
    if (g->outputs().size() != root->num_outputs())
      return Refuse(
          absl::StrCat("the ", name, " branch has ", g->outputs().size(), " outputs, the If ", root->num_outputs()));
    int64_t count = 0;
    for (Node* n : g->nodes()) {
      if (!n->Is("Constant")) ++count;
      if (std::string why = control_flow::WhyNotSafeToRun(*n, types); !why.empty())
        return Refuse(absl::StrCat("the ", name, " branch's ", why));
    }
    if (count > max_nodes)
      return Refuse(absl::StrCat("the ", name, " branch has ", count, " nodes, above max-nodes=", max_nodes));
  }
  for (size_t i = 0; i < root->num_outputs(); ++i) {
    const Value* a = plan.then_branch->outputs()[i];
    const Value* b = plan.else_branch->outputs()[i];
    const onnx::TypeProto* ta = types.Find(a);
    const onnx::TypeProto* tb = types.Find(b);
    if (!ta || !tb || !ta->has_tensor_type() || !tb->has_tensor_type())
      return Refuse(absl::StrCat("output ", i, " is not known to be a tensor in both branches"));
    if (types.ElemType(a) == 0 || types.ElemType(a) != types.ElemType(b))
      return Refuse(absl::StrCat("output ", i, "'s element types differ or are unknown"));
    auto sa = types.DimsOf(a);
    auto sb = types.DimsOf(b);
    if (!SameShape(sa, sb))
      return Refuse(
          absl::StrCat("output ", i, "'s shapes ", ShapeText(sa), " and ", ShapeText(sb), " are not proven identical"));
  }
  return plan;
}

// Given an If and its plan. Execute clones both branches before it and points its users at
// Where(cond, then, else). Result the If is gone.
Status Replace(Node* root, const IfPlan& plan, Rewriter& rw) {
  std::string prefix = root->name().empty() ? std::string("If") : root->name();
  rw.SetInsertionPoint(root);
  std::vector<Value*> picked[2];
  int side = 0;
  for (Graph* branch : {plan.then_branch, plan.else_branch}) {
    std::string branch_prefix = absl::StrCat(prefix, side == 0 ? "/then/" : "/else/");
    ValueMap map;
    rw.SetInsertionPoint(root);
    OS_ASSIGN_OR_RETURN(picked[side], rw.Inline(*branch, map, branch_prefix));
    for (Value* v : picked[side])
      if (!v) return absl::InvalidArgumentError(absl::StrCat("If '", root->name(), "': a branch output is undefined"));
    ++side;
  }
  rw.SetInsertionPoint(root);
  Value* cond = root->input(0);
  if (!plan.scalar_condition) cond = rw.Op("Reshape", {cond, rw.Int64s({})});
  for (size_t i = 0; i < root->num_outputs(); ++i) {
    Value* out = root->output(i);
    if (!out) continue;
    Value* y = picked[0][i] == picked[1][i] ? picked[0][i] : rw.Op("Where", {cond, picked[0][i], picked[1][i]});
    if (out->info() && !y->has_type()) *y->mutable_info() = *out->info();
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(out, y, GraphOutputs::kKeepNames));
  }
  return rw.EraseNode(root);
}

class IfToWherePass : public Pass {
 public:
  explicit IfToWherePass(int64_t max_nodes) : max_nodes_(max_nodes) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "If");
    TypeFacts types(model);
    return control_flow::ConvertInnermostFirst(model, context, "If", "if-to-where", &types,
                                               [&](Node* n, Rewriter& rw) -> StatusOr<std::string> {
                                                 Verdict<IfPlan> plan = Decide(n, types, max_nodes_);
                                                 if (!plan) return plan.reason();
                                                 OS_RETURN_IF_ERROR(Replace(n, *plan, rw));
                                                 return std::string();
                                               });
  }

 private:
  int64_t max_nodes_;
};

}  // namespace

namespace control_flow {
std::string WhyIfStays(const Node& node, const TypeFacts& types, int64_t max_nodes) {
  Verdict<IfPlan> v = Decide(&node, types, max_nodes);
  return v ? "" : v.reason();
}
}  // namespace control_flow

StatusOr<std::unique_ptr<Pass>> CreateIfToWherePass(const PassOptions& o) {
  return std::make_unique<IfToWherePass>(o.Int("max-nodes"));
}

}  // namespace onnxsurgeon::passes
