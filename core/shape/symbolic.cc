#include "core/shape/symbolic.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/constant.h"
#include "core/ir/model.h"
#include "core/shape/op_table.h"

namespace onnxsurgeon {
namespace {

using Types = onnx::TensorProto;
constexpr size_t kMaxElems = SymbolicShapes::kMaxElems;

bool IsIntType(int32_t t) { return t == Types::INT64 || t == Types::INT32; }

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

SymbolicElem SymbolicShapes::OwnElem(const Value* v, size_t i) const {
  return SymbolicElem::Sym(absl::StrCat("u:", IdOf(v), ":", i), false);
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
      for (size_t i = 0; i < n; ++i) out->elems.push_back(OwnElem(v, i));
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

SymbolicShapes::SymbolicShapes(const Model& model) {
  if (!model.has_graph()) return;
  Analyze(const_cast<Graph&>(model.graph()));  // reads only (Analyze takes what the rules hold)
  for (const auto& f : model.functions()) Analyze(f->body());
}

Dim SymbolicElem::AsDim() const {
  if (is_const) return c >= 0 ? Dim::Static(c) : Dim{};
  if (key.rfind("s:", 0) == 0) return Dim::Symbolic(key.substr(2));
  return Dim::Symbolic("%" + key);
}

std::optional<Shape> SymbolicShapes::ComputedShape(Value* v) const {
  Node* p = v ? v->producer() : nullptr;
  if (p && CanonicalDomain(p->domain()).empty() && p->num_outputs() == 1)
    if (const shape_ops::OpRules* rules = shape_ops::FindOpRules(p->op_type()); rules && rules->computed)
      if (std::optional<Shape> shape = rules->computed({p, *this, p->graph()->OpsetVersion("")})) return shape;
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

std::optional<SymbolicVector> SymbolicShapes::Compute(Node* n) const {
  const shape_ops::OpRules* rules = shape_ops::FindOpRules(n->op_type());
  if (!rules || !rules->symbolic) return std::nullopt;
  return rules->symbolic({n, *this, n->graph()->OpsetVersion("")});
}

}  // namespace onnxsurgeon
