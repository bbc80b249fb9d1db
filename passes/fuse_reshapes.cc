// fuse-reshapes: removes the Reshapes exporters write around linear layers and views, and
// turns MatMul + Add into Gemm, as onnx-simplifier does. Four rules:
//
// reshape-noop: a Reshape whose output shape is provably its input shape (static dims, or
// the same dim_param) goes. The output shape is derived from the constant shape input and
// the input's shape (0 copies a dim unless allowzero=1, -1 takes the rest), never from the
// output's own annotation alone.
//   Before:  v = Reshape(ids[2,8], [-1,8])      y = Gather(W, v)
//   After:   y = Gather(W, ids)
//
// reshape-chain: Reshape(Reshape(x, s1), s2) -> Reshape(x, s2) when s2 is constant and
// means the same applied to x: allowzero=1, or no 0 in s2, or each 0 copies a dim of the
// intermediate that x has at the same position (static or same dim_param), or is replaced
// by the intermediate's static dim. The inner Reshape stays while something else reads it.
//   Before:  a = Reshape(x[16,32], [2,8,32])     y = Reshape(a, [2,8,2,16])
//   After:   y = Reshape(x, [2,8,2,16])
//
// matmul-add-gemm: Add(MatMul(A, B), C) -> Gemm(A, B, C) when A and B are known to be rank
// 2, the element type is one Gemm takes at the model's opset (float16/float/double from 7;
// int32/int64/uint32/uint64 from 11; bfloat16 from 13), C broadcasts unidirectionally to
// [M,N], and the MatMul's output feeds only the Add.
//   Before:  p = MatMul(A[16,32], W[32,64])     y = Add(p, bias[64])
//   After:   y = Gemm(A, W, bias)
//
// flatten-region (passes/reshapes/flatten_region.h) runs elementwise and linear regions
// on 2-D views.

#include <algorithm>
#include <deque>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "core/shape/propagate.h"
#include "core/shape/rules.h"
#include "passes/registry.h"
#include "passes/reshapes/flatten_region.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes {
namespace {

using namespace reshapes;  // NOLINT: the shared Reshape facts read like local helpers here

// ---- reshape-noop -----------------------------------------------------------------------

class ReshapeNoopRule : public NodeRule<> {
 public:
  ReshapeNoopRule() : NodeRule("reshape-noop", "Reshape", "", 4) {}

 protected:
  Verdict<> Check(Node* r, RewriteFacts&) const override {
    Value* x = r->input(0);
    Value* y = r->output(0);
    if (!x || !y) return Refuse("no data input or output");
    auto s = ShapeInput(*r);
    if (!s) return Refuse("the shape input is not a constant");
    auto in = ShapeOf(x);
    if (!in) return Refuse(absl::StrCat("the rank of '", x->name(), "' is unknown"));
    auto out = ResolveReshape(*in, *s, AllowZero(*r));
    if (!out || !SameShape(*out, *in)) {
      return Refuse(absl::StrCat("the output shape ", out ? ShapeToString(*out) : "(invalid)",
                                 " is not provably the input shape ", ShapeToString(*in)));
    }
    if (y->IsGraphOutput() && !(x->producer() && x->graph() == y->graph() && !x->IsGraphOutput()))
      return Refuse("the output is a graph output whose name the input cannot take");
    return Matched();
  }

  Status Replace(Node* r, NoPlan, Rewriter& rw) const override {
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(r->output(0), r->input(0), GraphOutputs::kKeepNames));
    return rw.EraseNode(r);
  }
};

// ---- reshape-chain ----------------------------------------------------------------------

// The outer shape, with each 0 that copies an intermediate dim x lacks made explicit.
struct ChainPlan {
  std::vector<int64_t> shape;
  bool rewritten = false;  // shape differs from the outer Reshape's shape input
};

Verdict<ChainPlan> CheckReshapeChain(const pattern::Match& m) {
  Node* outer = m.node("outer");
  Value* mid = outer->input(0);
  Value* x = m.value("x");
  auto s2 = ShapeInput(*outer);
  if (!s2) return Refuse("the outer shape input is not a constant");
  ChainPlan plan{*s2};
  std::vector<int64_t>& shape = plan.shape;
  if (!AllowZero(*outer) && std::count(shape.begin(), shape.end(), 0) > 0) {
    // Each 0 copies the intermediate's dim: the same when x has that dim there, else the
    // intermediate's static size.
    auto mid_shape = ShapeOfValue(mid);
    auto x_shape = ShapeOf(x);
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] != 0) continue;
      if (!mid_shape || i >= mid_shape->size())
        return Refuse(absl::StrCat("the 0 at position ", i, " copies a dim of the intermediate that is unknown"));
      const Dim& d = (*mid_shape)[i];
      if (x_shape && i < x_shape->size() && (*x_shape)[i].SameAs(d)) continue;
      if (!d.is_static() || d.value == 0) {
        return Refuse(absl::StrCat("the 0 at position ", i, " copies the intermediate's dim ", d.ToString(),
                                   ", which x does not have there"));
      }
      shape[i] = d.value;
      plan.rewritten = true;
    }
  }
  return plan;
}

StatusOr<std::vector<Value*>> ReplaceReshapeChain(const pattern::Match& m, ChainPlan plan, Rewriter& rw) {
  Node* outer = m.node("outer");
  std::vector<onnx::AttributeProto> attributes;
  for (const Attribute& a : outer->attributes()) attributes.push_back(a.proto());
  Value* shape = plan.rewritten ? rw.Int64s(plan.shape) : m.value("shape");
  Value* y = rw.Op("Reshape", {m.value("x"), shape}, std::move(attributes));
  if (outer->output(0)->has_type()) *y->mutable_info()->mutable_type() = outer->output(0)->info()->type();
  return std::vector<Value*>{y};
}

// Reshape(Reshape(x, s1), s2); the inner Reshape may have other readers (it then stays).
std::unique_ptr<RewriteRule> ReshapeChainRule() {
  pattern::Pattern p("reshape-chain");
  pattern::OpRef inner = p.Op("Reshape", {p.Any("x")}).AnyNumberOfInputs().AllowExternalUses();
  pattern::OpRef outer = p.Op("Reshape", {inner, p.Any("shape")}).Capture("outer");
  return std::make_unique<PatternRule<ChainPlan>>("reshape-chain", std::move(p), outer.id(), CheckReshapeChain,
                                                  ReplaceReshapeChain, /*benefit=*/3);
}

// ---- matmul-add-gemm --------------------------------------------------------------------

// A value known to be rank 2 (so Add(MatMul(a3, b), MatMul(a2, b)) tries its other operand).
pattern::ValueRef Rank2(pattern::Pattern& p, std::string capture) {
  return p.Where(
      p.Any(std::move(capture)),
      [](const Value* v, std::string*) {
        auto s = ShapeOfValue(v);
        return s && s->size() == 2;
      },
      "known to be rank 2");
}

// Add(MatMul(a, b), c) -> Gemm(a, b, c), either operand order.
std::unique_ptr<RewriteRule> MatMulAddGemmRule() {
  pattern::Pattern p("matmul-add-gemm");
  pattern::OpRef mm = p.Op("MatMul", {Rank2(p, "a"), Rank2(p, "b")}).Capture("matmul");
  pattern::OpRef add = p.Op("Add", {mm, p.Any("c")}).Commutative().Capture("add");
  return std::make_unique<PatternRule<>>(
      "matmul-add-gemm", std::move(p), add.id(),
      [](const pattern::Match& m) -> Verdict<> {
        Node* mm = m.node("matmul");
        if (mm->graph() != m.root()->graph()) return Refuse("the MatMul is in an enclosing graph");
        std::string blocker = GemmBlocker(*mm, *m.root(), ShapeOfValue(m.value("a")));
        if (!blocker.empty()) return Refuse(std::move(blocker));
        return Matched();
      },
      [](const pattern::Match& m, NoPlan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
        Value* y = rw.Op("Gemm", {m.value("a"), m.value("b"), m.value("c")});
        Value* out = m.root()->output(0);
        if (out->has_type()) *y->mutable_info()->mutable_type() = out->info()->type();
        return std::vector<Value*>{y};
      },
      /*benefit=*/2);
}

// True when a value some rule asks about has no shape yet: a MatMul's or Reshape's input
// or output, or the output of an elementwise op reading one (regions grow from there).
// Models without MatMul or Reshape never pay for shape inference.
bool NeedsShapes(const Model& model) {
  std::vector<const Graph*> graphs = {&model.graph()};
  for (const auto& f : model.functions()) graphs.push_back(&f->body());
  auto unknown = [](const Value* v) { return v && !ShapeOf(v); };
  for (const Graph* g : graphs) {
    for (Node* n : g->AllNodesRecursive()) {
      if (!CanonicalDomain(n->domain()).empty() || (n->op_type() != "MatMul" && n->op_type() != "Reshape")) continue;
      if (unknown(n->input(0)) || unknown(n->output(0))) return true;
      if (!n->output(0)) continue;
      for (const Use& u : n->output(0)->uses()) {
        const std::string& op = u.node->op_type();
        if ((IsUnary(op) || IsBinary(op)) && unknown(u.node->output(0))) return true;
      }
    }
  }
  return false;
}

Status SortAll(Graph& g) {
  if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
  for (Node* n : g.nodes())
    for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(SortAll(*sub));
  return absl::OkStatus();
}

class FuseReshapesPass : public PatternPass {
 public:
  FuseReshapesPass() {
    AddRule(std::make_unique<ReshapeNoopRule>());
    AddRule(ReshapeChainRule());
    AddRule(MatMulAddGemmRule());
    AddRule(reshapes::MakeFlattenRegionRule("MatMul"));
    AddRule(reshapes::MakeFlattenRegionRule("Reshape"));
  }
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    InferShapesOptions infer;
    infer.data_propagation = false;
    infer.record_value_info = false;  // shapes to decide with, not saved
    // Local rules first; onnx inference only for what they leave unknown. Failure:
    // unknown shapes, those rules refuse.
    (void)EnsureShapes(model, infer, NeedsShapes);
    OS_ASSIGN_OR_RETURN(PassResult result, PatternPass::Run(model, context));
    if (result.counts.contains("flatten-region")) {  // it inserts its nodes before its root
      OS_RETURN_IF_ERROR(SortAll(model.graph()));
      for (auto& f : model.functions()) OS_RETURN_IF_ERROR(SortAll(f->body()));
    }
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseReshapesPass(const PassOptions&) {
  return std::make_unique<FuseReshapesPass>();
}

}  // namespace onnxsurgeon::passes
