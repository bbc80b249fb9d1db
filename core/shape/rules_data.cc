// Data propagation for the shape rules: the elements of small integer vectors (shape
// operands) as onnx's data propagation follows them, from constants and Shape.
#include <algorithm>
#include <string>

#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/rules_internal.h"
#include "core/shape/slicing.h"

namespace onnxsurgeon::shape_rules {

bool Overridable(const Value* v) { return v && v->IsInitializer() && v->IsGraphInput(); }

std::optional<Shape> ShapeData(const Value* v, TypeLookup type_of, int depth) {
  if (!v || Overridable(v) || depth > 16) return std::nullopt;
  if (auto c = ConstantInt64s(v)) {
    Shape s;
    for (int64_t d : *c) s.push_back(Dim::Static(d));
    return s;
  }
  const Node* p = v->producer();
  if (!p || !CanonicalDomain(p->domain()).empty() || p->num_inputs() == 0) return std::nullopt;
  const std::string& op = p->op_type();
  if (op == "Shape") {
    auto t = type_of(p->input(0));
    if (!t) return std::nullopt;
    const int64_t rank = static_cast<int64_t>(t->shape.size());
    auto [start, end] = p->graph()->OpsetVersion("") >= 15
                            ? ShapeRange(rank, p->GetInt("start", 0), p->GetInt("end", rank))
                            : std::pair<int64_t, int64_t>{0, rank};
    Shape s;
    for (int64_t i = start; i < end; ++i) {
      if (t->shape[i].is_unknown()) return std::nullopt;
      s.push_back(t->shape[i]);
    }
    return s;
  }
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
      (op == "Cast" && p->GetInt("to", 0) == onnx::TensorProto::INT64))
    return ShapeData(p->input(0), type_of, depth + 1);
  if (op == "Concat") {
    Shape s;
    for (const Value* in : p->inputs()) {
      auto part = ShapeData(in, type_of, depth + 1);
      if (!part) return std::nullopt;
      s.insert(s.end(), part->begin(), part->end());
    }
    return s;
  }
  if (op == "Slice" && p->graph()->OpsetVersion("") >= 10 && p->num_inputs() >= 3) {
    // onnx follows one constant range on axis 0 (the data comes from Shape).
    auto data = ShapeData(p->input(0), type_of, depth + 1);
    std::vector<std::vector<int64_t>> args;  // starts, ends, axes, steps
    for (size_t i = 1; i < p->num_inputs(); ++i) {
      auto c = ConstantInt64s(p->input(i));
      if (!c || c->size() != 1) return std::nullopt;
      args.push_back(*c);
    }
    if (!data || (args.size() > 2 && args[2][0] != 0)) return std::nullopt;
    const int64_t size = static_cast<int64_t>(data->size()), step = args.size() > 3 ? args[3][0] : 1;
    auto range = ClampSlice(size, args[0][0], args[1][0], step);
    if (!range) return std::nullopt;
    Shape s;
    for (int64_t k = 0, i = range->start; k < range->count; ++k, i += step) s.push_back((*data)[i]);
    return s;
  }
  if (op == "ReduceProd") {
    // The product of dims (tf2onnx's Einsum writes a batch size as ReduceProd(Gather(Shape)))
    // over the one axis of the 1-D data: axes absent (noop_with_empty_axes unset), or [0]/[-1].
    auto dims = StaticDims(ShapeData(p->input(0), type_of, depth + 1));
    std::optional<std::vector<int64_t>> axes;
    if (const Attribute* a = p->FindAttribute("axes"))
      axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
    else if (p->num_inputs() > 1 && p->input(1)) axes = ConstantInt64s(p->input(1));
    else if (p->num_inputs() > 1 || p->GetInt("noop_with_empty_axes", 0) != 0) return std::nullopt;
    if (!dims || (axes && !(axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1)))) return std::nullopt;
    int64_t product = 1;
    for (int64_t d : *dims) product *= d;
    return Shape{Dim::Static(product)};
  }
  if ((op == "Mul" || op == "Add" || op == "Sub" || op == "Max" || op == "Min") && p->num_inputs() == 2) {
    // Arithmetic on dims (reshape(b, c * h, w); tf2onnx's Einsum broadcasts batch dims with
    // Max): exact on static dims, numpy broadcasting
    // of a one-element side; a symbolic or unknown operand decides nothing.
    auto a = StaticDims(ShapeData(p->input(0), type_of, depth + 1));
    auto b = StaticDims(ShapeData(p->input(1), type_of, depth + 1));
    if (!a || !b || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) return std::nullopt;
    const size_t size = std::max(a->size(), b->size());
    Shape s;
    for (size_t i = 0; i < size; ++i) {
      const int64_t l = (*a)[a->size() == 1 ? 0 : i], r = (*b)[b->size() == 1 ? 0 : i];
      s.push_back(Dim::Static(op == "Mul"   ? l * r
                              : op == "Add" ? l + r
                              : op == "Sub" ? l - r
                              : op == "Max" ? std::max(l, r)
                                            : std::min(l, r)));
    }
    return s;
  }
  if (op == "Gather" && p->GetInt("axis", 0) == 0 && p->num_inputs() == 2) {
    auto data = ShapeData(p->input(0), type_of, depth + 1);
    auto indices = ConstantInt64s(p->input(1));
    if (!data || !indices) return std::nullopt;
    const int64_t size = static_cast<int64_t>(data->size());
    Shape s;
    for (int64_t i : *indices) {
      if (i < -size || i >= size) return std::nullopt;
      s.push_back((*data)[i < 0 ? i + size : i]);
    }
    return s;
  }
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IntData(const Value* v, TypeLookup type_of, int depth) {
  if (!v || Overridable(v) || depth > 16) return std::nullopt;
  if (auto c = ConstantInt64s(v)) return c;
  const Node* p = v->producer();
  if (p && CanonicalDomain(p->domain()).empty() && p->num_inputs() > 0) {
    const std::string& op = p->op_type();
    if (op == "Unsqueeze" || op == "Squeeze" || op == "Identity" ||
        (op == "Cast" && p->GetInt("to", 0) == onnx::TensorProto::INT64))
      return IntData(p->input(0), type_of, depth + 1);
    if (op == "Concat") {
      std::vector<int64_t> out;
      for (const Value* in : p->inputs()) {
        auto part = IntData(in, type_of, depth + 1);
        if (!part) return std::nullopt;
        out.insert(out.end(), part->begin(), part->end());
      }
      return out;
    }
  }
  return StaticDims(ShapeData(v, type_of, depth));
}

}  // namespace onnxsurgeon::shape_rules
