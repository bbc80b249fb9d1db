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
// flatten-region: a connected region of nodes that compute the same on a [M,c] view of
// values shaped [d0,...,dk,c] (static, rank >= 3, one leading shape L=[d0..dk] for the whole
// region, M = prod(L)) runs on the 2-D view instead: MatMul(A, B) with B rank 2, unary
// elementwise ops, binary elementwise ops whose other operand is a region value of the same
// shape or a co-operand that broadcasts the same on both views (rank 0, or rank 1 of size 1
// or c; a [1,1,c] would change the broadcast rank, so it keeps the node out). Entries get one
// Reshape to [M,c] each (none when the entry is a Reshape of a [M,c] value: it is bypassed);
// exits read by Reshapes only (not graph outputs) feed those Reshapes directly (a Reshape
// to [M,c] then goes); other exits get one Reshape back, which keeps their names. The
// region is rewritten only when that leaves fewer nodes, counting the MatMul + Add pairs
// that matmul-add-gemm then fuses; --debug-patterns shows the count of a refused region.
// New 2-D values carry their shape in memory only (value_info is never given a shape that
// is not true); the old values go with the old nodes.
//   Before:  v = Reshape(g[16,128], [2,8,128])   t = Tanh(Mul(v, 0.5))
//            y = Reshape(t, [-1,128])
//   After:   y = Tanh(Mul(g, 0.5))
//   Before:  h = Add(MatMul(x[2,5,32], W1), b1)  g = Gelu(h)   y = Add(MatMul(g, W2), b2)
//   After:   x2 = Reshape(x, [10,32])  y2 = Gemm(Gelu(Gemm(x2, W1, b1)), W2, b2)
//            y = Reshape(y2, [2,5,32])
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

namespace onnxsurgeon::passes {
namespace {

bool IsOp(const Node* n, std::string_view op) { return n && n->Is(op); }

Shape StaticShape(const std::vector<int64_t>& v) {
  Shape s;
  for (int64_t d : v) s.push_back(Dim::Static(d));
  return s;
}


// The shape input of a Reshape (opset >= 5) as constants, or nullopt.
std::optional<std::vector<int64_t>> ShapeInput(const Node& reshape) {
  if (reshape.num_inputs() < 2 || !reshape.input(1)) return std::nullopt;
  return ConstantInt64s(reshape.input(1));
}

bool AllowZero(const Node& reshape) { return reshape.GetInt("allowzero", 0) != 0; }

// The output shape of Reshape(input shaped `in`, `s`): onnx's rule
// (shape_rules::ReshapeShape), and where that leaves the -1 unknown, the one dim_param left
// after cancelling equal dims of input and output. Nullopt when `s` is invalid for `in`.
std::optional<Shape> ResolveReshape(const Shape& in, const std::vector<int64_t>& s, bool allowzero) {
  auto out = shape_rules::ReshapeShape(in, s, allowzero);
  auto minus_one = std::find(s.begin(), s.end(), -1);
  if (!out || minus_one == s.end() || !(*out)[minus_one - s.begin()].is_unknown()) return out;
  const int infer = static_cast<int>(minus_one - s.begin());
  Shape& shape = *out;
  // Cancel dims of the input against the other output dims; what is left is the -1.
  std::vector<Dim> rest_in(in.begin(), in.end());
  std::vector<Dim> rest_out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int>(i) == infer) continue;
    auto it = std::find_if(rest_in.begin(), rest_in.end(), [&](const Dim& d) { return d.SameAs(shape[i]); });
    if (it != rest_in.end() && !shape[i].is_unknown()) rest_in.erase(it);
    else rest_out.push_back(shape[i]);
  }
  int64_t num = 1, den = 1;
  std::vector<Dim> symbolic;
  for (const Dim& d : rest_in) {
    if (d.is_static()) num *= d.value;
    else symbolic.push_back(d);
  }
  for (const Dim& d : rest_out) {
    if (!d.is_static()) return out;  // unknown -1
    den *= d.value;
  }
  if (symbolic.empty()) {
    if (den > 0 && num % den == 0) shape[infer] = Dim::Static(num / den);
  } else if (symbolic.size() == 1 && num == 1 && den == 1) {
    shape[infer] = symbolic[0];
  }
  return out;
}

// The shape of `v`: a Reshape's output is derived from its shape input and its input (a
// stale annotation would mislead every rule here); otherwise ShapeOf.
std::optional<Shape> ShapeOfValue(const Value* v) {
  if (!v) return std::nullopt;
  if (Node* p = v->producer(); IsOp(p, "Reshape")) {
    auto s = ShapeInput(*p);
    auto in = ShapeOf(p->input(0));
    if (s && in) {
      auto out = ResolveReshape(*in, *s, AllowZero(*p));
      if (out && std::none_of(out->begin(), out->end(), [](const Dim& d) { return d.is_unknown(); })) return out;
    }
  }
  return ShapeOf(v);
}

std::optional<std::vector<int64_t>> StaticOf(const Value* v) { return StaticDims(ShapeOfValue(v)); }

// Records a type on `v` in memory (not in value_info: nothing is saved that was not there).
void SetType(Value* v, int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto* t = v->mutable_info()->mutable_type();
  t->Clear();
  auto* tt = t->mutable_tensor_type();
  if (elem_type) tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// ---- reshape-noop -----------------------------------------------------------------------

class ReshapeNoopRule : public RewriteRule {
 public:
  ReshapeNoopRule() : RewriteRule("reshape-noop", "Reshape", "", 4) {}
  StatusOr<bool> MatchAndRewrite(Node* r, Rewriter& rw, std::string* why) override {
    Value* x = r->input(0);
    Value* y = r->output(0);
    if (!x || !y) return Refuse(why, "no data input or output");
    auto s = ShapeInput(*r);
    if (!s) return Refuse(why, "the shape input is not a constant");
    auto in = ShapeOf(x);
    if (!in) return Refuse(why, absl::StrCat("the rank of '", x->name(), "' is unknown"));
    auto out = ResolveReshape(*in, *s, AllowZero(*r));
    if (!out || !SameShape(*out, *in)) {
      return Refuse(why, absl::StrCat("the output shape ", out ? ShapeToString(*out) : "(invalid)",
                                      " is not provably the input shape ", ShapeToString(*in)));
    }
    if (y->IsGraphOutput() && !(x->producer() && x->graph() == y->graph() && !x->IsGraphOutput()))
      return Refuse(why, "the output is a graph output whose name the input cannot take");
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(y, x));
    OS_RETURN_IF_ERROR(rw.EraseNode(r));
    return true;
  }
};

// ---- reshape-chain ----------------------------------------------------------------------

class ReshapeChainRule : public RewriteRule {
 public:
  ReshapeChainRule() : RewriteRule("reshape-chain", "Reshape", "", 3) {}
  StatusOr<bool> MatchAndRewrite(Node* outer, Rewriter& rw, std::string* why) override {
    Value* mid = outer->input(0);
    Node* inner = mid ? mid->producer() : nullptr;
    if (!IsOp(inner, "Reshape")) return Refuse(why, "the input is not a Reshape's output");
    Value* x = inner->input(0);
    auto s2 = ShapeInput(*outer);
    if (!x || !s2) return Refuse(why, "the outer shape input is not a constant");
    std::vector<int64_t> shape = *s2;
    bool rewritten = false;
    if (!AllowZero(*outer) && std::count(shape.begin(), shape.end(), 0) > 0) {
      // Each 0 copies the intermediate's dim: the same when x has that dim there, else the
      // intermediate's static size.
      auto mid_shape = ShapeOfValue(mid);
      auto x_shape = ShapeOf(x);
      for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] != 0) continue;
        if (!mid_shape || i >= mid_shape->size())
          return Refuse(why, absl::StrCat("the 0 at position ", i, " copies a dim of the intermediate that is unknown"));
        const Dim& d = (*mid_shape)[i];
        if (x_shape && i < x_shape->size() && (*x_shape)[i].SameAs(d)) continue;
        if (!d.is_static() || d.value == 0) {
          return Refuse(why, absl::StrCat("the 0 at position ", i, " copies the intermediate's dim ", d.ToString(),
                                          ", which x does not have there"));
        }
        shape[i] = d.value;
        rewritten = true;
      }
    }
    std::vector<onnx::AttributeProto> attributes;
    for (const Attribute& a : outer->attributes()) attributes.push_back(a.proto());
    Value* shape_value = rewritten ? rw.Int64s(shape) : outer->input(1);
    Value* y = rw.Op("Reshape", {x, shape_value}, std::move(attributes));
    if (outer->output(0)->has_type()) *y->mutable_info()->mutable_type() = outer->output(0)->info()->type();
    OS_RETURN_IF_ERROR(rw.ReplaceNode(outer, {y}));
    return true;
  }
};

// ---- matmul-add-gemm --------------------------------------------------------------------

bool GemmType(int32_t t, int64_t opset) {
  using TP = onnx::TensorProto;
  if (t == TP::FLOAT || t == TP::DOUBLE || t == TP::FLOAT16) return opset >= 7;
  if (t == TP::INT32 || t == TP::INT64 || t == TP::UINT32 || t == TP::UINT64) return opset >= 11;
  if (t == TP::BFLOAT16) return opset >= 13;
  return false;
}

// Why Add(MatMul(A, B), C) cannot become Gemm when A is shaped `a` (empty: it can).
std::string GemmBlocker(const Node& matmul, const Node& add, const std::optional<Shape>& a) {
  Value* b = matmul.input(1);
  Value* c = add.input(0) == matmul.output(0) ? add.input(1) : add.input(0);
  if (!matmul.output(0) || matmul.output(0)->uses().size() != 1 || matmul.output(0)->IsGraphOutput())
    return "the MatMul's output is read by more than the Add";
  if (add.num_inputs() != 2 || !c) return "the Add does not have two inputs";
  if (matmul.num_inputs() != 2 || !matmul.input(0) || !b) return "the MatMul does not have two inputs";
  if (!a || a->size() != 2) return absl::StrCat("A ('", matmul.input(0)->name(), "') is not known to be rank 2");
  auto bs = ShapeOfValue(b);
  if (!bs || bs->size() != 2) return absl::StrCat("B ('", b->name(), "') is not known to be rank 2");
  int64_t opset = add.graph()->OpsetVersion("");
  int32_t t = ElementType(matmul.input(0));
  if (!t) t = ElementType(b);
  if (!GemmType(t, opset)) {
    return absl::StrCat("element type ", t ? onnx::TensorProto::DataType_Name(t) : std::string("unknown"),
                        " is not one Gemm takes at opset ", opset);
  }
  auto cs = ShapeOfValue(c);
  if (!cs || cs->size() > 2) return absl::StrCat("the bias '", c->name(), "' is not known to be rank <= 2");
  const Dim target[2] = {(*a)[0], (*bs)[1]};
  for (size_t i = 0; i < cs->size(); ++i) {
    const Dim& d = (*cs)[cs->size() - 1 - i];
    if (d.is_static() && d.value == 1) continue;
    if (!d.SameAs(target[1 - i]))
      return absl::StrCat("the bias ", ShapeToString(*cs), " does not broadcast to [", target[0].ToString(), ",",
                          target[1].ToString(), "]");
  }
  return "";
}

class MatMulAddGemmRule : public RewriteRule {
 public:
  MatMulAddGemmRule() : RewriteRule("matmul-add-gemm", "Add", "", 2) {}
  StatusOr<bool> MatchAndRewrite(Node* add, Rewriter& rw, std::string* why) override {
    if (add->num_inputs() != 2) return Refuse(why, "not a binary Add");
    std::string reason = "no operand is a MatMul's output";
    for (int i = 0; i < 2; ++i) {
      Node* mm = add->input(i) ? add->input(i)->producer() : nullptr;
      if (!IsOp(mm, "MatMul") || mm->graph() != add->graph()) continue;
      reason = GemmBlocker(*mm, *add, ShapeOfValue(mm->input(0)));
      if (!reason.empty()) continue;
      Value* y = rw.Op("Gemm", {mm->input(0), mm->input(1), add->input(1 - i)});
      if (add->output(0)->has_type()) *y->mutable_info()->mutable_type() = add->output(0)->info()->type();
      OS_RETURN_IF_ERROR(rw.ReplaceNode(add, {y}));
      OS_RETURN_IF_ERROR(rw.EraseNode(mm));
      return true;
    }
    return Refuse(why, reason);
  }
};

// ---- flatten-region ---------------------------------------------------------------------

bool IsUnary(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {
      "Relu", "Tanh",  "Sigmoid", "Erf",   "Gelu",     "Exp",   "Log",  "Neg",  "Abs",      "Sqrt",
      "Reciprocal", "Softplus", "Softsign", "Cast", "LeakyRelu", "Elu", "Selu", "Celu", "HardSigmoid",
      "HardSwish", "Mish", "Sin", "Cos", "Floor", "Ceil", "Round", "Sign", "Not", "Identity"};
  return kOps.contains(op);
}
bool IsBinary(const std::string& op) {
  static const absl::flat_hash_set<std::string> kOps = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"};
  return kOps.contains(op);
}

class FlattenRegionRule : public RewriteRule {
 public:
  FlattenRegionRule(std::string root_op, absl::flat_hash_set<const Node*>* refused, bool* changed_order)
      : RewriteRule("flatten-region", std::move(root_op), "", 1), refused_(refused), changed_order_(changed_order) {}

  StatusOr<bool> MatchAndRewrite(Node* root, Rewriter& rw, std::string* why) override {
    if (refused_->contains(root)) return Refuse(why, "its region was refused already in this run");
    std::vector<std::pair<Node*, std::vector<int64_t>>> seeds;  // node, leading dims L
    auto leading = [](const Value* v) -> std::optional<std::vector<int64_t>> {
      auto s = StaticOf(v);
      if (!s || s->size() < 3) return std::nullopt;
      for (int64_t d : *s)
        if (d <= 0) return std::nullopt;
      s->pop_back();
      return s;
    };
    if (IsOp(root, "MatMul")) {
      if (auto l = leading(root->input(0))) seeds.emplace_back(root, *l);
    } else {  // a Reshape: the region around its input, and the region around its output
      if (auto l = leading(root->input(0)); l && root->input(0)->producer())
        seeds.emplace_back(root->input(0)->producer(), *l);
      if (auto l = leading(root->output(0)))
        for (const Use& u : root->output(0)->uses()) seeds.emplace_back(u.node, *l);
    }
    std::string reason = "no input or output shaped [d0,...,dk,c] with static dims and rank >= 3";
    if (!seeds.empty()) reason = "neither its producer nor its readers can run on a 2-D view";
    for (auto& [seed, l] : seeds) {
      if (!Eligible(seed, l, root->graph(), nullptr)) {
        if (seed == root) reason = absl::StrCat("'", root->name(), "' cannot run on a 2-D view");
        continue;
      }
      Region region;
      region.leading = l;
      Grow(seed, region);
      Plan(region);
      if (region.delta < 0) {
        OS_RETURN_IF_ERROR(Rewrite(region, rw));
        *changed_order_ = true;
        return true;
      }
      reason = absl::StrCat("running the region of ", region.nodes.size(), " nodes on 2-D values would change the node count by ",
                            region.delta, " (entries ", region.entry_cost, ", exits ", region.exit_cost, ", Gemms ",
                            -region.gemms, ")");
      for (Node* n : region.nodes)
        if (n->op_type() == "MatMul") refused_->insert(n);
      for (const auto& e : region.entries)
        if (Node* p = e.value->producer(); IsOp(p, "Reshape")) refused_->insert(p);
      for (const auto& x : region.exits)
        for (Node* r : x.reshapes) refused_->insert(r);
    }
    return Refuse(why, reason);
  }

 private:
  struct Entry {
    Value* value;
    Value* source;       // what the 2-D value is made from
    bool bypass;         // source is already [M,c]
    int64_t c;
  };
  struct Exit {
    Value* value;
    std::vector<Node*> reshapes;  // its readers, when all are Reshapes with a static target
    std::vector<std::vector<int64_t>> targets;
    int64_t c;
  };
  struct Region {
    std::vector<int64_t> leading;
    int64_t m = 1;
    std::vector<Node*> nodes;
    absl::flat_hash_set<Node*> in;
    absl::flat_hash_map<Node*, int64_t> c_out;
    std::vector<Entry> entries;
    std::vector<Exit> exits;
    int64_t entry_cost = 0, exit_cost = 0, gemms = 0, delta = 0;
  };

  static std::optional<int64_t> LastDimIfRegionShaped(const Value* v, const std::vector<int64_t>& l) {
    auto s = StaticOf(v);
    if (!s || s->size() != l.size() + 1 || !std::equal(l.begin(), l.end(), s->begin())) return std::nullopt;
    return s->back();
  }

  // True when `n` computes the same on [M,c] views of its region-shaped inputs; `data` gets
  // the indices of those inputs (the ones that change shape).
  static bool Eligible(const Node* n, const std::vector<int64_t>& l, const Graph* g, std::vector<int>* data,
                       int64_t* c_out = nullptr) {
    if (!n || n->graph() != g || !CanonicalDomain(n->domain()).empty() || n->num_outputs() != 1 || !n->output(0) ||
        !n->subgraphs().empty())
      return false;
    std::vector<int> d;
    int64_t c = -1;
    const std::string& op = n->op_type();
    if (IsUnary(op)) {
      if (n->num_inputs() != 1) return false;
      auto ci = LastDimIfRegionShaped(n->input(0), l);
      if (!ci) return false;
      d = {0};
      c = *ci;
    } else if (op == "MatMul") {
      if (n->num_inputs() != 2) return false;
      auto k = LastDimIfRegionShaped(n->input(0), l);
      auto b = StaticOf(n->input(1));
      if (!k || !b || b->size() != 2 || (*b)[0] != *k) return false;
      d = {0};
      c = (*b)[1];
    } else if (IsBinary(op)) {
      if (n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return false;
      std::optional<int64_t> cs[2] = {LastDimIfRegionShaped(n->input(0), l), LastDimIfRegionShaped(n->input(1), l)};
      if (!cs[0] && !cs[1]) return false;
      if (cs[0] && cs[1] && *cs[0] != *cs[1]) return false;
      c = cs[0] ? *cs[0] : *cs[1];
      for (int i = 0; i < 2; ++i) {
        if (cs[i]) {
          d.push_back(i);
          continue;
        }
        // The co-operand must broadcast the same against [..., c] and [M, c].
        auto s = ShapeOfValue(n->input(i));
        if (!s || s->size() > 1) return false;
        if (s->size() == 1 && !((*s)[0].is_static() && ((*s)[0].value == 1 || (*s)[0].value == c))) return false;
      }
    } else {
      return false;
    }
    // An annotation that disagrees with the derived output shape: leave the node alone.
    if (auto out = ShapeOf(n->output(0))) {
      std::vector<int64_t> expected = l;
      expected.push_back(c);
      if (!SameShape(*out, StaticShape(expected))) return false;
    }
    if (data) *data = std::move(d);
    if (c_out) *c_out = c;
    return true;
  }

  static bool IsDataInput(const Node* n, int index, const std::vector<int64_t>& l) {
    std::vector<int> d;
    if (!Eligible(n, l, n->graph(), &d)) return false;
    return std::find(d.begin(), d.end(), index) != d.end();
  }

  static void Grow(Node* seed, Region& r) {
    constexpr size_t kMaxRegion = 100000;
    std::deque<Node*> queue = {seed};
    r.in.insert(seed);
    const Graph* g = seed->graph();
    auto visit_users = [&](Value* v) {
      for (const Use& u : v->uses()) {
        if (r.in.contains(u.node) || r.in.size() >= kMaxRegion) continue;
        if (IsDataInput(u.node, u.input_index, r.leading)) {
          r.in.insert(u.node);
          queue.push_back(u.node);
        }
      }
    };
    while (!queue.empty()) {
      Node* n = queue.front();
      queue.pop_front();
      r.nodes.push_back(n);
      std::vector<int> data;
      int64_t c = 0;
      Eligible(n, r.leading, g, &data, &c);
      r.c_out[n] = c;
      for (int i : data) {
        Value* v = n->input(i);
        Node* p = v->producer();
        if (p && !r.in.contains(p) && r.in.size() < kMaxRegion && Eligible(p, r.leading, g, nullptr)) {
          r.in.insert(p);
          queue.push_back(p);
        }
        visit_users(v);
      }
      visit_users(n->output(0));
    }
  }

  // Entries, exits and the node count change of running the region on 2-D values.
  static void Plan(Region& r) {
    for (int64_t d : r.leading) r.m *= d;
    absl::flat_hash_set<Value*> seen;
    for (Node* n : r.nodes) {
      std::vector<int> data;
      Eligible(n, r.leading, n->graph(), &data);
      for (int i : data) {
        Value* v = n->input(i);
        if ((v->producer() && r.in.contains(v->producer())) || !seen.insert(v).second) continue;
        Entry e{v, v, false, *LastDimIfRegionShaped(v, r.leading)};
        bool only_region = !v->IsGraphOutput() &&
                           std::all_of(v->uses().begin(), v->uses().end(), [&](const Use& u) { return r.in.contains(u.node); });
        Node* p = v->producer();
        if (IsOp(p, "Reshape") && p->input(0)) {
          e.source = p->input(0);
          auto xs = StaticOf(e.source);
          e.bypass = xs && *xs == std::vector<int64_t>{r.m, e.c};
          r.entry_cost += e.bypass ? (only_region ? -1 : 0) : (only_region ? 0 : 1);
        } else {
          r.entry_cost += 1;
        }
        r.entries.push_back(e);
      }
    }
    for (Node* n : r.nodes) {
      Value* v = n->output(0);
      bool outside = v->IsGraphOutput() ||
                     std::any_of(v->uses().begin(), v->uses().end(), [&](const Use& u) { return !r.in.contains(u.node); });
      if (!outside) continue;
      Exit x{v, {}, {}, r.c_out[n]};
      std::vector<int64_t> shape = r.leading;
      shape.push_back(x.c);
      const Shape in = StaticShape(shape);
      bool all_reshapes = !v->IsGraphOutput();
      int64_t cost = 0;
      for (const Use& u : v->uses()) {
        if (!all_reshapes) break;
        if (r.in.contains(u.node)) continue;
        auto s = IsOp(u.node, "Reshape") && u.input_index == 0 ? ShapeInput(*u.node) : std::nullopt;
        auto t = s ? ResolveReshape(in, *s, AllowZero(*u.node)) : std::nullopt;
        std::vector<int64_t> target;
        for (const Dim& d : t ? *t : Shape{}) {
          if (!d.is_static() || d.value <= 0) break;
          target.push_back(d.value);
        }
        if (!t || target.size() != t->size() || std::find(x.reshapes.begin(), x.reshapes.end(), u.node) != x.reshapes.end()) {
          all_reshapes = false;
          break;
        }
        if (target == std::vector<int64_t>{r.m, x.c} && !u.node->output(0)->IsGraphOutput()) cost -= 1;
        x.reshapes.push_back(u.node);
        x.targets.push_back(std::move(target));
      }
      if (!all_reshapes) {
        x.reshapes.clear();
        x.targets.clear();
        cost = 1;
      }
      r.exit_cost += cost;
      r.exits.push_back(std::move(x));
    }
    for (Node* n : r.nodes) {
      if (n->op_type() != "MatMul" || n->output(0)->uses().size() != 1) continue;
      Node* add = n->output(0)->uses()[0].node;
      if (!IsOp(add, "Add") || !r.in.contains(add)) continue;
      Shape a = {Dim::Static(r.m), Dim::Static(*LastDimIfRegionShaped(n->input(0), r.leading))};
      if (GemmBlocker(*n, *add, a).empty()) ++r.gemms;
    }
    r.delta = r.entry_cost + r.exit_cost - r.gemms;
  }

  static Status Rewrite(Region& r, Rewriter& rw) {
    absl::flat_hash_map<Value*, Value*> flat;  // old region-shaped value -> its [M,c] value
    for (const Entry& e : r.entries) {
      if (e.bypass) {
        flat[e.value] = e.source;
      } else {
        Value* y = rw.Op("Reshape", {e.source, rw.Int64s({r.m, e.c})});
        SetType(y, ElementType(e.value), {r.m, e.c});
        flat[e.value] = y;
      }
    }
    // Topological order within the region.
    absl::flat_hash_map<Node*, int> pending;
    for (Node* n : r.nodes) {
      int k = 0;
      for (Value* v : n->inputs())
        if (v && v->producer() && r.in.contains(v->producer())) ++k;
      pending[n] = k;
    }
    std::vector<Node*> order;
    for (Node* n : r.nodes)
      if (pending[n] == 0) order.push_back(n);
    for (size_t i = 0; i < order.size(); ++i) {
      for (const Use& u : order[i]->output(0)->uses())
        if (r.in.contains(u.node) && --pending[u.node] == 0) order.push_back(u.node);
    }
    if (order.size() != r.nodes.size()) return absl::InternalError("flatten-region: the region has a cycle");
    for (Node* n : order) {
      std::vector<Value*> inputs;
      for (Value* v : n->inputs()) {
        auto it = v ? flat.find(v) : flat.end();
        inputs.push_back(it != flat.end() ? it->second : v);
      }
      std::vector<onnx::AttributeProto> attributes;
      for (const Attribute& a : n->attributes()) attributes.push_back(a.proto());
      Value* y = rw.Op(n->op_type(), std::move(inputs), std::move(attributes));
      SetType(y, ElementType(n->output(0)), {r.m, r.c_out[n]});
      flat[n->output(0)] = y;
    }
    // Everything new is created before anything is erased (the root may be an exit's Reshape).
    std::vector<std::pair<Node*, Value*>> bypassed;  // exit Reshape to [M,c] -> its 2-D value
    std::map<std::vector<int64_t>, Value*> targets;     // one shape constant per target
    for (const Exit& x : r.exits) {
      Value* y = flat[x.value];
      if (!x.reshapes.empty()) {
        for (size_t i = 0; i < x.reshapes.size(); ++i) {
          Node* reshape = x.reshapes[i];
          if (x.targets[i] == std::vector<int64_t>{r.m, x.c} && !reshape->output(0)->IsGraphOutput()) {
            bypassed.emplace_back(reshape, y);
          } else {
            rw.SetInput(reshape, 0, y);
            // Its shape input may say the same of the 2-D value ([2,-1,2,16] of [16,32]).
            Shape flat_in = {Dim::Static(r.m), Dim::Static(x.c)};
            auto s = ShapeInput(*reshape);
            auto same = s ? ResolveReshape(flat_in, *s, AllowZero(*reshape)) : std::nullopt;
            if (!same || !SameShape(*same, StaticShape(x.targets[i]))) {
              Value*& target = targets[x.targets[i]];
              if (!target) target = rw.Int64s(x.targets[i]);
              rw.SetInput(reshape, 1, target);
            }
          }
        }
        continue;
      }
      std::vector<int64_t> shape = r.leading;
      shape.push_back(x.c);
      Value* back = rw.Op("Reshape", {y, rw.Int64s(shape)});
      if (x.value->has_type()) *back->mutable_info()->mutable_type() = x.value->info()->type();
      else SetType(back, ElementType(x.value), shape);
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(x.value, back));
    }
    for (auto& [reshape, y] : bypassed) {
      OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(reshape->output(0), y));
      OS_RETURN_IF_ERROR(rw.EraseNode(reshape));
    }
    // The old region (every output now unused), then entry Reshapes nothing reads any more.
    std::vector<Node*> dead(order.rbegin(), order.rend());
    for (const Entry& e : r.entries)
      if (Node* p = e.value->producer(); IsOp(p, "Reshape") && !r.in.contains(p)) dead.push_back(p);
    rw.EraseDead(std::move(dead));
    return absl::OkStatus();
  }

  absl::flat_hash_set<const Node*>* refused_;
  bool* changed_order_;
};

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
    AddRule(std::make_unique<ReshapeChainRule>());
    AddRule(std::make_unique<MatMulAddGemmRule>());
    AddRule(std::make_unique<FlattenRegionRule>("MatMul", &refused_, &reordered_));
    AddRule(std::make_unique<FlattenRegionRule>("Reshape", &refused_, &reordered_));
  }
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    refused_.clear();
    reordered_ = false;
    InferShapesOptions infer;
    infer.data_propagation = false;
    infer.record_value_info = false;  // shapes to decide with, not saved
    // Local rules first; onnx inference only for what they leave unknown. Failure:
    // unknown shapes, those rules refuse.
    (void)EnsureShapes(model, infer, NeedsShapes);
    OS_ASSIGN_OR_RETURN(PassResult result, PatternPass::Run(model, context));
    if (reordered_) {  // flatten-region inserts its nodes before its root
      OS_RETURN_IF_ERROR(SortAll(model.graph()));
      for (auto& f : model.functions()) OS_RETURN_IF_ERROR(SortAll(f->body()));
    }
    return result;
  }

 private:
  absl::flat_hash_set<const Node*> refused_;
  bool reordered_ = false;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFuseReshapesPass(const PassOptions&) {
  return std::make_unique<FuseReshapesPass>();
}

}  // namespace onnxsurgeon::passes
