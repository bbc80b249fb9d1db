// Reductions over constant axes (an attribute before opset 18, ReduceSum's before 13).
#include "absl/container/flat_hash_set.h"
#include "core/ir/constant.h"
#include "core/shape/ops/internal.h"

namespace onnxsurgeon::shape_ops {
namespace {

std::optional<Shape> ReduceShape(const Node& n, const Shape& in) {
  const int64_t since = n.op_type() == "ReduceSum" ? 13 : 18;
  auto axes = Axes(n, since);
  if (!axes) return std::nullopt;
  const bool keepdims = n.GetInt("keepdims", 1) != 0;
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axes->empty() && n.GetInt("noop_with_empty_axes", 0) != 0) return in;
  absl::flat_hash_set<int64_t> reduced;
  for (int64_t a : *axes) {
    auto axis = NormAxis(a, rank);
    if (!axis) return std::nullopt;
    reduced.insert(*axis);
  }
  Shape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!axes->empty() && !reduced.contains(i)) out.push_back(in[i]);
    else if (keepdims) out.push_back(Dim::Static(1));
  }
  return out;
}

Out Reduce(const ShapeInput& in) { return in.Typed(in.x().elem, ReduceShape(in.node, in.x().shape)); }

// The product of the elements of a shape vector.
std::optional<Shape> ReduceProdData(const DataInput& in) {
  // The product of dims (tf2onnx's Einsum writes a batch size as ReduceProd(Gather(Shape)))
  // over the one axis of the 1-D data: axes absent (noop_with_empty_axes unset), or [0]/[-1].
  auto dims = StaticDims(in.Operand(0));
  std::optional<std::vector<int64_t>> axes;
  if (const Attribute* a = in.node.FindAttribute("axes"))
    axes = std::vector<int64_t>(a->proto().ints().begin(), a->proto().ints().end());
  else if (in.node.num_inputs() > 1 && in.node.input(1)) axes = ConstantInt64s(in.node.input(1));
  else if (in.node.num_inputs() > 1 || in.node.GetInt("noop_with_empty_axes", 0) != 0) return std::nullopt;
  if (!dims || (axes && !(axes->size() == 1 && ((*axes)[0] == 0 || (*axes)[0] == -1)))) return std::nullopt;
  int64_t product = 1;
  for (int64_t d : *dims) product *= d;
  return Shape{Dim::Static(product)};
}

}  // namespace

void RegisterReduce(OpTable& table) {
  table.Shape({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
              Reduce);
  table.Data({"ReduceProd"}, ReduceProdData);
}

}  // namespace onnxsurgeon::shape_ops
