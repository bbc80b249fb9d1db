// resolve-shapes: evaluates shape arithmetic symbolically and rewrites what it decides.
//
// Exporters compute shapes at run time even where the answer is known up to a symbol:
// `x.view(x.size(0), -1)` becomes Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
// fold-constants folds such chains only when every dim is static; this pass also follows
// dynamic dims. One walk per graph in topological order gives every small integer or bool
// vector (rank 0 or 1, at most 64 elements) built from Shape, Size, Gather, Slice,
// Unsqueeze, Squeeze, Concat, Reshape, Identity, Cast, Add, Sub, Mul, Div, Equal, Not and
// Where a list of elements, each a constant or a symbol:
//   - a dim of a value's shape (ShapeOf: a static size, a dim_param -- one dim_param is one
//     size everywhere in a model -- or, for an unknown dim, "dim i of that value"),
//   - element i of a vector the walk cannot see through (itself, and nothing else),
//   - an arithmetic expression of symbols (equal only to the same expression).
// Dims are sizes, so they are never negative; Equal(dim, -1) is decided false.
//
// Rules (counts in the pass result; --debug-patterns says why a candidate stays):
//   constant-vector  a computed vector whose every element is a constant (e.g. an Equal of
//                    a dim and -1) -> that constant
//   same-vector      a computed vector whose element list equals an earlier vector's (two
//                    Gathers of the same symbolic dim from different Shape nodes; Concat of
//                    every dim of x; a [n]-vector reshaped to [-1]) -> the earlier value
//   reshape-shape    Reshape(x, s), s computed -> Reshape(x, constant): each element a
//                    constant, or 0 where it is dim i of x (i < rank of x; allowzero=0 only,
//                    as 0 means "copy dim i" only then)
//   where-constant   Where(c, a, b), c a constant or decided all true (all false), the
//                    others broadcasting into a (b) without growing it -> a (b)
//   expand-noop      Expand(x, s), every element of s 1 or x's aligned dim -> x
//   slice-noop       Slice(x, ...), every sliced axis from 0 (step 1) to its dim or past it -> x
//   tile-noop        Tile(x, repeats), every repeat 1 -> x
//   unsqueeze-chain  Unsqueeze(Unsqueeze(x, a1), a2), the inner read only here
//                    -> Unsqueeze(x, a1 and a2 as axes of the result)
// Never introduced: a -1 the model did not have. Reshape's -1 divides the element count by
// the product of the other dims, which is ambiguous (onnxruntime refuses it) when another
// dim is 0; a constant or a copied dim (0) is exactly the value the model computed for
// every input, zero-size tensors included, so rewriting to them never changes a result.
// Graph outputs are never replaced (their names are the model's interface).
//
// Types come from the model and onnx shape inference, run (types kept in memory, no
// value_info saved) only when a Shape/Size/Reshape/Expand/Slice/Tile/Where reads a value
// without a known shape, or with a dim that is neither static nor symbolic (then the
// in-memory types are inferred afresh, as onnx's data propagation may decide it now); a
// model without such reads pays nothing. Nodes the rewrites leave
// unused are erased at once (so nothing only they read is materialized).
//
// Before:  s = Shape(X)  b = Gather(s, zero)  u = Unsqueeze(b, ax)  c = Concat(u, minus1)
//          Y = Reshape(X, c)                    (X : float[batch,8,4,4])
// After:   Y = Reshape(X, {0,-1})
#include <algorithm>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/rewrite/rewriter.h"
#include "core/shape/propagate.h"
#include "core/shape/slicing.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using Types = onnx::TensorProto;

constexpr size_t kMaxElems = 64;

// One element of a vector: a constant, or a symbol (equal only to the same key).
struct Elem {
  bool is_const = false;
  int64_t c = 0;
  std::string key;       // symbol, when !is_const
  bool nonneg = false;   // provably >= 0

  static Elem Const(int64_t v) { return {true, v, {}, v >= 0}; }
  static Elem Sym(std::string key, bool nonneg) { return {false, 0, std::move(key), nonneg}; }
  std::string Key() const { return is_const ? absl::StrCat("#", c) : key; }
  bool Same(const Elem& o) const { return is_const == o.is_const && (is_const ? c == o.c : key == o.key); }
};

// What the walk knows of a small integer or bool value of rank 0 or 1.
struct Vec {
  int32_t dtype = 0;    // INT64, INT32 or BOOL
  bool scalar = false;  // rank 0 (one element) or rank 1
  std::vector<Elem> e;
  bool AllConst() const {
    return std::all_of(e.begin(), e.end(), [](const Elem& x) { return x.is_const; });
  }
  std::string Key() const {
    std::string k = absl::StrCat(dtype, scalar ? "s" : "v", ":");
    for (const Elem& x : e) absl::StrAppend(&k, x.Key(), ",");
    return k;
  }
};

bool IsIntType(int32_t t) { return t == Types::INT64 || t == Types::INT32; }

bool Fits(int32_t dtype, int64_t v) {
  if (dtype == Types::INT32) return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  if (dtype == Types::BOOL) return v == 0 || v == 1;
  return true;
}

std::string Ptr(const void* p) { return absl::StrCat(reinterpret_cast<uintptr_t>(p)); }

// The element that stands for dim `i` of `v` whose shape is `shape`.
Elem DimElem(const Value* v, const Shape& shape, size_t i) {
  const Dim& d = shape[i];
  if (d.is_static()) return Elem::Const(d.value);
  if (d.is_symbolic()) return Elem::Sym("s:" + d.symbol, true);
  return Elem::Sym(absl::StrCat("d:", Ptr(v), ":", i), true);
}

std::optional<int64_t> CheckedOp(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case '+': if (__builtin_add_overflow(a, b, &r)) return std::nullopt; return r;
    case '-': if (__builtin_sub_overflow(a, b, &r)) return std::nullopt; return r;
    case '*': if (__builtin_mul_overflow(a, b, &r)) return std::nullopt; return r;
    case '/':
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return a / b;  // truncation, as onnxruntime's integer Div
  }
  return std::nullopt;
}

// Given two elements and an operator. Result their combination (nullopt when not sound
// to express: overflow, division by zero).
std::optional<Elem> Arith(char op, const Elem& a, const Elem& b) {
  if (a.is_const && b.is_const) {
    auto r = CheckedOp(op, a.c, b.c);
    if (!r) return std::nullopt;
    return Elem::Const(*r);
  }
  // Identities of integer arithmetic.
  if ((op == '+' || op == '-') && b.is_const && b.c == 0) return a;
  if (op == '+' && a.is_const && a.c == 0) return b;
  if ((op == '*' || op == '/') && b.is_const && b.c == 1) return a;
  if (op == '*' && a.is_const && a.c == 1) return b;
  if (op == '*' && ((a.is_const && a.c == 0) || (b.is_const && b.c == 0))) return Elem::Const(0);
  if (op == '/' && b.is_const && b.c == 0) return std::nullopt;
  std::string ka = a.Key(), kb = b.Key();
  if ((op == '+' || op == '*') && kb < ka) std::swap(ka, kb);
  bool nonneg = false;
  if (op == '+' || op == '*') nonneg = a.nonneg && b.nonneg;
  if (op == '/') nonneg = a.nonneg && b.is_const && b.c > 0;
  return Elem::Sym(absl::StrCat("(", std::string(1, op), " ", ka, " ", kb, ")"), nonneg);
}

class Resolver {
 public:
  Resolver(PassResult& result, const PassContext& context) : result_(result), context_(context) {}

  Status RunGraph(Graph& g) {
    if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
    std::vector<Node*> order;
    for (Node* n : g.nodes()) order.push_back(n);
    for (Node* n : order) {
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(RunGraph(*sub));
      Evaluate(n);
    }
    // Rewrites, readers before what they read (a constant Reshape shape leaves its Concat
    // chain unread, and nothing in it is then materialized); they only rewire uses and
    // add nodes and constants, so what the walk learned stays true.
    for (auto it = order.rbegin(); it != order.rend(); ++it)
      if (!erased_.contains(*it)) OS_RETURN_IF_ERROR(Rewrite(*it));
    return absl::OkStatus();
  }

 private:
  // Given a value whose uses were moved away. Execute erases its producer if that left it
  // unused, and the producers of its inputs in turn (only nodes of this graph, without
  // subgraphs or custom domains). Result nothing the rewrite made dead stays to be read.
  void EraseDeadFrom(Value* start) {
    Rewriter rw;
    rw.SetRule("resolve-shapes");
    std::vector<Value*> work = {start};
    while (!work.empty()) {
      Value* v = work.back();
      work.pop_back();
      Node* n = v ? v->producer() : nullptr;
      if (!n || v->HasUsers() || !n->subgraphs().empty() || !CanonicalDomain(n->domain()).empty()) continue;
      bool used = std::any_of(n->outputs().begin(), n->outputs().end(), [](Value* o) { return o && o->HasUsers(); });
      if (used) continue;
      std::vector<Value*> inputs = n->inputs();
      std::vector<Value*> outputs = n->outputs();
      if (!rw.EraseNode(n).ok()) continue;
      erased_.insert(n);
      dead_.insert(outputs.begin(), outputs.end());
      result_.Count("nodes-erased");
      work.insert(work.end(), inputs.begin(), inputs.end());
    }
  }

  // ---- what is known -------------------------------------------------------------------
  const Vec* Get(Value* v) {
    if (!v) return nullptr;
    if (auto it = vecs_.find(v); it != vecs_.end()) return it->second ? &*it->second : nullptr;
    std::optional<Vec> out;
    if (auto c = GetConstant(v)) {
      if ((IsIntType(c->data_type) || c->data_type == Types::BOOL) && c->dims.size() <= 1 &&
          c->num_elements() <= static_cast<int64_t>(kMaxElems)) {
        if (auto ints = c->AsInt64s()) {
          out = Vec{c->data_type, c->dims.empty(), {}};
          for (int64_t x : *ints) out->e.push_back(Elem::Const(x));
        }
      }
    } else if (int32_t t = ElementType(v); IsIntType(t) || t == Types::BOOL) {
      // A vector the walk cannot see through: element i of v is itself.
      auto shape = StaticShapeOf(v);
      if (shape && shape->size() <= 1 && (shape->empty() || static_cast<size_t>((*shape)[0]) <= kMaxElems)) {
        out = Vec{t, shape->empty(), {}};
        size_t n = shape->empty() ? 1 : static_cast<size_t>((*shape)[0]);
        for (size_t i = 0; i < n; ++i) out->e.push_back(Elem::Sym(absl::StrCat("u:", Ptr(v), ":", i), false));
        Register(v, *out);
      }
    }
    auto& slot = vecs_[v];
    slot = std::move(out);
    return slot ? &*slot : nullptr;
  }

  // Remembers the first value of each element list, per graph, for same-vector.
  Value* Register(Value* v, const Vec& vec) {
    if (vec.AllConst()) return v;
    auto [it, inserted] = first_[v->graph()].try_emplace(vec.Key(), v);
    if (inserted) {
      // An outer scope may have one already: it is visible here.
      for (Graph* g = v->graph()->parent_graph(); g; g = g->parent_graph()) {
        auto f = first_.find(g);
        if (f == first_.end()) continue;
        if (auto o = f->second.find(vec.Key()); o != f->second.end()) return it->second = o->second;
      }
    }
    return it->second;
  }

  void Explain(const std::string& rule, const Node& n, const std::string& why) {
    if (context_.debug_patterns)
      context_.debug_patterns(absl::StrCat("[resolve-shapes/", rule, "] node '", n.name(), "' (", n.op_type(), "): ", why));
  }

  // Constant integer elements of `v` (decided symbolically or not).
  std::optional<std::vector<int64_t>> Ints(Value* v) {
    const Vec* x = Get(v);
    if (!x || !x->AllConst() || x->dtype == Types::BOOL) return std::nullopt;
    std::vector<int64_t> r;
    for (const Elem& e : x->e) r.push_back(e.c);
    return r;
  }

  // ---- the walk ------------------------------------------------------------------------
  void Evaluate(Node* n) {
    if (!CanonicalDomain(n->domain()).empty() || n->num_outputs() != 1 || !n->output(0)) return;
    if (vecs_.contains(n->output(0))) return;
    std::optional<Vec> out = Compute(n);
    if (!out || out->e.size() > kMaxElems) return;
    int32_t declared = ElementType(n->output(0));
    if (declared && declared != out->dtype) return;  // the walk misread the op; stay out
    Register(n->output(0), *out);
    computed_.insert(n->output(0));
    vecs_[n->output(0)] = std::move(out);
  }

  std::optional<Vec> Compute(Node* n) {
    const std::string& op = n->op_type();
    int64_t opset = n->graph()->OpsetVersion("");
    if (op == "Shape" || op == "Size") {
      auto shape = ShapeOf(n->input(0));
      if (!shape) return std::nullopt;
      int64_t rank = static_cast<int64_t>(shape->size());
      if (op == "Size") {
        Elem acc = Elem::Const(1);
        for (size_t i = 0; i < shape->size(); ++i) {
          auto r = Arith('*', acc, DimElem(n->input(0), *shape, i));
          if (!r) return std::nullopt;
          acc = *r;
        }
        return Vec{Types::INT64, true, {acc}};
      }
      auto [start, end] = opset >= 15 ? ShapeRange(rank, n->GetInt("start", 0), n->GetInt("end", rank))
                                      : std::pair<int64_t, int64_t>{0, rank};
      Vec v{Types::INT64, false, {}};
      for (int64_t i = start; i < end; ++i) v.e.push_back(DimElem(n->input(0), *shape, static_cast<size_t>(i)));
      return v;
    }
    if (op == "Identity") {
      const Vec* x = Get(n->input(0));
      return x ? std::optional<Vec>(*x) : std::nullopt;
    }
    if (op == "Gather") {
      const Vec* x = Get(n->input(0));
      auto idx = GetConstant(n->input(1));
      auto ints = idx ? idx->AsInt64s() : std::nullopt;
      int64_t axis = n->GetInt("axis", 0);
      if (!x || x->scalar || !ints || idx->dims.size() > 1 || (axis != 0 && axis != -1)) return std::nullopt;
      Vec v{x->dtype, idx->dims.empty(), {}};
      int64_t size = static_cast<int64_t>(x->e.size());
      for (int64_t i : *ints) {
        if (i < -size || i >= size) return std::nullopt;
        v.e.push_back(x->e[static_cast<size_t>(i < 0 ? i + size : i)]);
      }
      return v;
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      const Vec* x = Get(n->input(0));
      if (!x) return std::nullopt;
      std::optional<std::vector<int64_t>> axes;
      if (opset >= 13) {
        axes = n->input(1) ? Ints(n->input(1)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
      } else if (const Attribute* a = n->FindAttribute("axes")) {
        axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
      } else {
        axes = std::vector<int64_t>{};
      }
      if (!axes) return std::nullopt;
      if (op == "Unsqueeze") {
        if (!x->scalar || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
        Vec v = *x;
        v.scalar = false;
        return v;
      }
      if (x->scalar || x->e.size() != 1 || axes->size() > 1 || (axes->size() == 1 && (*axes)[0] != 0 && (*axes)[0] != -1))
        return std::nullopt;
      Vec v = *x;
      v.scalar = true;
      return v;
    }
    if (op == "Concat") {
      int64_t axis = n->GetInt("axis", 0);
      if (axis != 0 && axis != -1) return std::nullopt;
      Vec v{0, false, {}};
      for (Value* in : n->inputs()) {
        const Vec* x = Get(in);
        if (!x || x->scalar || (v.dtype && v.dtype != x->dtype)) return std::nullopt;
        v.dtype = x->dtype;
        v.e.insert(v.e.end(), x->e.begin(), x->e.end());
        if (v.e.size() > kMaxElems) return std::nullopt;
      }
      if (!v.dtype) return std::nullopt;
      return v;
    }
    if (op == "Reshape") {
      const Vec* x = Get(n->input(0));
      auto shape = Ints(n->input(1));
      if (!x || !shape) return std::nullopt;
      int64_t count = static_cast<int64_t>(x->e.size());
      if (shape->empty() && count == 1) return Vec{x->dtype, true, x->e};
      if (shape->size() == 1 && ((*shape)[0] == -1 || (*shape)[0] == count)) return Vec{x->dtype, false, x->e};
      return std::nullopt;
    }
    if (op == "Slice") {
      const Vec* x = Get(n->input(0));
      if (!x || x->scalar || opset < 10) return std::nullopt;
      auto starts = Ints(n->input(1)), ends = Ints(n->input(2));
      std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{0}, steps = std::vector<int64_t>{1};
      if (n->input(3)) axes = Ints(n->input(3));
      if (n->input(4)) steps = Ints(n->input(4));
      if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
          steps->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1) || (*steps)[0] == 0)
        return std::nullopt;
      const int64_t step = (*steps)[0];
      auto range = ClampSlice(static_cast<int64_t>(x->e.size()), (*starts)[0], (*ends)[0], step);
      Vec v{x->dtype, false, {}};
      for (int64_t k = 0, i = range->start; k < range->count; ++k, i += step) v.e.push_back(x->e[static_cast<size_t>(i)]);
      return v;
    }
    if (op == "Cast") {
      const Vec* x = Get(n->input(0));
      int64_t to = n->GetInt("to", 0);
      if (!x || !(IsIntType(static_cast<int32_t>(to)) || to == Types::BOOL)) return std::nullopt;
      Vec v = *x;
      v.dtype = static_cast<int32_t>(to);
      for (Elem& e : v.e) {
        if (e.is_const) {
          if (to == Types::BOOL) e = Elem::Const(e.c != 0);
          else if (!Fits(v.dtype, e.c)) return std::nullopt;
        } else if (!(x->dtype == to || (x->dtype == Types::INT32 && to == Types::INT64))) {
          return std::nullopt;  // narrowing or to bool: the value may change
        }
      }
      return v;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
      char c = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
      return Elementwise(n, [c](const Elem& a, const Elem& b, int32_t dtype) -> std::optional<Elem> {
        auto r = Arith(c, a, b);
        if (r && r->is_const && !Fits(dtype, r->c)) return std::nullopt;
        return r;
      });
    }
    if (op == "Equal") {
      auto out = Elementwise(n, [](const Elem& a, const Elem& b, int32_t) -> std::optional<Elem> {
        if (a.Same(b)) return Elem::Const(1);
        if (a.is_const && b.is_const) return Elem::Const(0);
        if ((a.nonneg && b.is_const && b.c < 0) || (b.nonneg && a.is_const && a.c < 0)) return Elem::Const(0);
        return std::nullopt;
      });
      if (out) out->dtype = Types::BOOL;
      return out;
    }
    if (op == "Not") {
      const Vec* x = Get(n->input(0));
      if (!x || x->dtype != Types::BOOL || !x->AllConst()) return std::nullopt;
      Vec v = *x;
      for (Elem& e : v.e) e = Elem::Const(e.c == 0);
      return v;
    }
    if (op == "Where") {
      const Vec* c = Get(n->input(0));
      const Vec* a = Get(n->input(1));
      const Vec* b = Get(n->input(2));
      if (!c || !a || !b || c->dtype != Types::BOOL || a->dtype != b->dtype) return std::nullopt;
      size_t len = std::max({c->e.size(), a->e.size(), b->e.size()});
      for (const Vec* x : {c, a, b})
        if (x->e.size() != len && x->e.size() != 1) return std::nullopt;
      Vec v{a->dtype, c->scalar && a->scalar && b->scalar, {}};
      for (size_t i = 0; i < len; ++i) {
        const Elem& ce = c->e[c->e.size() == 1 ? 0 : i];
        if (!ce.is_const) return std::nullopt;
        const Vec* side = ce.c ? a : b;
        v.e.push_back(side->e[side->e.size() == 1 ? 0 : i]);
      }
      return v;
    }
    return std::nullopt;
  }

  // Binary elementwise ops on vectors of one length (or one element, broadcast). An element
  // `f` cannot decide becomes element i of the output itself.
  template <typename F>
  std::optional<Vec> Elementwise(Node* n, F f) {
    if (n->num_inputs() != 2) return std::nullopt;
    const Vec* a = Get(n->input(0));
    const Vec* b = Get(n->input(1));
    if (!a || !b || a->dtype != b->dtype || !IsIntType(a->dtype)) return std::nullopt;
    if (a->e.size() != b->e.size() && a->e.size() != 1 && b->e.size() != 1) return std::nullopt;
    size_t len = std::max(a->e.size(), b->e.size());
    Vec v{a->dtype, a->scalar && b->scalar, {}};
    bool any = false;
    for (size_t i = 0; i < len; ++i) {
      auto r = f(a->e[a->e.size() == 1 ? 0 : i], b->e[b->e.size() == 1 ? 0 : i], a->dtype);
      any |= r.has_value();
      v.e.push_back(r ? *r : Elem::Sym(absl::StrCat("u:", Ptr(n->output(0)), ":", i), false));
    }
    if (!any) return std::nullopt;  // nothing learned: the output is its own leaf
    return v;
  }

  // ---- the rewrites --------------------------------------------------------------------
  // Shape of `v` as far as known: the walk's vectors first, then ShapeOf.
  std::optional<Shape> ShapeFor(Value* v) {
    if (const Vec* x = Get(v)) {
      if (x->scalar) return Shape{};
      return Shape{Dim::Static(static_cast<int64_t>(x->e.size()))};
    }
    return ShapeOf(v);
  }

  // True when `v`'s uses may be moved to another value.
  static bool Replaceable(const Value* v) { return v && v->HasUsers() && !v->IsGraphOutput(); }

  Status Replace(Rewriter& rw, Value* from, Value* to, const std::string& rule) {
    for (const Use& u : from->uses()) touched_.push_back(u.node);  // they read `to` now
    OS_RETURN_IF_ERROR(rw.ReplaceAllUsesWith(from, to));
    EraseDeadFrom(from);
    result_.Count(rule);
    return absl::OkStatus();
  }

  Status Rewrite(Node* n) {
    Rewriter rw;
    rw.SetInsertionPoint(n);
    Value* out = n->output(0);
    if (out && computed_.contains(out) && Replaceable(out)) {
      const Vec& v = *vecs_.at(out);
      if (v.AllConst()) {
        if (!GetConstant(out)) {
          rw.SetRule("resolve-shapes/constant-vector");
          Tensor t;
          t.mutable_meta().set_data_type(v.dtype);
          if (!v.scalar) t.mutable_meta().add_dims(static_cast<int64_t>(v.e.size()));
          std::string bytes;
          for (const Elem& e : v.e) {
            if (v.dtype == Types::INT64) bytes.append(reinterpret_cast<const char*>(&e.c), 8);
            else if (v.dtype == Types::INT32) { int32_t x = static_cast<int32_t>(e.c); bytes.append(reinterpret_cast<const char*>(&x), 4); }
            else bytes.push_back(static_cast<char>(e.c != 0));
          }
          t.SetRawBytes(std::move(bytes));
          OS_ASSIGN_OR_RETURN(Value * constant, rw.Constant(std::move(t), "value"));
          return Replace(rw, out, constant, "constant-vector");
        }
      } else if (Value* first = Register(out, v); first != out && !dead_.contains(first)) {
        // (A first value whose readers all went to other rewrites is gone; a later run
        // finds this one's twin, if any, among what is left.)
        rw.SetRule("resolve-shapes/same-vector");
        return Replace(rw, out, first, "same-vector");
      }
    }
    if (!CanonicalDomain(n->domain()).empty() || !out) return absl::OkStatus();
    const std::string& op = n->op_type();
    // These two rewire an input or make a new node, which can take a graph output's name.
    if (op == "Reshape") return RewriteReshape(rw, n);
    if (op == "Unsqueeze") return RewriteUnsqueezeChain(rw, n);
    if (!Replaceable(out)) return absl::OkStatus();
    if (op == "Where") return RewriteWhere(rw, n);
    if (op == "Expand") return RewriteExpand(rw, n);
    if (op == "Slice") return RewriteSlice(rw, n);
    if (op == "Tile") return RewriteTile(rw, n);
    return absl::OkStatus();
  }

  // Given Reshape(x, s) with s computed. Execute points s at a constant: each element a
  // constant, or 0 for dim i of x. Result the same shape for every input.
  Status RewriteReshape(Rewriter& rw, Node* n) {
    Value* s = n->input(1);
    if (!s || GetConstant(s)) return absl::OkStatus();
    const Vec* v = Get(s);
    if (!v || v->scalar || v->dtype != Types::INT64) return absl::OkStatus();
    int64_t allowzero = n->graph()->OpsetVersion("") >= 14 ? n->GetInt("allowzero", 0) : 0;
    auto shape = ShapeOf(n->input(0));
    std::vector<int64_t> values;
    for (size_t i = 0; i < v->e.size(); ++i) {
      const Elem& e = v->e[i];
      if (e.is_const) {
        values.push_back(e.c);
        continue;
      }
      std::string why;
      if (allowzero != 0) {
        why = "allowzero=1: 0 would be a zero-size dim, not a copy";
      } else if (!shape) {
        why = "the data's rank is unknown";
      } else if (i >= shape->size()) {
        why = absl::StrCat("position ", i, " is beyond the data's rank ", shape->size());
      } else if (!DimElem(n->input(0), *shape, i).Same(e)) {
        why = absl::StrCat("dim ", i, " of the data (", (*shape)[i].ToString(), ") is not provably the same size");
      }
      if (!why.empty()) {
        Explain("reshape-shape", *n, absl::StrCat("shape element ", i, " is not constant and cannot be 0: ", why));
        return absl::OkStatus();
      }
      values.push_back(0);
    }
    rw.SetRule("resolve-shapes/reshape-shape");
    rw.SetInput(n, 1, rw.Int64s(values));
    touched_.push_back(n);
    EraseDeadFrom(s);
    result_.Count("reshape-shape");
    return absl::OkStatus();
  }

  // True when `o`'s shape broadcasts into `s` without changing it.
  static bool BroadcastsInto(const std::optional<Shape>& o, const Shape& s) {
    if (!o || o->size() > s.size()) return false;
    size_t off = s.size() - o->size();
    for (size_t i = 0; i < o->size(); ++i) {
      const Dim& d = (*o)[i];
      if (!(d.is_static() && d.value == 1) && !d.SameAs(s[off + i])) return false;
    }
    return true;
  }

  // The single truth value of a bool tensor, when every element is the same constant.
  std::optional<bool> Uniform(Value* c) {
    std::optional<std::vector<int64_t>> ints;
    if (const Vec* x = Get(c); x && x->dtype == Types::BOOL && x->AllConst()) {
      ints.emplace();
      for (const Elem& e : x->e) ints->push_back(e.c);
    } else if (auto k = GetConstant(c); k && k->data_type == Types::BOOL) {
      ints = k->AsInt64s();
    }
    if (!ints || ints->empty()) return std::nullopt;
    bool first = (*ints)[0] != 0;
    for (int64_t x : *ints)
      if ((x != 0) != first) return std::nullopt;
    return first;
  }

  Status RewriteWhere(Rewriter& rw, Node* n) {
    if (n->num_inputs() != 3) return absl::OkStatus();
    auto cond = Uniform(n->input(0));
    if (!cond) return absl::OkStatus();
    Value* side = n->input(*cond ? 1 : 2);
    Value* other = n->input(*cond ? 2 : 1);
    auto s = ShapeFor(side);
    if (!s || !BroadcastsInto(ShapeFor(n->input(0)), *s) || !BroadcastsInto(ShapeFor(other), *s)) {
      Explain("where-constant", *n, absl::StrCat("the condition is all ", *cond ? "true" : "false",
                                                 " but the output may be larger than the selected side"));
      return absl::OkStatus();
    }
    rw.SetRule("resolve-shapes/where-constant");
    return Replace(rw, n->output(0), side, "where-constant");
  }

  Status RewriteExpand(Rewriter& rw, Node* n) {
    const Vec* v = Get(n->input(1));
    auto shape = ShapeOf(n->input(0));
    if (!v || v->scalar || !shape) return absl::OkStatus();
    if (v->e.size() > shape->size()) {
      Explain("expand-noop", *n, "the target has more dims than the input");
      return absl::OkStatus();
    }
    size_t off = shape->size() - v->e.size();
    for (size_t i = 0; i < v->e.size(); ++i) {
      const Elem& e = v->e[i];
      if ((e.is_const && e.c == 1) || DimElem(n->input(0), *shape, off + i).Same(e)) continue;
      Explain("expand-noop", *n, absl::StrCat("target element ", i, " is neither 1 nor the input's dim ", off + i));
      return absl::OkStatus();
    }
    rw.SetRule("resolve-shapes/expand-noop");
    return Replace(rw, n->output(0), n->input(0), "expand-noop");
  }

  Status RewriteSlice(Rewriter& rw, Node* n) {
    if (n->graph()->OpsetVersion("") < 10 || n->num_inputs() < 3) return absl::OkStatus();
    auto shape = ShapeOf(n->input(0));
    const Vec* starts = Get(n->input(1));
    const Vec* ends = Get(n->input(2));
    if (!shape || !starts || !ends || starts->e.size() != ends->e.size()) return absl::OkStatus();
    int64_t rank = static_cast<int64_t>(shape->size());
    std::vector<int64_t> axes;
    if (n->input(3)) {
      auto a = Ints(n->input(3));
      if (!a || a->size() != starts->e.size()) return absl::OkStatus();
      axes = *a;
    } else {
      for (size_t i = 0; i < starts->e.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    std::vector<int64_t> steps(axes.size(), 1);
    if (n->input(4)) {
      auto s = Ints(n->input(4));
      if (!s || s->size() != axes.size()) return absl::OkStatus();
      steps = *s;
    }
    absl::flat_hash_set<int64_t> seen;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
      if (axis < 0 || axis >= rank || !seen.insert(axis).second) return absl::OkStatus();
      const Elem& st = starts->e[i];
      const Elem& en = ends->e[i];
      const Dim& d = (*shape)[static_cast<size_t>(axis)];
      bool from_start = st.is_const && (st.c == 0 || (d.is_static() && st.c < 0 && st.c + d.value <= 0));
      bool to_end = (en.is_const && (en.c == std::numeric_limits<int64_t>::max() || (d.is_static() && en.c >= d.value))) ||
                    DimElem(n->input(0), *shape, static_cast<size_t>(axis)).Same(en);
      if (steps[i] != 1 || !from_start || !to_end) {
        Explain("slice-noop", *n, absl::StrCat("axis ", axis, " is not sliced whole with step 1"));
        return absl::OkStatus();
      }
    }
    rw.SetRule("resolve-shapes/slice-noop");
    return Replace(rw, n->output(0), n->input(0), "slice-noop");
  }

  Status RewriteTile(Rewriter& rw, Node* n) {
    auto repeats = Ints(n->input(1));
    if (!repeats) return absl::OkStatus();
    if (!std::all_of(repeats->begin(), repeats->end(), [](int64_t r) { return r == 1; })) return absl::OkStatus();
    rw.SetRule("resolve-shapes/tile-noop");
    return Replace(rw, n->output(0), n->input(0), "tile-noop");
  }

  // Given Unsqueeze(Unsqueeze(x, a1), a2), the inner read only here. Execute replaces both
  // by one Unsqueeze of x whose axes are where a1's and a2's new dims end up.
  Status RewriteUnsqueezeChain(Rewriter& rw, Node* n) {
    Node* inner = n->input(0) ? n->input(0)->producer() : nullptr;
    if (!n->output(0)->HasUsers() || !inner || !inner->Is("Unsqueeze") || inner->num_outputs() != 1 || inner->output(0)->uses().size() != 1 ||
        inner->output(0)->IsGraphOutput() || inner->graph() != n->graph())
      return absl::OkStatus();
    int64_t opset = n->graph()->OpsetVersion("");
    auto axes_of = [&](Node* u) -> std::optional<std::vector<int64_t>> {
      if (opset >= 13) return u->input(1) ? Ints(u->input(1)) : std::nullopt;
      const Attribute* a = u->FindAttribute("axes");
      if (!a) return std::nullopt;
      return std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
    };
    auto a1 = axes_of(inner), a2 = axes_of(n);
    if (!a1 || !a2) return absl::OkStatus();
    auto shape = ShapeOf(inner->input(0));
    bool negative = std::any_of(a1->begin(), a1->end(), [](int64_t a) { return a < 0; }) ||
                    std::any_of(a2->begin(), a2->end(), [](int64_t a) { return a < 0; });
    if (negative && !shape) {
      Explain("unsqueeze-chain", *n, "negative axes and the input's rank is unknown");
      return absl::OkStatus();
    }
    // Without negative axes the rank only bounds them; the axes themselves say enough.
    int64_t r1 = 0;
    if (shape) {
      r1 = static_cast<int64_t>(shape->size());
    } else {
      for (int64_t a : *a1) r1 = std::max(r1, a + 1 - static_cast<int64_t>(a1->size()));
      for (int64_t a : *a2) r1 = std::max(r1, a + 1 - static_cast<int64_t>(a1->size() + a2->size()));
    }
    int64_t mid = r1 + static_cast<int64_t>(a1->size());
    int64_t rank = mid + static_cast<int64_t>(a2->size());
    auto normalize = [](std::vector<int64_t> axes, int64_t r) -> std::optional<std::vector<int64_t>> {
      for (int64_t& a : axes) {
        if (a < -r || a >= r) return std::nullopt;
        if (a < 0) a += r;
      }
      std::sort(axes.begin(), axes.end());
      if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
      return axes;
    };
    auto n1 = normalize(*a1, mid), n2 = normalize(*a2, rank);
    if (!n1 || !n2) return absl::OkStatus();
    // The dims of the result that a2 did not insert are the inner result's, in order.
    std::vector<int64_t> kept;
    for (int64_t i = 0, j = 0; i < rank; ++i) {
      if (j < static_cast<int64_t>(n2->size()) && (*n2)[static_cast<size_t>(j)] == i) { ++j; continue; }
      kept.push_back(i);
    }
    std::vector<int64_t> axes = *n2;
    for (int64_t a : *n1) axes.push_back(kept[static_cast<size_t>(a)]);
    std::sort(axes.begin(), axes.end());
    rw.SetRule("resolve-shapes/unsqueeze-chain");
    Value* x = inner->input(0);
    Value* merged;
    if (opset >= 13) {
      merged = rw.Op("Unsqueeze", {x, rw.Int64s(axes)});
    } else {
      merged = rw.Op("Unsqueeze", {x}, {Rewriter::AttrInts("axes", axes)});
    }
    if (n->output(0)->info() && !merged->has_type()) {
      *merged->mutable_info() = *n->output(0)->info();
      merged->mutable_info()->set_name(merged->name());
    }
    return Replace(rw, n->output(0), merged, "unsqueeze-chain");
  }

 public:
  // Nodes whose inputs the rewrites changed: their outputs' in-memory types may now be
  // decidable where they were not.
  // (Nodes this pass erased are left out: they are freed.)
  std::vector<Node*> touched() const {
    std::vector<Node*> alive;
    for (Node* n : touched_)
      if (!erased_.contains(n)) alive.push_back(n);
    return alive;
  }

 private:
  std::vector<Node*> touched_;
  PassResult& result_;
  const PassContext& context_;
  absl::node_hash_map<const Value*, std::optional<Vec>> vecs_;  // node map: Vec pointers stay valid
  absl::flat_hash_set<const Value*> computed_;
  absl::flat_hash_map<const Graph*, absl::flat_hash_map<std::string, Value*>> first_;
  absl::flat_hash_set<const Node*> erased_;  // by this pass: skipped by the rewrite loop
  absl::flat_hash_set<const Value*> dead_;    // their outputs: never a replacement
};

// True when an op this pass reads shapes for reads a value whose shape is unknown (no
// rank; with `any_dim`, also a rank with a dim neither static nor symbolic).
bool ReadsUnknownShape(const Model& model, bool any_dim) {
  auto unknown = [any_dim](const Value* v) {
    auto shape = ShapeOf(v);
    if (!shape) return true;
    return any_dim && std::any_of(shape->begin(), shape->end(), [](const Dim& d) { return d.is_unknown(); });
  };
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (!CanonicalDomain(n->domain()).empty() || n->num_inputs() == 0) continue;
    const std::string& op = n->op_type();
    if (op == "Shape" || op == "Size" || op == "Reshape" || op == "Expand" || op == "Slice" || op == "Tile") {
      if (n->input(0) && unknown(n->input(0))) return true;
    } else if (op == "Where") {
      for (Value* in : n->inputs())
        if (in && unknown(in)) return true;
    }
  }
  return false;
}
bool NeedsShapeInference(const Model& model) { return ReadsUnknownShape(model, false); }
bool ReadsUnknownDim(const Model& model) { return ReadsUnknownShape(model, true); }

constexpr int kMaxWalks = 64;

class ResolveShapesPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    InferShapesOptions infer;
    infer.record_value_info = false;  // types for deciding, not saved
    // Local rules first; onnx inference only if a shape is still unknown. The local rules
    // leave a dim unknown where it follows from shape arithmetic (a Reshape whose shape is
    // a Concat of Gathers of a Shape); onnx inference's data propagation follows it, so when
    // such a dim is read, the in-memory types are inferred afresh by onnx. Without that, a
    // chain of k such layers took k simplify rounds, and a run on the output found more.
    if (ReadsUnknownDim(model)) {
      ForgetInferredTypes(model);
      if (!InferShapes(model, infer).ok()) result.counts["left/shape-inference-failed"] += 1;
      PropagateShapes(model, infer);  // what onnx left untyped, the local rules may type
    } else if (!EnsureShapes(model, infer, NeedsShapeInference).ok()) {
      result.counts["left/shape-inference-failed"] += 1;
    }
    // A rewrite makes a Reshape's shape constant; only then do the local rules know its
    // output's dims, which the next layer's Shape reads. So the walk repeats, with the
    // types below the rewritten nodes dropped and re-derived by the local rules (cheap; no
    // onnx inference), until a walk rewrites nothing: one run resolves a whole chain of
    // layers (it took one simplify round per layer, and a run on the output found more).
    for (int walk = 0; walk < kMaxWalks; ++walk) {
      Resolver resolver(result, context);
      OS_RETURN_IF_ERROR(resolver.RunGraph(model.graph()));
      for (auto& f : model.functions()) OS_RETURN_IF_ERROR(resolver.RunGraph(f->body()));
      if (resolver.touched().empty()) break;
      ForgetInferredTypesBelow(resolver.touched());
      // Untyped values (dropped, or never typed) below the rewrites: the local rules first,
      // onnx only if a shape this pass reads is still missing.
      if (!EnsureShapes(model, infer, NeedsShapeInference).ok()) result.counts["left/shape-inference-failed"] += 1;
    }
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateResolveShapesPass(const PassOptions&) {
  return std::make_unique<ResolveShapesPass>();
}

}  // namespace onnxsurgeon::passes
