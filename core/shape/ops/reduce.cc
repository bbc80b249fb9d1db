// Reductions over constant axes (an attribute before opset 18, ReduceSum's before 13).
#include "absl/container/flat_hash_set.h"
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

}  // namespace

void RegisterReduce(OpTable& table) {
  table.Shape({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
               "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"},
              Reduce);
}

}  // namespace onnxsurgeon::shape_ops
