// fuse-transposes: removes the Transposes exporters leave around layout changes and
// linear layers. Four rules:
//
// transpose-chain: Transpose(Transpose(x, p1), p2) -> Transpose(x, p) with p[i] = p1[p2[i]]
// (output dim i of the outer is dim p2[i] of the inner, which is dim p1[p2[i]] of x); the
// inner must be read only here (with a second reader it stays, and nothing is saved),
// unless p is the identity: then the outer goes and the inner stays for its other readers.
//   Before:  a = Transpose<perm=[0,2,1,3]>(x)   y = Transpose<perm=[0,2,3,1]>(a)
//   After:   y = Transpose<perm=[0,1,3,2]>(x)
//
// transpose-identity: Transpose(x, p) with p = [0, 1, ..., r-1] -> x (not when its output
// is a graph output: the name is the model's interface).
//
// transpose-into-gemm: an operand of Gemm that is Transpose(a, [1,0]) read only there becomes
// a with transA/transB flipped; MatMul(a, b) of two rank-2 float operands, one of them such
// a Transpose, becomes Gemm(a, b) with transA/transB (one node instead of two).
//   Before:  t = Transpose<perm=[1,0]>(a[8,4])   y = MatMul(t, b[8,16])
//   After:   y = Gemm<transA=1>(a, b)
//
// size-one-transpose: a Transpose that moves only axes of size 1 (the others keep their
// order) only reshapes; next to a Reshape with a constant shape it merges into it:
// Transpose(Reshape(y, s), p) -> Reshape(y, s permuted), Reshape(Transpose(x, p), s) ->
// Reshape(x, s). A 0 in s (copy a dim) must stay on the same axis.
//   Before:  r = Reshape(y, [2,16,1,8])   t = Transpose<perm=[0,2,1,3]>(r)
//   After:   t = Reshape(y, [2,1,16,8])
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using Types = onnx::TensorProto;

bool IsStandard(const Node* n) { return n && CanonicalDomain(n->domain()).empty(); }

// The permutation of a Transpose: its attribute, or the reversal of `rank` dims when
// absent (nullopt when absent and the rank is unknown).
std::optional<std::vector<int64_t>> PermOf(const Node& t) {
  if (const Attribute* a = t.FindAttribute("perm"))
    return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
  auto shape = t.input(0) ? ShapeOf(t.input(0)) : std::nullopt;
  if (!shape) return std::nullopt;
  std::vector<int64_t> p(shape->size());
  std::iota(p.rbegin(), p.rend(), 0);
  return p;
}

bool IsPermutation(const std::vector<int64_t>& p) {
  std::vector<bool> seen(p.size(), false);
  for (int64_t i : p) {
    if (i < 0 || i >= static_cast<int64_t>(p.size()) || seen[static_cast<size_t>(i)]) return false;
    seen[static_cast<size_t>(i)] = true;
  }
  return true;
}

bool IsIdentity(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool SingleReader(const Value* v) { return v && v->uses().size() == 1 && !v->IsGraphOutput(); }

void CarryType(const Value* from, Value* to) {
  if (from->has_type() && !to->has_type()) *to->mutable_info()->mutable_type() = *from->type();
}

// Transpose(Transpose(x, p1), p2) -> Transpose(x, p1 o p2), or x when that is the identity.
struct ComposedTranspose {
  Node* inner;
  std::vector<int64_t> perm;
};

class TransposeChain : public NodeRule<ComposedTranspose> {
 public:
  TransposeChain() : NodeRule("fuse-transposes/transpose-chain", "Transpose", "", 2) {}

 protected:
  Verdict<ComposedTranspose> Check(Node* outer, RewriteFacts&) const override {
    Node* inner = outer->input(0) ? outer->input(0)->producer() : nullptr;
    if (!inner || !inner->Is("Transpose") || !IsStandard(inner) || inner->graph() != outer->graph())
      return Refuse("the input is not a Transpose");
    auto p1 = PermOf(*inner), p2 = PermOf(*outer);
    if (!p1 || !p2 || p1->size() != p2->size() || !IsPermutation(*p1) || !IsPermutation(*p2))
      return Refuse("a permutation is unknown or invalid");
    std::vector<int64_t> p(p2->size());
    for (size_t i = 0; i < p.size(); ++i) p[i] = (*p1)[static_cast<size_t>((*p2)[i])];
    // With a second reader the inner stays; the outer still goes when the two cancel
    // (NHWC exports read a Conv's output both as NCHW, through two Transposes, and as NHWC).
    if (!SingleReader(inner->output(0)) && (!IsIdentity(p) || outer->output(0)->IsGraphOutput()))
      return Refuse("the inner Transpose has another reader");
    return ComposedTranspose{inner, std::move(p)};
  }

  Status Replace(Node* outer, ComposedTranspose plan, Rewriter& rw) const override {
    Value* x = plan.inner->input(0);
    bool identity = IsIdentity(plan.perm) && !outer->output(0)->IsGraphOutput();
    Value* y = identity ? x : rw.Op("Transpose", {x}, {Rewriter::AttrInts("perm", plan.perm)});
    if (y != x) CarryType(outer->output(0), y);
    OS_RETURN_IF_ERROR(rw.ReplaceNode(outer, {y}));
    if (plan.inner->output(0)->HasUsers() || plan.inner->output(0)->IsGraphOutput()) return absl::OkStatus();
    return rw.EraseNode(plan.inner);
  }
};

class TransposeIdentity : public NodeRule<> {
 public:
  TransposeIdentity() : NodeRule("fuse-transposes/transpose-identity", "Transpose") {}

 protected:
  Verdict<> Check(Node* t, RewriteFacts&) const override {
    auto p = PermOf(*t);
    if (!p || !IsIdentity(*p)) return Refuse("the permutation is not the identity");
    if (!t->input(0) || t->output(0)->IsGraphOutput()) return Refuse("its output is a graph output");
    return Matched();
  }

  Status Replace(Node* t, NoPlan, Rewriter& rw) const override { return rw.ReplaceNode(t, {t->input(0)}); }
};

// The `a` of operand Transpose(a, [1,0]) read only by `user`, else null.
Value* TransposedRank2(Value* operand, const Node* user) {
  Node* t = operand ? operand->producer() : nullptr;
  if (!t || !t->Is("Transpose") || !IsStandard(t) || t->graph() != user->graph() || !SingleReader(operand))
    return nullptr;
  auto p = PermOf(*t);
  if (!p || *p != std::vector<int64_t>{1, 0}) return nullptr;
  return t->input(0);
}

bool GemmType(int32_t t, int64_t opset) {
  if (t == Types::FLOAT || t == Types::DOUBLE || t == Types::FLOAT16) return true;
  return opset >= 13 && t == Types::BFLOAT16;
}

// What the pipeline forbids, as a fact for the rules (a MatMul then stays a MatMul; a
// Gemm that is there already may still take a transpose).
struct GemmForbidden {
  bool forbidden = false;
};

// The Gemm replacing the root: its operands (transposes skipped) and attributes.
struct GemmPlan {
  std::vector<Value*> inputs;
  std::vector<onnx::AttributeProto> attributes;
  Node* transposes[2] = {nullptr, nullptr};  // the skipped Transposes
};

class TransposeIntoGemm : public NodeRule<GemmPlan> {
 public:
  explicit TransposeIntoGemm(std::string root) : NodeRule("fuse-transposes/transpose-into-gemm", std::move(root)) {}

 protected:
  Verdict<GemmPlan> Check(Node* n, RewriteFacts& facts) const override {
    if (n->Is("MatMul") && facts.Get<GemmForbidden>().forbidden)
      return Refuse("an earlier pass of the pipeline removed Gemm on purpose");
    const int64_t opset = n->graph()->OpsetVersion("");
    if (n->num_inputs() < 2 || !n->input(0) || !n->input(1)) return Refuse("fewer than two operands");
    Value* a = TransposedRank2(n->input(0), n);
    Value* b = TransposedRank2(n->input(1), n);
    if (!a && !b) return Refuse("no operand is a rank-2 Transpose read only here");
    GemmPlan plan;
    int64_t trans_a = 0, trans_b = 0;
    plan.inputs = n->inputs();
    if (n->Is("Gemm")) {
      trans_a = n->GetInt("transA", 0);
      trans_b = n->GetInt("transB", 0);
      for (const Attribute& attr : n->attributes())
        if (attr.name() != "transA" && attr.name() != "transB") plan.attributes.push_back(attr.proto());
    } else {
      // MatMul -> Gemm only where the two agree: both operands rank 2, a type Gemm takes,
      // and an opset whose Gemm needs no C (11).
      if (opset < 11) return Refuse("Gemm needs C below opset 11");
      auto sa = ShapeOf(n->input(0)), sb = ShapeOf(n->input(1));
      if (!sa || !sb || sa->size() != 2 || sb->size() != 2) return Refuse("an operand is not known to be rank 2");
      if (!GemmType(ElementType(n->input(0)), opset)) return Refuse("the element type is not one Gemm takes");
    }
    if (a) {
      plan.transposes[0] = n->input(0)->producer();
      plan.inputs[0] = a;
      trans_a = 1 - trans_a;
    }
    if (b) {
      plan.transposes[1] = n->input(1)->producer();
      plan.inputs[1] = b;
      trans_b = 1 - trans_b;
    }
    if (trans_a) plan.attributes.push_back(Rewriter::AttrInt("transA", 1));
    if (trans_b) plan.attributes.push_back(Rewriter::AttrInt("transB", 1));
    return plan;
  }

  Status Replace(Node* n, GemmPlan plan, Rewriter& rw) const override {
    Value* y = rw.Op("Gemm", plan.inputs, std::move(plan.attributes));
    CarryType(n->output(0), y);
    OS_RETURN_IF_ERROR(rw.ReplaceNode(n, {y}));
    for (Node* t : plan.transposes)
      if (t) OS_RETURN_IF_ERROR(rw.EraseNode(t));
    return absl::OkStatus();
  }
};

// True when a MatMul reads a Transpose whose rank is not known yet (transpose-into-gemm
// needs both operands' ranks).
bool NeedsRanks(const Model& model) {
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (!n->Is("MatMul") || n->num_inputs() != 2) continue;
    for (Value* in : n->inputs())
      if (in && in->producer() && in->producer()->Is("Transpose") && (!ShapeOf(n->input(0)) || !ShapeOf(n->input(1))))
        return true;
  }
  return false;
}

// True when Transpose(perm) of a value whose dims are `is_one` (true: provably size 1)
// keeps the other dims in order: it moves only size-1 axes, so it is a Reshape.
bool MovesOnlySizeOne(const std::vector<int64_t>& perm, const std::vector<bool>& is_one) {
  int64_t last = -1;
  for (int64_t axis : perm) {
    if (is_one[static_cast<size_t>(axis)]) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

// The constant shape of a Reshape without allowzero, or nullopt.
std::optional<std::vector<int64_t>> ReshapeTarget(const Node& r) {
  if (!r.Is("Reshape") || !IsStandard(&r) || r.num_inputs() != 2 || r.GetInt("allowzero", 0) != 0) return std::nullopt;
  return ConstantInt64s(r.input(1));
}

// Transpose(Reshape(y, s), p) whose permutation moves only size-1 axes -> Reshape(y, s
// permuted): one node for two. A 0 in s (copy y's dim) must keep its position.
struct PermutedReshape {
  Node* reshape;
  std::vector<int64_t> target;  // the Reshape's shape, permuted
};

class ReshapeTranspose : public NodeRule<PermutedReshape> {
 public:
  ReshapeTranspose() : NodeRule("fuse-transposes/size-one-transpose", "Transpose") {}

 protected:
  Verdict<PermutedReshape> Check(Node* t, RewriteFacts&) const override {
    Node* r = t->input(0) ? t->input(0)->producer() : nullptr;
    auto s = r ? ReshapeTarget(*r) : std::nullopt;
    if (!s) return Refuse("the input is not a Reshape to a constant shape");
    if (!SingleReader(t->input(0)) || r->graph() != t->graph()) return Refuse("the Reshape has another reader");
    auto p = PermOf(*t);
    if (!p || p->size() != s->size() || !IsPermutation(*p)) return Refuse("the permutation does not fit the shape");
    std::vector<bool> one(s->size());
    for (size_t i = 0; i < s->size(); ++i) one[i] = (*s)[i] == 1;
    if (!MovesOnlySizeOne(*p, one)) return Refuse("the permutation reorders axes that are not of size 1");
    std::vector<int64_t> target(s->size());
    for (size_t i = 0; i < target.size(); ++i) {
      target[i] = (*s)[static_cast<size_t>((*p)[i])];
      if (target[i] == 0 && (*p)[i] != static_cast<int64_t>(i)) return Refuse("a copied dim (0) would move");
    }
    return PermutedReshape{r, std::move(target)};
  }

  Status Replace(Node* t, PermutedReshape plan, Rewriter& rw) const override {
    Value* y = rw.Op("Reshape", {plan.reshape->input(0), rw.Int64s(plan.target)});
    CarryType(t->output(0), y);
    OS_RETURN_IF_ERROR(rw.ReplaceNode(t, {y}));
    return rw.EraseNode(plan.reshape);
  }
};

// Reshape(Transpose(x, p), s) whose permutation moves only size-1 axes of x -> Reshape(x, s).
class TransposeReshape : public NodeRule<Node*> {  // the plan: the Transpose to skip
 public:
  TransposeReshape() : NodeRule("fuse-transposes/size-one-transpose", "Reshape") {}

 protected:
  Verdict<Node*> Check(Node* r, RewriteFacts&) const override {
    auto s = ReshapeTarget(*r);
    Node* t = r->input(0) ? r->input(0)->producer() : nullptr;
    if (!s || !t || !t->Is("Transpose") || !IsStandard(t) || t->graph() != r->graph())
      return Refuse("not a Reshape to a constant shape of a Transpose");
    if (!SingleReader(r->input(0))) return Refuse("the Transpose has another reader");
    auto shape = ShapeOf(t->input(0));
    auto p = PermOf(*t);
    if (!shape || !p || p->size() != shape->size() || !IsPermutation(*p))
      return Refuse("the Transpose input's rank is unknown");
    std::vector<bool> one(shape->size());
    for (size_t i = 0; i < shape->size(); ++i) one[i] = (*shape)[i].is_static() && (*shape)[i].value == 1;
    if (!MovesOnlySizeOne(*p, one)) return Refuse("the permutation reorders axes that are not of size 1");
    for (size_t i = 0; i < s->size(); ++i)
      if ((*s)[i] == 0 && (i >= p->size() || (*p)[i] != static_cast<int64_t>(i)))
        return Refuse("a copied dim (0) would read another axis");
    return t;
  }

  Status Replace(Node* r, Node* transpose, Rewriter& rw) const override {
    rw.SetInput(r, 0, transpose->input(0));
    return rw.EraseNode(transpose);
  }
};

class FuseTransposesPass : public PatternPass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    TypeRequest request{.sources = TypeSources::kLocalRules};  // no onnx inference
    request.infer.record_value_info = false;                   // ranks to decide with, not saved
    (void)TypeFacts::Ensure(model, NeedsRanks, request);
    RewriteFacts facts(model);
    facts.Emplace<GemmForbidden>(context.IsForbidden("Gemm"));
    return RunRules(model, context, facts);
  }

  FuseTransposesPass() {
    AddRule(std::make_unique<TransposeChain>());
    AddRule(std::make_unique<TransposeIdentity>());
    AddRule(std::make_unique<TransposeIntoGemm>("Gemm"));
    AddRule(std::make_unique<TransposeIntoGemm>("MatMul"));
    AddRule(std::make_unique<ReshapeTranspose>());
    AddRule(std::make_unique<TransposeReshape>());
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseTransposesPass(const PassOptions&) {
  return std::make_unique<FuseTransposesPass>();
}

}  // namespace onnxsurgeon::passes
