#include "passes/lowering/scatternd.h"

#include <cstdint>
#include <map>

#include "passes/lowering/element_type.h"

namespace onnxsurgeon::lowering {

const char* CombineOp(Reduction r) {
  switch (r) {
    case Reduction::kAdd: return "Add";
    case Reduction::kMul: return "Mul";
    case Reduction::kMax: return "Max";
    default: return "Min";
  }
}

Value* CombineDuplicateUpdates(Rewriter& rw, Value* data, Value* indices, Value* updates, Reduction reduction,
                               int64_t opset, int32_t elem_type) {
  std::map<std::vector<int64_t>, Value*> int_constants;  // one initializer per value
  auto ints = [&](std::vector<int64_t> v) {
    Value*& c = int_constants[v];
    if (!c) c = rw.Int64s(v);
    return c;
  };
  auto cast = [&](Value* v, int32_t to) { return rw.Op("Cast", {v}, {Rewriter::AttrInt("to", to)}); };
  // Index tuples as an [N, k] matrix, negative entries normalised against data's shape.
  Value* idx_shape = rw.Op("Shape", {indices});
  Value* k = rw.Op("Slice", {idx_shape, ints({-1}), ints({INT64_MAX})});
  Value* tuples = rw.Op("Reshape", {indices, rw.Op("Concat", {ints({-1}), k}, {Rewriter::AttrInt("axis", 0)})});
  Value* dims = rw.Op("Slice", {rw.Op("Shape", {data}), ints({0}), k});
  Value* negative = rw.Op("Less", {tuples, ints({0})});
  tuples = rw.Op("Where", {negative, rw.Op("Add", {tuples, dims}), tuples});
  // same[i, j, 0]: all k coordinates equal.
  Value* eq = rw.Op("Equal", {rw.Op("Unsqueeze", {tuples, ints({1})}), rw.Op("Unsqueeze", {tuples, ints({0})})});
  Value* matches =
      rw.Op("ReduceSum", {cast(eq, onnx::TensorProto::INT64), ints({2})}, {Rewriter::AttrInt("keepdims", 1)});
  Value* same = rw.Op("Equal", {matches, k});
  // Updates as [N, M]; candidates[i, j] = updates[j] where same, else the identity.
  Value* n = rw.Op("Slice", {rw.Op("Shape", {tuples}), ints({0}), ints({1})});
  Value* flat = rw.Op("Reshape", {updates, rw.Op("Concat", {n, ints({-1})}, {Rewriter::AttrInt("axis", 0)})});
  Value* row_j = rw.Op("Unsqueeze", {flat, ints({0})});  // [1, N, M]
  Value* identity;
  if (reduction == Reduction::kMax || reduction == Reduction::kMin) {
    identity = rw.Op("Unsqueeze", {flat, ints({1})});  // [N, 1, M]: updates[i] is among its own matches
  } else {
    float one_or_zero = reduction == Reduction::kMul ? 1.0f : 0.0f;
    int32_t t = elem_type;
    // CastLike only when the type is unknown (some converters lack it: onnx2tf).
    // Float scalars of a float type: ScalarFloat cannot fail.
    identity = lowering::IsFloatType(t) ? *rw.ScalarFloat(one_or_zero, t)
               : t != 0                 ? rw.Op("Cast", {*rw.ScalarFloat(one_or_zero)}, {Rewriter::AttrInt("to", t)})
                                        : rw.Op("CastLike", {*rw.ScalarFloat(one_or_zero), updates});
  }
  Value* candidates = rw.Op("Where", {same, row_j, identity});
  const char* reduce = reduction == Reduction::kAdd   ? "ReduceSum"
                       : reduction == Reduction::kMul ? "ReduceProd"
                       : reduction == Reduction::kMax ? "ReduceMax"
                                                      : "ReduceMin";
  // ReduceSum takes axes as an input from opset 13, the others from opset 18.
  bool axes_input = reduction == Reduction::kAdd || opset >= 18;
  std::vector<onnx::AttributeProto> attrs = {Rewriter::AttrInt("keepdims", 0)};
  if (!axes_input) attrs.push_back(Rewriter::AttrInts("axes", {1}));
  Value* total = axes_input ? rw.Op(reduce, {candidates, ints({1})}, attrs) : rw.Op(reduce, {candidates}, attrs);
  return rw.Op("Reshape", {total, rw.Op("Shape", {updates})});
}

}  // namespace onnxsurgeon::lowering
