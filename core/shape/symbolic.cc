#include "core/shape/symbolic.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/model.h"
#include "core/shape/slicing.h"

namespace onnxsurgeon {
namespace {

using Types = onnx::TensorProto;
constexpr size_t kMaxElems = SymbolicShapes::kMaxElems;

bool IsIntType(int32_t t) { return t == Types::INT64 || t == Types::INT32; }

bool Fits(int32_t dtype, int64_t v) {
  if (dtype == Types::INT32)
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  if (dtype == Types::BOOL) return v == 0 || v == 1;
  return true;
}

std::optional<int64_t> CheckedOp(char op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case '+':
      if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '-':
      if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '*':
      if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
      return r;
    case '/':
      if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return std::nullopt;
      return a / b;  // truncation, as onnxruntime's integer Div
  }
  return std::nullopt;
}

// Given two elements and an operator. Result their combination (nullopt when not sound
// to express: overflow, division by zero).
std::optional<SymbolicElem> Arith(char op, const SymbolicElem& a, const SymbolicElem& b) {
  if (a.is_const && b.is_const) {
    auto r = CheckedOp(op, a.c, b.c);
    if (!r) return std::nullopt;
    return SymbolicElem::Const(*r);
  }
  // Identities of integer arithmetic.
  if ((op == '+' || op == '-') && b.is_const && b.c == 0) return a;
  if (op == '+' && a.is_const && a.c == 0) return b;
  if ((op == '*' || op == '/') && b.is_const && b.c == 1) return a;
  if (op == '*' && a.is_const && a.c == 1) return b;
  if (op == '*' && ((a.is_const && a.c == 0) || (b.is_const && b.c == 0))) return SymbolicElem::Const(0);
  if (op == '/' && b.is_const && b.c == 0) return std::nullopt;
  std::string ka = a.Key(), kb = b.Key();
  if ((op == '+' || op == '*') && kb < ka) std::swap(ka, kb);
  bool nonneg = false;
  if (op == '+' || op == '*') nonneg = a.nonneg && b.nonneg;
  if (op == '/') nonneg = a.nonneg && b.is_const && b.c > 0;
  return SymbolicElem::Sym(absl::StrCat("(", std::string(1, op), " ", ka, " ", kb, ")"), nonneg);
}

}  // namespace

std::string SymbolicElem::Key() const { return is_const ? absl::StrCat("#", c) : key; }

bool SymbolicVector::AllConst() const {
  return std::all_of(elems.begin(), elems.end(), [](const SymbolicElem& x) { return x.is_const; });
}

std::string SymbolicVector::Key() const {
  std::string k = absl::StrCat(dtype, scalar ? "s" : "v", ":");
  for (const SymbolicElem& x : elems) absl::StrAppend(&k, x.Key(), ",");
  return k;
}

std::string SymbolicShapes::IdOf(const Value* v) const {
  return absl::StrCat(ids_.try_emplace(v, ids_.size()).first->second);
}

SymbolicElem SymbolicShapes::DimOf(const Value* v, const Shape& shape, size_t i) const {
  const Dim& d = shape[i];
  if (d.is_static()) return SymbolicElem::Const(d.value);
  if (d.is_symbolic()) return SymbolicElem::Sym("s:" + d.symbol, true);
  return SymbolicElem::Sym(absl::StrCat("d:", IdOf(v), ":", i), true);
}

// ---- queries --------------------------------------------------------------------------

const SymbolicVector* SymbolicShapes::VectorOf(Value* v) const {
  if (!v || (!excluded_.empty() && excluded_.contains(v->graph()))) return nullptr;
  if (auto it = vectors_.find(v); it != vectors_.end()) return it->second ? &*it->second : nullptr;
  std::optional<SymbolicVector> out;
  // Type and dims first: a weight (float, or of rank 2) is never read.
  auto small_int_vector = [](const std::pair<int32_t, std::vector<int64_t>>& td) {
    int64_t n = 1;
    for (int64_t d : td.second) n = d < 0 || n > static_cast<int64_t>(kMaxElems) ? -1 : n * d;
    return (IsIntType(td.first) || td.first == Types::BOOL) && td.second.size() <= 1 && n >= 0 &&
           n <= static_cast<int64_t>(kMaxElems);
  };
  if (auto td = GetConstantTypeAndDims(v)) {
    std::optional<ConstantData> c = small_int_vector(*td) ? GetConstant(v) : std::nullopt;
    if (c && (IsIntType(c->data_type) || c->data_type == Types::BOOL) && c->dims.size() <= 1 &&
        c->num_elements() <= static_cast<int64_t>(kMaxElems)) {
      if (auto ints = c->AsInt64s()) {
        out = SymbolicVector{c->data_type, c->dims.empty(), {}};
        for (int64_t x : *ints) out->elems.push_back(SymbolicElem::Const(x));
      }
    }
  } else if (int32_t t = ElementType(v); IsIntType(t) || t == Types::BOOL) {
    // A vector the walk cannot see through: element i of v is itself.
    auto shape = StaticShapeOf(v);
    if (shape && shape->size() <= 1 && (shape->empty() || static_cast<size_t>((*shape)[0]) <= kMaxElems)) {
      out = SymbolicVector{t, shape->empty(), {}};
      size_t n = shape->empty() ? 1 : static_cast<size_t>((*shape)[0]);
      for (size_t i = 0; i < n; ++i)
        out->elems.push_back(SymbolicElem::Sym(absl::StrCat("u:", IdOf(v), ":", i), false));
      Register(v, *out);
    }
  }
  auto& slot = vectors_[v];
  slot = std::move(out);
  return slot ? &*slot : nullptr;
}

// Remembers the first value of each element list, per graph; returns it.
Value* SymbolicShapes::Register(Value* v, const SymbolicVector& vec) const {
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

Value* SymbolicShapes::FirstWithSameElements(Value* v) const {
  const SymbolicVector* vec = VectorOf(v);
  if (!vec || vec->AllConst()) return v;
  auto g = first_.find(v->graph());
  if (g == first_.end()) return v;
  auto f = g->second.find(vec->Key());
  return f == g->second.end() ? v : f->second;
}

std::optional<std::vector<int64_t>> SymbolicShapes::Int64s(Value* v) const {
  const SymbolicVector* x = VectorOf(v);
  if (!x || !x->AllConst() || x->dtype == Types::BOOL) return std::nullopt;
  std::vector<int64_t> r;
  for (const SymbolicElem& e : x->elems) r.push_back(e.c);
  return r;
}

std::optional<bool> SymbolicShapes::UniformBool(Value* v) const {
  std::optional<std::vector<int64_t>> ints;
  if (const SymbolicVector* x = VectorOf(v); x && x->dtype == Types::BOOL && x->AllConst()) {
    ints.emplace();
    for (const SymbolicElem& e : x->elems) ints->push_back(e.c);
  } else if (auto k = GetConstant(v); k && k->data_type == Types::BOOL) {
    ints = k->AsInt64s();
  }
  if (!ints || ints->empty()) return std::nullopt;
  bool first = (*ints)[0] != 0;
  for (int64_t x : *ints)
    if ((x != 0) != first) return std::nullopt;
  return first;
}

std::optional<Shape> SymbolicShapes::ShapeFor(Value* v) const {
  if (const SymbolicVector* x = VectorOf(v)) {
    if (x->scalar) return Shape{};
    return Shape{Dim::Static(static_cast<int64_t>(x->elems.size()))};
  }
  return ShapeOf(v);
}

// ---- the walk ----------------------------------------------------------------------------

void SymbolicShapes::Analyze(Graph& graph) {
  for (Node* n : graph.nodes()) {
    for (Graph* sub : n->subgraphs()) Analyze(*sub);
    Evaluate(n);
  }
}

void SymbolicShapes::Evaluate(Node* n) {
  if (!CanonicalDomain(n->domain()).empty() || n->num_outputs() != 1 || !n->output(0)) return;
  if (vectors_.contains(n->output(0))) return;
  std::optional<SymbolicVector> out = Compute(n);
  if (!out || out->elems.size() > kMaxElems) return;
  int32_t declared = ElementType(n->output(0));
  if (declared && declared != out->dtype) return;  // the walk misread the op; stay out
  Register(n->output(0), *out);
  computed_.insert(n->output(0));
  vectors_[n->output(0)] = std::move(out);
}

// Binary elementwise ops on vectors of one length (or one element, broadcast). An element
// `f` cannot decide becomes element i of the output itself.
template <typename F>
std::optional<SymbolicVector> SymbolicShapes::Elementwise(Node* n, F f) const {
  if (n->num_inputs() != 2) return std::nullopt;
  const SymbolicVector* a = VectorOf(n->input(0));
  const SymbolicVector* b = VectorOf(n->input(1));
  if (!a || !b || a->dtype != b->dtype || !IsIntType(a->dtype)) return std::nullopt;
  if (a->elems.size() != b->elems.size() && a->elems.size() != 1 && b->elems.size() != 1) return std::nullopt;
  size_t len = std::max(a->elems.size(), b->elems.size());
  SymbolicVector v{a->dtype, a->scalar && b->scalar, {}};
  bool any = false;
  for (size_t i = 0; i < len; ++i) {
    auto r = f(a->elems[a->elems.size() == 1 ? 0 : i], b->elems[b->elems.size() == 1 ? 0 : i], a->dtype);
    any |= r.has_value();
    v.elems.push_back(r ? *r : SymbolicElem::Sym(absl::StrCat("u:", IdOf(n->output(0)), ":", i), false));
  }
  if (!any) return std::nullopt;  // nothing learned: the output is its own leaf
  return v;
}

std::optional<SymbolicVector> SymbolicShapes::Compute(Node* n) const {
  const std::string& op = n->op_type();
  int64_t opset = n->graph()->OpsetVersion("");
  if (op == "Shape" || op == "Size") {
    auto shape = ShapeOf(n->input(0));
    if (!shape) return std::nullopt;
    int64_t rank = static_cast<int64_t>(shape->size());
    if (op == "Size") {
      SymbolicElem acc = SymbolicElem::Const(1);
      for (size_t i = 0; i < shape->size(); ++i) {
        auto r = Arith('*', acc, DimOf(n->input(0), *shape, i));
        if (!r) return std::nullopt;
        acc = *r;
      }
      return SymbolicVector{Types::INT64, true, {acc}};
    }
    auto [start, end] = opset >= 15 ? ShapeRange(rank, n->GetInt("start", 0), n->GetInt("end", rank))
                                    : std::pair<int64_t, int64_t>{0, rank};
    SymbolicVector v{Types::INT64, false, {}};
    for (int64_t i = start; i < end; ++i) v.elems.push_back(DimOf(n->input(0), *shape, static_cast<size_t>(i)));
    return v;
  }
  if (op == "Identity") {
    const SymbolicVector* x = VectorOf(n->input(0));
    return x ? std::optional<SymbolicVector>(*x) : std::nullopt;
  }
  if (op == "Gather") {
    const SymbolicVector* x = VectorOf(n->input(0));
    auto idx = GetConstant(n->input(1));
    auto ints = idx ? idx->AsInt64s() : std::nullopt;
    int64_t axis = n->GetInt("axis", 0);
    if (!x || x->scalar || !ints || idx->dims.size() > 1 || (axis != 0 && axis != -1)) return std::nullopt;
    SymbolicVector v{x->dtype, idx->dims.empty(), {}};
    int64_t size = static_cast<int64_t>(x->elems.size());
    for (int64_t i : *ints) {
      if (i < -size || i >= size) return std::nullopt;
      v.elems.push_back(x->elems[static_cast<size_t>(i < 0 ? i + size : i)]);
    }
    return v;
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    const SymbolicVector* x = VectorOf(n->input(0));
    if (!x) return std::nullopt;
    std::optional<std::vector<int64_t>> axes;
    if (opset >= 13) {
      axes = n->input(1) ? Int64s(n->input(1)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
    } else if (const Attribute* a = n->FindAttribute("axes")) {
      axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
    } else {
      axes = std::vector<int64_t>{};
    }
    if (!axes) return std::nullopt;
    if (op == "Unsqueeze") {
      if (!x->scalar || axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1)) return std::nullopt;
      SymbolicVector v = *x;
      v.scalar = false;
      return v;
    }
    if (x->scalar || x->elems.size() != 1 || axes->size() > 1 ||
        (axes->size() == 1 && (*axes)[0] != 0 && (*axes)[0] != -1))
      return std::nullopt;
    SymbolicVector v = *x;
    v.scalar = true;
    return v;
  }
  if (op == "Concat") {
    int64_t axis = n->GetInt("axis", 0);
    if (axis != 0 && axis != -1) return std::nullopt;
    SymbolicVector v{0, false, {}};
    for (Value* in : n->inputs()) {
      const SymbolicVector* x = VectorOf(in);
      if (!x || x->scalar || (v.dtype && v.dtype != x->dtype)) return std::nullopt;
      v.dtype = x->dtype;
      v.elems.insert(v.elems.end(), x->elems.begin(), x->elems.end());
      if (v.elems.size() > kMaxElems) return std::nullopt;
    }
    if (!v.dtype) return std::nullopt;
    return v;
  }
  if (op == "Reshape") {
    const SymbolicVector* x = VectorOf(n->input(0));
    auto shape = Int64s(n->input(1));
    if (!x || !shape) return std::nullopt;
    int64_t count = static_cast<int64_t>(x->elems.size());
    if (shape->empty() && count == 1) return SymbolicVector{x->dtype, true, x->elems};
    if (shape->size() == 1 && ((*shape)[0] == -1 || (*shape)[0] == count))
      return SymbolicVector{x->dtype, false, x->elems};
    return std::nullopt;
  }
  if (op == "Slice") {
    const SymbolicVector* x = VectorOf(n->input(0));
    if (!x || x->scalar || opset < 10) return std::nullopt;
    auto starts = Int64s(n->input(1)), ends = Int64s(n->input(2));
    std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{0}, steps = std::vector<int64_t>{1};
    if (n->input(3)) axes = Int64s(n->input(3));
    if (n->input(4)) steps = Int64s(n->input(4));
    if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1 || axes->size() != 1 ||
        steps->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1) || (*steps)[0] == 0)
      return std::nullopt;
    const int64_t step = (*steps)[0];
    auto range = ClampSlice(static_cast<int64_t>(x->elems.size()), (*starts)[0], (*ends)[0], step);
    SymbolicVector v{x->dtype, false, {}};
    for (int64_t k = 0, i = range->start; k < range->count; ++k, i += step)
      v.elems.push_back(x->elems[static_cast<size_t>(i)]);
    return v;
  }
  if (op == "Cast") {
    const SymbolicVector* x = VectorOf(n->input(0));
    int64_t to = n->GetInt("to", 0);
    if (!x || !(IsIntType(static_cast<int32_t>(to)) || to == Types::BOOL)) return std::nullopt;
    SymbolicVector v = *x;
    v.dtype = static_cast<int32_t>(to);
    for (SymbolicElem& e : v.elems) {
      if (e.is_const) {
        if (to == Types::BOOL) e = SymbolicElem::Const(e.c != 0);
        else if (!Fits(v.dtype, e.c)) return std::nullopt;
      } else if (!(x->dtype == to || (x->dtype == Types::INT32 && to == Types::INT64))) {
        return std::nullopt;  // narrowing or to bool: the value may change
      }
    }
    return v;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    char c = op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/';
    return Elementwise(n,
                       [c](const SymbolicElem& a, const SymbolicElem& b, int32_t dtype) -> std::optional<SymbolicElem> {
                         auto r = Arith(c, a, b);
                         if (r && r->is_const && !Fits(dtype, r->c)) return std::nullopt;
                         return r;
                       });
  }
  if (op == "Equal") {
    auto out = Elementwise(n, [](const SymbolicElem& a, const SymbolicElem& b, int32_t) -> std::optional<SymbolicElem> {
      if (a.Same(b)) return SymbolicElem::Const(1);
      if (a.is_const && b.is_const) return SymbolicElem::Const(0);
      if ((a.nonneg && b.is_const && b.c < 0) || (b.nonneg && a.is_const && a.c < 0)) return SymbolicElem::Const(0);
      return std::nullopt;
    });
    if (out) out->dtype = Types::BOOL;
    return out;
  }
  if (op == "Not") {
    const SymbolicVector* x = VectorOf(n->input(0));
    if (!x || x->dtype != Types::BOOL || !x->AllConst()) return std::nullopt;
    SymbolicVector v = *x;
    for (SymbolicElem& e : v.elems) e = SymbolicElem::Const(e.c == 0);
    return v;
  }
  if (op == "Where") {
    const SymbolicVector* c = VectorOf(n->input(0));
    const SymbolicVector* a = VectorOf(n->input(1));
    const SymbolicVector* b = VectorOf(n->input(2));
    if (!c || !a || !b || c->dtype != Types::BOOL || a->dtype != b->dtype) return std::nullopt;
    size_t len = std::max({c->elems.size(), a->elems.size(), b->elems.size()});
    for (const SymbolicVector* x : {c, a, b})
      if (x->elems.size() != len && x->elems.size() != 1) return std::nullopt;
    SymbolicVector v{a->dtype, c->scalar && a->scalar && b->scalar, {}};
    for (size_t i = 0; i < len; ++i) {
      const SymbolicElem& ce = c->elems[c->elems.size() == 1 ? 0 : i];
      if (!ce.is_const) return std::nullopt;
      const SymbolicVector* side = ce.c ? a : b;
      v.elems.push_back(side->elems[side->elems.size() == 1 ? 0 : i]);
    }
    return v;
  }
  return std::nullopt;
}

}  // namespace onnxsurgeon
