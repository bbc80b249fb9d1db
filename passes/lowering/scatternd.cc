#include "passes/lowering/scatternd.h"

#include <cstdint>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "passes/lowering/element_type.h"

namespace onnxsurgeon::lowering {
namespace {

// Static dims of a value (nullopt where unknown or for an unknown rank).
std::optional<std::vector<int64_t>> StaticShape(const Value* v) {
  if (auto c = GetConstant(v)) return c->dims;
  return StaticDims(ShapeOfType(v->type()));
}

}  // namespace

bool ProvablyDistinct(const Value* indices, const Value* data) {
  auto c = GetConstant(indices);
  if (!c || c->dims.empty()) return false;
  auto values = c->AsInt64s();
  if (!values) return false;
  int64_t k = c->dims.back();
  if (k <= 0) return false;
  std::optional<std::vector<int64_t>> data_dims = StaticShape(data);
  std::set<std::vector<int64_t>> seen;
  for (size_t start = 0; start + k <= values->size(); start += k) {
    std::vector<int64_t> tuple(values->begin() + start, values->begin() + start + k);
    for (int64_t i = 0; i < k; ++i) {
      if (tuple[i] >= 0) continue;
      if (!data_dims || static_cast<int64_t>(data_dims->size()) <= i) return false;
      tuple[i] += (*data_dims)[i];
    }
    if (!seen.insert(std::move(tuple)).second) return false;
  }
  return true;
}

Status CheckPairSize(const Node& scatter, const Value* indices, const Value* updates, int64_t max_elements,
                     const std::string& who) {
  auto idx = StaticShape(indices);
  auto upd = StaticShape(updates);
  if (!idx || !upd || idx->empty()) return absl::OkStatus();
  int64_t n = 1, elements = 1;
  for (size_t i = 0; i + 1 < idx->size(); ++i) n *= (*idx)[i];
  for (int64_t d : *upd) elements *= d;
  int64_t m = n == 0 ? 0 : elements / n;
  if (n > 0 && static_cast<double>(n) * n * m > static_cast<double>(max_elements)) {
    return absl::ResourceExhaustedError(
        absl::StrCat(who, ": ScatterND '", scatter.name(), "' has ", n, " index tuples of ", m,
                     " elements and its indices are not a constant without repeats; lowering it exactly needs a ", n,
                     "x", n, "x", m, " tensor (", static_cast<double>(n) * n * m,
                     " elements) > max-pair-elements=", max_elements, " (raise the option to accept it)"));
  }
  return absl::OkStatus();
}

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

StatusOr<Value*> ScatterWithoutReduction(Rewriter& rw, const Node& scatter, Value* data, Value* indices, Value* updates,
                                         Reduction reduction, int64_t opset, int32_t elem_type,
                                         int64_t max_pair_elements, const std::string& who) {
  Value* total = updates;
  if (!ProvablyDistinct(indices, data)) {
    if (max_pair_elements > 0) OS_RETURN_IF_ERROR(CheckPairSize(scatter, indices, updates, max_pair_elements, who));
    total = CombineDuplicateUpdates(rw, data, indices, updates, reduction, opset, elem_type);
  }
  Value* combined = rw.Op(CombineOp(reduction), {rw.Op("GatherND", {data, indices}), total});
  return rw.Op("ScatterND", {data, indices, combined});
}

}  // namespace onnxsurgeon::lowering
