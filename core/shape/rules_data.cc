// Rules that read an operand's values: Slice's bounds and ConstantOfShape's shape, as
// onnx reads them (its type inference sees only initializer and Constant data; a shape
// computed from Shape reaches ConstantOfShape through data propagation, dims and symbols
// alike), and ops shaped like one of their inputs.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/ir/model.h"
#include "core/shape/rules_internal.h"
#include "core/shape/slicing.h"

namespace onnxsurgeon::shape_rules {
namespace {

constexpr std::string_view kLikeFirst[] = {"Trilu", "ScatterND", "ScatterElements", "Scatter"};

// An initializer that is also a graph input: onnx reads its data, we may not (it can be
// overridden at run time), so rules that would fall back on "not constant" decide nothing.
bool Overridable(const Value* v) { return v && v->IsInitializer() && v->IsGraphInput(); }

std::optional<Shape> SliceShape(const Node& n, const Shape& in, TypeLookup type_of) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<std::optional<std::vector<int64_t>>> operands;  // starts, ends, axes, steps
  bool constant = true;
  for (size_t i = 1; i < 5; ++i) {
    const Value* v = i < n.num_inputs() ? n.input(i) : nullptr;
    if (Overridable(v)) return std::nullopt;
    // A bound computed from static dims (x[:, :c] with c read by Shape) is as good as a
    // constant; onnx leaves that dim unknown.
    operands.push_back(v ? IntData(v, type_of) : std::nullopt);
    if (v && !operands.back()) constant = false;
  }
  // Bounds that are not constant: onnx keeps the rank and knows no dim.
  if (!constant || !operands[0] || !operands[1]) return Shape(rank);
  const std::vector<int64_t>& starts = *operands[0];
  const std::vector<int64_t>& ends = *operands[1];
  std::vector<int64_t> axes(starts.size());
  std::iota(axes.begin(), axes.end(), 0);
  if (operands[2]) axes = *operands[2];
  std::vector<int64_t> steps = operands[3] ? *operands[3] : std::vector<int64_t>(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return std::nullopt;
  Shape out = in;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank) return std::nullopt;
    const int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (seen[axis] || steps[i] == 0) return std::nullopt;
    seen[axis] = true;
    if (!in[axis].is_static()) {
      out[axis] = Dim{};  // onnx clears even a symbol here
      continue;
    }
    auto sliced = ClampSlice(in[axis].value, starts[i], ends[i], steps[i]);  // onnx's processSliceInputs
    if (!sliced) return std::nullopt;
    out[axis] = Dim::Static(sliced->count);
  }
  return out;
}

// The element type of ConstantOfShape's `value` (float when absent), 0 when unreadable.
int32_t FillType(const Node& n) {
  const Attribute* a = n.FindAttribute("value");
  if (!a) return onnx::TensorProto::FLOAT;
  if (a->is_ref() || !a->proto().has_t()) return 0;
  return a->proto().t().data_type();
}

}  // namespace

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

std::optional<Out> InferData(const Node& n, const std::vector<TensorType>& ins, TypeLookup type_of) {
  const std::string& op = n.op_type();
  const int64_t opset = n.graph()->OpsetVersion("");
  const TensorType& x = ins[0];
  Out out(n.num_outputs());
  auto set = [&](int32_t elem, std::optional<Shape> s) {
    if (s && elem != 0) out[0] = TensorType{elem, std::move(*s)};
    return out;
  };
  if (std::find(std::begin(kLikeFirst), std::end(kLikeFirst), op) != std::end(kLikeFirst)) return set(x.elem, x.shape);
  if (op == "GatherElements" && ins.size() == 2 && ins[1].shape.size() == x.shape.size())
    return set(x.elem, ins[1].shape);
  if (op == "Slice" && opset >= 10) return set(x.elem, SliceShape(n, x.shape, type_of));
  if (op == "ConstantOfShape") {
    if (Overridable(n.input(0))) return out;
    auto dims = ShapeData(n.input(0), type_of, 0);
    if (!dims) return out;
    for (const Dim& d : *dims)
      if (d.is_static() && d.value < 0) return out;  // onnx fails on a negative size
    return set(FillType(n), std::move(dims));
  }
  return std::nullopt;
}

}  // namespace onnxsurgeon::shape_rules
