// fuse-reshapes: removes the Reshapes exporters write around linear layers and views, and
// turns MatMul + Add into Gemm, as onnx-simplifier does. Six rules:
//
// reshape-noop: a Reshape whose output shape is provably its input shape (static dims, or
// the same dim_param) goes. The output shape is derived from the constant shape input and
// the input's shape (0 copies a dim unless allowzero=1, -1 takes the rest), never from the
// output's own annotation alone.
//   Before:  v = Reshape(ids[2,8], [-1,8])      y = Gather(W, v)
//   After:   y = Gather(W, ids)
//
// reshape-chain: Reshape(V(x, ...), s2) -> Reshape(x, s2), V a Reshape, Squeeze, Unsqueeze or
// Flatten (each keeps every element's row-major offset), when s2 is constant and means the
// same applied to x: allowzero=1, or no 0 in s2, or each 0 copies a dim of the
// intermediate that x has at the same position (static or same dim_param), or is replaced
// by the intermediate's static dim. The inner Reshape stays while something else reads it.
//   Before:  a = Reshape(x[16,32], [2,8,32])     y = Reshape(a, [2,8,2,16])
//   After:   y = Reshape(x, [2,8,2,16])
//
// view-of-reshape: Squeeze/Unsqueeze/Flatten(Reshape(x, s)), the Reshape read only there ->
// Reshape(x, s') with s' the view's output dims (derived from s and x's shape, never from an
// annotation): static dims as numbers, a dim x has at the same position as 0, at most one
// other dim as -1 and that only when every other entry is a positive number (a -1 beside a
// dim that may be 0 is ambiguous). Refused when a squeezed dim is not provably 1.
//   Before:  r = Reshape(x[B,48], [0,6,8])      y = Unsqueeze(r, [1])
//   After:   y = Reshape(x, [0,1,6,8])
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
//
// transpose-view (passes/reshapes/transpose_view.h): a Transpose that only moves dims of
// size 1, beside a Reshape, becomes a Reshape the chain rules then merge.

#include <algorithm>
#include <deque>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "core/shape/rules.h"
#include "passes/registry.h"
#include "passes/reshapes/flatten_region.h"
#include "passes/reshapes/reshape_facts.h"
#include "passes/reshapes/transpose_view.h"

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

// Reshape(V(x), s2), V a Reshape, Squeeze, Unsqueeze or Flatten (none moves an element:
// each keeps the row-major order, so a Reshape of its output is one of its input); V may
// have other readers (it then stays).
std::unique_ptr<RewriteRule> ReshapeChainRule() {
  pattern::Pattern p("reshape-chain");
  std::vector<pattern::ValueRef> views;
  for (const char* op : {"Reshape", "Squeeze", "Unsqueeze", "Flatten"})
    views.push_back(p.Op(op, {p.Any("x")}).AnyNumberOfInputs().AllowExternalUses());
  pattern::ValueRef inner = p.Or(std::move(views));
  pattern::OpRef outer = p.Op("Reshape", {inner, p.Any("shape")}).Capture("outer");
  return std::make_unique<PatternRule<ChainPlan>>("reshape-chain", std::move(p), outer.id(), CheckReshapeChain,
                                                  ReplaceReshapeChain, /*benefit=*/3);
}

// ---- view-of-reshape --------------------------------------------------------------------

// The axes of a Squeeze/Unsqueeze (input 1 from opset 13, else the attribute); nullopt when
// computed; empty when absent.
std::optional<std::vector<int64_t>> ViewAxes(const Node& n) {
  if (n.num_inputs() > 1 && n.input(1)) return ConstantInt64s(n.input(1));
  if (const Attribute* a = n.FindAttribute("axes")) return a->ints();
  return std::vector<int64_t>{};
}

// The output dims of Squeeze, Unsqueeze or Flatten `n` applied to dims `in`, or why not.
Verdict<Shape> ViewOutput(const Node& n, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (n.Is("Flatten")) {
    int64_t axis = n.GetInt("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return Refuse("Flatten's axis is out of range");
    Shape out(2, Dim::Static(1));
    for (int64_t i = 0; i < rank; ++i) {
      Dim& d = out[i < axis ? 0 : 1];
      if (!in[i].is_static()) {
        d = Dim{};
      } else if (d.is_static()) {
        d.value *= in[i].value;
      }
    }
    if (!out[0].is_static() && !out[1].is_static()) return Refuse("both of Flatten's output dims are dynamic");
    // A single dynamic input dim on one side is that dim.
    for (int side = 0; side < 2; ++side) {
      if (out[side].is_static()) continue;
      int64_t begin = side == 0 ? 0 : axis, end = side == 0 ? axis : rank, dynamic = 0, product = 1;
      const Dim* only = nullptr;
      for (int64_t i = begin; i < end; ++i) {
        if (in[i].is_static()) product *= in[i].value;
        else ++dynamic, only = &in[i];
      }
      if (dynamic == 1 && product == 1) out[side] = *only;
    }
    return out;
  }
  auto axes = ViewAxes(n);
  if (!axes) return Refuse(absl::StrCat("the ", n.op_type(), " axes are computed"));
  if (n.Is("Unsqueeze")) {
    const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : *axes) {
      if (a < 0) a += out_rank;
      if (a < 0 || a >= out_rank || inserted[a]) return Refuse("an Unsqueeze axis is out of range or repeated");
      inserted[a] = true;
    }
    Shape out;
    size_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? Dim::Static(1) : in[k++]);
    return out;
  }
  std::vector<bool> removed(in.size(), false);
  if (axes->empty()) {
    for (int64_t i = 0; i < rank; ++i) {
      if (!in[i].is_static()) return Refuse("a Squeeze without axes of a dynamic dim");
      removed[i] = in[i].value == 1;
    }
  }
  for (int64_t a : *axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) return Refuse("a Squeeze axis is out of range");
    if (!(in[a].is_static() && in[a].value == 1)) return Refuse("a squeezed dim is not provably 1");
    removed[a] = true;
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i)
    if (!removed[i]) out.push_back(in[i]);
  return out;
}

// `out` as the shape input of a Reshape of `x` (no allowzero): static dims as numbers, a
// dim x has at the same position as 0 (copy), at most one other as -1, and that only when
// every other entry is a positive number (so the -1 is never ambiguous); else why not.
Verdict<std::vector<int64_t>> ShapeFor(const Shape& out, const std::optional<Shape>& x) {
  std::vector<int64_t> s;
  int unknown = 0;
  bool all_positive = true;
  for (size_t i = 0; i < out.size(); ++i) {
    const Dim& d = out[i];
    if (d.is_static()) {
      if (d.value == 0) return Refuse("an output dim is 0 (a Reshape would read it as a copy)");
      s.push_back(d.value);
    } else if (x && i < x->size() && (*x)[i].SameAs(d)) {
      s.push_back(0);
      all_positive = false;
    } else {
      s.push_back(-1);
      ++unknown;
    }
  }
  if (unknown > 1) return Refuse("more than one output dim is dynamic and not x's own");
  if (unknown == 1 && !all_positive) return Refuse("a -1 beside a copied dim that could be 0");
  return s;
}

struct ViewPlan {
  Node* reshape = nullptr;
  Value* x = nullptr;
  std::vector<int64_t> shape;
};

// Given:  r = Reshape(x, s)   y = Squeeze|Unsqueeze|Flatten(r)      r read only here
// Result: y = Reshape(x, s')  s' the view's output dims, from s and x's dims
class ViewOfReshapeRule : public NodeRule<ViewPlan> {
 public:
  explicit ViewOfReshapeRule(std::string op) : NodeRule("view-of-reshape", std::move(op), "", 3) {}

 protected:
  Verdict<ViewPlan> Check(Node* n, RewriteFacts&) const override {
    Node* r = n->input(0) ? n->input(0)->producer() : nullptr;
    if (!r || !IsOp(r, "Reshape") || r->graph() != n->graph()) return Refuse("the input is not a Reshape's output");
    if (r->output(0)->uses().size() != 1 || r->output(0)->IsGraphOutput())
      return Refuse("the Reshape has another reader");
    auto s = ShapeInput(*r);
    if (!s) return Refuse("the Reshape's shape input is not a constant");
    auto x_shape = ShapeOf(r->input(0));
    if (!x_shape) return Refuse(absl::StrCat("the rank of '", r->input(0)->name(), "' is unknown"));
    auto mid = ResolveReshape(*x_shape, *s, AllowZero(*r));
    if (!mid) return Refuse("the Reshape's shape is invalid for its input");
    Verdict<Shape> out = ViewOutput(*n, *mid);
    if (!out) return Refuse(out.reason());
    Verdict<std::vector<int64_t>> shape = ShapeFor(*out, x_shape);
    if (!shape) return Refuse(shape.reason());
    return ViewPlan{r, r->input(0), std::move(*shape)};
  }

  Status Replace(Node* n, ViewPlan plan, Rewriter& rw) const override {
    Value* y = rw.Op("Reshape", {plan.x, rw.Int64s(plan.shape)});
    if (n->output(0)->has_type()) *y->mutable_info()->mutable_type() = n->output(0)->info()->type();
    OS_RETURN_IF_ERROR(rw.ReplaceNode(n, {y}));
    rw.EraseDead({plan.reshape});
    return absl::OkStatus();
  }
};

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
    for (const char* op : {"Squeeze", "Unsqueeze", "Flatten"}) AddRule(std::make_unique<ViewOfReshapeRule>(op));
    AddRule(MatMulAddGemmRule());
    AddRule(reshapes::MakeTransposeViewRule());
    AddRule(reshapes::MakeFlattenRegionRule("MatMul"));
    AddRule(reshapes::MakeFlattenRegionRule("Reshape"));
  }
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    TypeRequest request;
    request.infer.data_propagation = false;
    request.infer.record_value_info = false;  // shapes to decide with, not saved
    // Local rules first; onnx inference only for what they leave unknown. Failure:
    // unknown shapes, those rules refuse.
    (void)TypeFacts::Ensure(model, NeedsShapes, request);
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
