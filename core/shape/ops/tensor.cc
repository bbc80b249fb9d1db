// Layout and indexing ops: Shape and Size, Reshape, Expand, Transpose, (Un)squeeze,
// Concat, Flatten, Gather, and on small integer vectors the Slice the exporters write.
#include "absl/container/flat_hash_set.h"
#include "core/eval/slicing.h"
#include "core/ir/constant.h"
#include "core/ir/graph.h"
#include "core/shape/ops/internal.h"
#include "core/shape/rules_internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

using onnx::TensorProto;

// ---- shape rules ----------------------------------------------------------------------

// onnx's product of dims (Flatten): static product; a lone symbol times 1s stays itself.
Dim Product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  std::vector<const Dim*> other;
  for (size_t i = from; i < to; ++i) {
    if (s[i].is_static()) p *= s[i].value;
    else other.push_back(&s[i]);
  }
  if (other.empty()) return Dim::Static(p);
  if (other.size() == 1 && p == 1) return *other[0];
  return Dim{};
}

Out Reshape(const ShapeInput& in) {
  if (in.opset < 5 || in.ins.size() != 2) return in.None();
  // A constant shape, or one computed from static dims (onnx's data propagation), with
  // constants such as -1 joined in by Concat.
  auto target = shape_rules::IntData(in.node.input(1), in.type_of);
  if (!target) return in.None();
  return in.Typed(in.x().elem, shape_rules::ReshapeShape(in.x().shape, *target, in.node.GetInt("allowzero", 0) != 0));
}

Out Expand(const ShapeInput& in) {
  if (in.ins.size() != 2) return in.None();
  // A constant shape, or one computed from Shape (onnx's data propagation), symbols kept.
  auto target = shape_rules::ShapeData(in.node.input(1), in.type_of);
  if (!target) return in.None();
  return in.Typed(in.x().elem, shape_rules::Broadcast({&in.x().shape, &*target}));
}

std::optional<Shape> TransposeShape(const Node& n, const Shape& in) {
  std::vector<int64_t> perm;
  if (const Attribute* a = n.FindAttribute("perm")) {
    if (a->is_ref()) return std::nullopt;
    perm = a->ints();
  } else {
    for (int64_t i = static_cast<int64_t>(in.size()) - 1; i >= 0; --i) perm.push_back(i);
  }
  if (perm.size() != in.size()) return std::nullopt;
  std::vector<bool> seen(in.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(in.size()) || seen[p]) return std::nullopt;
    seen[p] = true;
    out.push_back(in[p]);
  }
  return out;
}
Out Transpose(const ShapeInput& in) { return in.Typed(in.x().elem, TransposeShape(in.node, in.x().shape)); }

std::optional<Shape> UnsqueezeShape(const Node& n, const Shape& in) {
  auto axes = Axes(n, 13);
  if (!axes || axes->empty()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.size() + axes->size());
  std::vector<bool> is_new(rank, false);
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis || is_new[*axis]) return std::nullopt;
    is_new[*axis] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(is_new[i] ? Dim::Static(1) : in[j++]);
  return out;
}
Out Unsqueeze(const ShapeInput& in) { return in.Typed(in.x().elem, UnsqueezeShape(in.node, in.x().shape)); }

std::optional<Shape> SqueezeShape(const Node& n, const Shape& in) {
  auto axes = Axes(n, 13);
  if (!axes) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(in.size());
  Shape out;
  if (axes->empty()) {  // every dim of size 1: only decidable when all are static
    for (const Dim& d : in) {
      if (!d.is_static()) return std::nullopt;
      if (d.value != 1) out.push_back(d);
    }
    return out;
  }
  absl::flat_hash_set<int64_t> drop;
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis || (in[*axis].is_static() && in[*axis].value != 1)) return std::nullopt;
    drop.insert(*axis);
  }
  for (int64_t i = 0; i < rank; ++i)
    if (!drop.contains(i)) out.push_back(in[i]);
  return out;
}
Out Squeeze(const ShapeInput& in) { return in.Typed(in.x().elem, SqueezeShape(in.node, in.x().shape)); }

std::optional<Shape> ConcatShape(const Node& n, const std::vector<TensorType>& ins) {
  const int64_t rank = static_cast<int64_t>(ins[0].shape.size());
  const Attribute* a = n.FindAttribute("axis");
  if (!a || a->is_ref()) return std::nullopt;
  auto axis = NormAxis(a->i(), rank);
  if (!axis) return std::nullopt;
  Shape out(rank);
  int64_t length = 0;
  bool length_known = true;
  for (const TensorType& t : ins) {
    if (static_cast<int64_t>(t.shape.size()) != rank) return std::nullopt;
    const Dim& d = t.shape[*axis];
    if (d.is_static()) length += d.value;
    else length_known = false;
  }
  for (int64_t j = 0; j < rank; ++j) {
    if (j == *axis) continue;
    // Every input has this size: a static one wins (onnx fails on two), else one symbol.
    std::optional<Dim> merged;
    for (const TensorType& t : ins) {
      const Dim& d = t.shape[j];
      if (d.is_static()) {
        if (merged && merged->is_static() && merged->value != d.value) return std::nullopt;
        merged = d;
      }
    }
    if (!merged) {
      for (const TensorType& t : ins)
        if (!t.shape[j].is_symbolic() || t.shape[j].symbol != ins[0].shape[j].symbol) return std::nullopt;
      merged = ins[0].shape[j];
    }
    out[j] = *merged;
  }
  out[*axis] = length_known ? Dim::Static(length) : Dim{};
  return out;
}
Out Concat(const ShapeInput& in) {
  return in.opset >= 4 ? in.Typed(in.x().elem, ConcatShape(in.node, in.ins)) : in.None();
}

Out Flatten(const ShapeInput& in) {
  const Shape& x = in.x().shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  int64_t axis = in.node.GetInt("axis", 1);
  if (axis < -rank || axis > rank) return in.None();
  if (axis < 0) axis += rank;
  return in.Typed(in.x().elem, Shape{Product(x, 0, axis), Product(x, axis, rank)});
}

Out Gather(const ShapeInput& in) {
  if (in.ins.size() != 2) return in.None();
  const Shape& data = in.x().shape;
  const int64_t r = static_cast<int64_t>(data.size());
  if (r < 1) return in.None();
  auto axis = NormAxis(in.node.GetInt("axis", 0), r);
  if (!axis) return in.None();
  Shape out(data.begin(), data.begin() + *axis);
  out.insert(out.end(), in.ins[1].shape.begin(), in.ins[1].shape.end());
  out.insert(out.end(), data.begin() + *axis + 1, data.end());
  return in.Typed(in.x().elem, std::move(out));
}

Out ShapeOp(const ShapeInput& in) {
  const int64_t rank = static_cast<int64_t>(in.x().shape.size());
  auto [start, end] = in.opset >= 15 ? ShapeRange(rank, in.node.GetInt("start", 0), in.node.GetInt("end", rank))
                                     : std::pair<int64_t, int64_t>{0, rank};
  return in.Typed(TensorProto::INT64, Shape{Dim::Static(end - start)});
}

Out Size(const ShapeInput& in) { return in.Typed(TensorProto::INT64, Shape{}); }

// ---- symbolic rules -------------------------------------------------------------------

std::optional<SymbolicVector> ShapeVector(const SymbolicInput& in) {
  Node* n = in.node;
  auto shape = ShapeOf(n->input(0));
  if (!shape) return std::nullopt;
  int64_t rank = static_cast<int64_t>(shape->size());
  if (n->op_type() == "Size") {
    SymbolicElem acc = SymbolicElem::Const(1);
    for (size_t i = 0; i < shape->size(); ++i) {
      auto r = Arith('*', acc, in.facts.DimOf(n->input(0), *shape, i));
      if (!r) return std::nullopt;
      acc = *r;
    }
    return SymbolicVector{TensorProto::INT64, true, {acc}};
  }
  auto [start, end] = in.opset >= 15 ? ShapeRange(rank, n->GetInt("start", 0), n->GetInt("end", rank))
                                     : std::pair<int64_t, int64_t>{0, rank};
  SymbolicVector v{TensorProto::INT64, false, {}};
  for (int64_t i = start; i < end; ++i) v.elems.push_back(in.facts.DimOf(n->input(0), *shape, static_cast<size_t>(i)));
  return v;
}

std::optional<SymbolicVector> GatherVector(const SymbolicInput& in) {
  const SymbolicVector* x = in.In(0);
  auto idx = GetConstant(in.node->input(1));
  auto ints = idx ? idx->AsInt64s() : std::nullopt;
  int64_t axis = in.node->GetInt("axis", 0);
  if (!x || x->scalar || !ints || idx->dims.size() > 1 || (axis != 0 && axis != -1)) return std::nullopt;
  SymbolicVector v{x->dtype, idx->dims.empty(), {}};
  int64_t size = static_cast<int64_t>(x->elems.size());
  for (int64_t i : *ints) {
    if (i < -size || i >= size) return std::nullopt;
    v.elems.push_back(x->elems[static_cast<size_t>(i < 0 ? i + size : i)]);
  }
  return v;
}

std::optional<SymbolicVector> SqueezeVector(const SymbolicInput& in) {
  Node* n = in.node;
  const SymbolicVector* x = in.In(0);
  if (!x) return std::nullopt;
  std::optional<std::vector<int64_t>> axes;
  if (in.opset >= 13) {
    axes = n->input(1) ? in.facts.Int64s(n->input(1)) : std::optional<std::vector<int64_t>>(std::vector<int64_t>{});
  } else if (const Attribute* a = n->FindAttribute("axes")) {
    axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
  } else {
    axes = std::vector<int64_t>{};
  }
  if (!axes) return std::nullopt;
  if (n->op_type() == "Unsqueeze") {
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

std::optional<SymbolicVector> ConcatVector(const SymbolicInput& in) {
  int64_t axis = in.node->GetInt("axis", 0);
  if (axis != 0 && axis != -1) return std::nullopt;
  SymbolicVector v{0, false, {}};
  for (Value* input : in.node->inputs()) {
    const SymbolicVector* x = in.facts.VectorOf(input);
    if (!x || x->scalar || (v.dtype && v.dtype != x->dtype)) return std::nullopt;
    v.dtype = x->dtype;
    v.elems.insert(v.elems.end(), x->elems.begin(), x->elems.end());
    if (v.elems.size() > SymbolicShapes::kMaxElems) return std::nullopt;
  }
  if (!v.dtype) return std::nullopt;
  return v;
}

std::optional<SymbolicVector> ReshapeVector(const SymbolicInput& in) {
  const SymbolicVector* x = in.In(0);
  auto shape = in.facts.Int64s(in.node->input(1));
  if (!x || !shape) return std::nullopt;
  int64_t count = static_cast<int64_t>(x->elems.size());
  if (shape->empty() && count == 1) return SymbolicVector{x->dtype, true, x->elems};
  if (shape->size() == 1 && ((*shape)[0] == -1 || (*shape)[0] == count))
    return SymbolicVector{x->dtype, false, x->elems};
  return std::nullopt;
}

std::optional<SymbolicVector> SliceVector(const SymbolicInput& in) {
  Node* n = in.node;
  const SymbolicVector* x = in.In(0);
  if (!x || x->scalar || in.opset < 10) return std::nullopt;
  auto starts = in.facts.Int64s(n->input(1)), ends = in.facts.Int64s(n->input(2));
  std::optional<std::vector<int64_t>> axes = std::vector<int64_t>{0}, steps = std::vector<int64_t>{1};
  if (n->input(3)) axes = in.facts.Int64s(n->input(3));
  if (n->input(4)) steps = in.facts.Int64s(n->input(4));
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

// ---- data rules (shape operands, as onnx's data propagation follows them) -------------

std::optional<Shape> ShapeOpData(const DataInput& in) {
  auto t = in.type_of(in.node.input(0));
  if (!t) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(t->shape.size());
  auto [start, end] = in.node.graph()->OpsetVersion("") >= 15
                          ? ShapeRange(rank, in.node.GetInt("start", 0), in.node.GetInt("end", rank))
                          : std::pair<int64_t, int64_t>{0, rank};
  Shape s;
  for (int64_t i = start; i < end; ++i) {
    if (t->shape[i].is_unknown()) return std::nullopt;
    s.push_back(t->shape[i]);
  }
  return s;
}

std::optional<Shape> FirstOperandData(const DataInput& in) { return in.Operand(0); }

std::optional<Shape> ConcatData(const DataInput& in) {
  Shape s;
  for (size_t i = 0; i < in.node.num_inputs(); ++i) {
    auto part = in.Operand(i);
    if (!part) return std::nullopt;
    s.insert(s.end(), part->begin(), part->end());
  }
  return s;
}

std::optional<std::vector<int64_t>> FirstOperandInts(const IntsInput& in) { return in.Operand(0); }

std::optional<std::vector<int64_t>> ConcatInts(const IntsInput& in) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.node.num_inputs(); ++i) {
    auto part = in.Operand(i);
    if (!part) return std::nullopt;
    out.insert(out.end(), part->begin(), part->end());
  }
  return out;
}

std::optional<Shape> SliceData(const DataInput& in) {
  if (in.node.graph()->OpsetVersion("") < 10 || in.node.num_inputs() < 3) return std::nullopt;
  // onnx follows one constant range on axis 0 (the data comes from Shape).
  auto data = in.Operand(0);
  std::vector<std::vector<int64_t>> args;  // starts, ends, axes, steps
  for (size_t i = 1; i < in.node.num_inputs(); ++i) {
    auto c = ConstantInt64s(in.node.input(i));
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

std::optional<Shape> GatherData(const DataInput& in) {
  if (in.node.GetInt("axis", 0) != 0 || in.node.num_inputs() != 2) return std::nullopt;
  auto data = in.Operand(0);
  auto indices = ConstantInt64s(in.node.input(1));
  if (!data || !indices) return std::nullopt;
  const int64_t size = static_cast<int64_t>(data->size());
  Shape s;
  for (int64_t i : *indices) {
    if (i < -size || i >= size) return std::nullopt;
    s.push_back((*data)[i < 0 ? i + size : i]);
  }
  return s;
}

// ---- computed shapes: the output's shape from the analysis' vector of its shape operand ----

// Reshape: 0 copies the input's dim (allowzero = 0); a -1 is left to the declared shape.
std::optional<Shape> ReshapeComputed(const SymbolicInput& in) {
  const SymbolicVector* target = ShapeOperand(in, 1);
  if (!target) return std::nullopt;
  std::optional<Shape> x = in.facts.ComputedShape(in.node->input(0));  // a Reshape then Expand: both as computed
  if (in.node->GetInt("allowzero", 0) != 0) return std::nullopt;
  Shape out;
  for (size_t i = 0; i < target->elems.size(); ++i) {
    const SymbolicElem& e = target->elems[i];
    if (e.is_const && e.c == -1) return std::nullopt;
    if (e.is_const && e.c == 0) {
      if (!x || i >= x->size()) return std::nullopt;
      out.push_back((*x)[i]);
    } else {
      out.push_back(e.AsDim());
    }
  }
  return out;
}

// Expand: numpy broadcasting of the input's shape and the target.
std::optional<Shape> ExpandComputed(const SymbolicInput& in) {
  const SymbolicVector* target = ShapeOperand(in, 1);
  if (!target) return std::nullopt;
  std::optional<Shape> x = in.facts.ComputedShape(in.node->input(0));
  if (!x) return std::nullopt;
  size_t rank = std::max(x->size(), target->elems.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    std::optional<Dim> a, b;
    if (i + x->size() >= rank) a = (*x)[i + x->size() - rank];
    if (i + target->elems.size() >= rank) b = target->elems[i + target->elems.size() - rank].AsDim();
    if (!a) out[i] = *b;
    else if (!b) out[i] = *a;
    else if (a->is_static() && a->value == 1) out[i] = *b;
    else if (b->is_static() && b->value == 1) out[i] = *a;
    else if (a->SameAs(*b)) out[i] = *a;
    else return std::nullopt;  // undecidable here
  }
  return out;
}

}  // namespace

const SymbolicVector* ShapeOperand(const SymbolicInput& in, size_t i) {
  const SymbolicVector* v = i < in.node->num_inputs() ? in.In(i) : nullptr;
  return v && !v->scalar && v->dtype == onnx::TensorProto::INT64 ? v : nullptr;
}

std::optional<int64_t> NormAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<std::vector<int64_t>> Axes(const Node& n, int64_t input_since) {
  if (n.graph()->OpsetVersion("") < input_since) {
    const Attribute* a = n.FindAttribute("axes");
    if (!a) return std::vector<int64_t>{};
    if (a->is_ref()) return std::nullopt;
    return a->ints();
  }
  if (!n.input(1)) return std::vector<int64_t>{};
  return ConstantInt64s(n.input(1));
}

void RegisterTensorOps(OpTable& table) {
  table.Shape({"Reshape"}, Reshape);
  table.Shape({"Expand"}, Expand);
  table.Shape({"Transpose"}, Transpose);
  table.Shape({"Unsqueeze"}, Unsqueeze);
  table.Shape({"Squeeze"}, Squeeze);
  table.Shape({"Concat"}, Concat);
  table.Shape({"Flatten"}, Flatten);
  table.Shape({"Gather"}, Gather);
  table.Shape({"Shape"}, ShapeOp);
  table.Shape({"Size"}, Size);

  table.Data({"Shape"}, ShapeOpData);
  table.Data({"Unsqueeze", "Squeeze", "Identity"}, FirstOperandData);
  table.Data({"Concat"}, ConcatData);
  table.Data({"Slice"}, SliceData);
  table.Data({"Gather"}, GatherData);
  table.Ints({"Unsqueeze", "Squeeze", "Identity"}, FirstOperandInts);
  table.Ints({"Concat"}, ConcatInts);

  table.Symbolic({"Shape", "Size"}, ShapeVector);
  table.Symbolic({"Gather"}, GatherVector);
  table.Symbolic({"Unsqueeze", "Squeeze"}, SqueezeVector);
  table.Symbolic({"Concat"}, ConcatVector);
  table.Symbolic({"Reshape"}, ReshapeVector);
  table.Symbolic({"Slice"}, SliceVector);

  table.Computed({"Reshape"}, ReshapeComputed);
  table.Computed({"Expand"}, ExpandComputed);
}

}  // namespace onnxsurgeon::shape_ops
