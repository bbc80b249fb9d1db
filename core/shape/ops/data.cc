// Ops whose output type reads an operand's values or is one input's: Slice's bounds and
// ConstantOfShape's shape, as onnx reads them (its type inference sees only initializer
// and Constant data; a shape computed from Shape reaches ConstantOfShape through data
// propagation, dims and symbols alike), Constant, and ops shaped like one input.
#include <numeric>

#include "core/eval/slicing.h"
#include "core/ir/constant.h"
#include "core/shape/ops/internal.h"
#include "core/shape/rules_internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

std::optional<Shape> SliceShape(const Node& n, const Shape& in, TypeLookup type_of) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<std::optional<std::vector<int64_t>>> operands;  // starts, ends, axes, steps
  bool constant = true;
  for (size_t i = 1; i < 5; ++i) {
    const Value* v = i < n.num_inputs() ? n.input(i) : nullptr;
    if (shape_rules::Overridable(v)) return std::nullopt;
    // A bound computed from static dims (x[:, :c] with c read by Shape) is as good as a
    // constant; onnx leaves that dim unknown.
    operands.push_back(v ? shape_rules::IntData(v, type_of) : std::nullopt);
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

Out Slice(const ShapeInput& in) {
  if (in.opset < 10) return in.None();
  return in.Typed(in.x().elem, SliceShape(in.node, in.x().shape, in.type_of));
}

Out ConstantOfShape(const ShapeInput& in) {
  if (shape_rules::Overridable(in.node.input(0))) return in.None();
  auto dims = shape_rules::ShapeData(in.node.input(0), in.type_of, 0);
  if (!dims) return in.None();
  for (const Dim& d : *dims)
    if (d.is_static() && d.value < 0) return in.None();  // onnx fails on a negative size
  return in.Typed(FillType(in.node), std::move(dims));
}

Out ShapedLikeFirst(const ShapeInput& in) { return in.One(in.x()); }

Out GatherElements(const ShapeInput& in) {
  if (in.ins.size() != 2 || in.ins[1].shape.size() != in.x().shape.size()) return in.None();
  return in.Typed(in.x().elem, in.ins[1].shape);
}

// Reads no input: the tensor it holds.
Out ConstantOut(const ShapeInput& in) {
  if (in.node.num_outputs() != 1) return in.None();
  auto c = GetConstant(in.node.output(0));
  if (!c || c->data_type == 0) return in.None();
  Shape s;
  for (int64_t d : c->dims) s.push_back(Dim::Static(d));
  return in.Typed(c->data_type, std::move(s));
}

// The shape the analysis' vector says, element by element.
std::optional<Shape> ConstantOfShapeComputed(const SymbolicInput& in) {
  const SymbolicVector* target = ShapeOperand(in, 0);
  if (!target) return std::nullopt;
  Shape out;
  for (const SymbolicElem& e : target->elems) out.push_back(e.AsDim());
  return out;
}

}  // namespace

void RegisterData(OpTable& table) {
  table.Shape({"Constant"}, ConstantOut, /*reads_no_inputs=*/true);
  table.Shape({"Slice"}, Slice);
  table.Shape({"ConstantOfShape"}, ConstantOfShape);
  table.Computed({"ConstantOfShape"}, ConstantOfShapeComputed);
  table.Shape({"Trilu", "ScatterND", "ScatterElements", "Scatter"}, ShapedLikeFirst);
  table.Shape({"GatherElements"}, GatherElements);
}

}  // namespace onnxsurgeon::shape_ops
