// gather-nonnegative-indices: writes a Gather's constant negative indices as the non-negative
// ones they stand for (index + the data's dim on the axis), for runtimes that do not count
// them from the end: nncase 1.9 reads out of bounds for them (Gather(x, -1, axis=1), a
// decoder's last-token pick, off by 1.8e31; targets/probes/embedding_models.py
// gather_const_neg_*), and gets the non-negative index right.
//
// Exact: ONNX Gather reads index i < 0 as i + dims[axis]. The indices must be a constant
// (an initializer or Constant) of int64 or int32, with at least one negative element, and
// the data's dim on the axis static; an index out of [-dim, dim) is refused (onnxruntime
// refuses it too). The new constant keeps the indices' element type and dims.
//
// Given:  %y = Gather<axis = 1>(%x, %k)          %x: float[2,8,16], %k = int64 -1
// Result: %y = Gather<axis = 1>(%x, %k2)         %k2 = int64 7
#include "passes/backend_forms/gather_nonnegative_indices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/ir/tensor.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct Plan {
  std::vector<int64_t> indices;  // non-negative
  std::vector<int64_t> dims;     // the indices' dims
  int32_t data_type = 0;         // INT64 or INT32
};

// The plan for `gather` whose data is shaped `data_shape` (nullopt: unknown).
Verdict<Plan> Decide(const Node& gather, const std::optional<Shape>& data_shape) {
  const Value* k = gather.input(1);
  auto meta = GetConstantTypeAndDims(k);
  if (!meta) return Refuse("the indices are computed at run time");
  if (meta->first != onnx::TensorProto::INT64 && meta->first != onnx::TensorProto::INT32)
    return Refuse("the indices are neither int64 nor int32");
  auto values = GetConstant(k);
  if (!values) return Refuse("the indices cannot be read");
  auto ints = values->AsInt64s();
  if (!ints) return Refuse("the indices cannot be read");
  std::vector<int64_t> idx = std::move(*ints);
  if (std::none_of(idx.begin(), idx.end(), [](int64_t v) { return v < 0; })) return Refuse("no negative index");
  if (!data_shape) return Refuse("the data's shape is unknown");
  const Shape& dims = *data_shape;
  int64_t axis = 0;
  if (const Attribute* a = gather.FindAttribute("axis")) axis = a->proto().i();
  if (axis < 0) axis += dims.size();
  if (axis < 0 || axis >= static_cast<int64_t>(dims.size())) return Refuse("axis is out of range");
  if (!dims[axis].is_static()) return Refuse("the data's dim on the axis is not static");
  const int64_t n = dims[axis].value;
  for (int64_t& v : idx) {
    if (v < -n || v >= n) return Refuse(absl::StrCat("index ", v, " is out of range for dim ", n));
    if (v < 0) v += n;
  }
  return Plan{std::move(idx), meta->second, meta->first};
}

class GatherNonnegativeIndicesPass : public PatternPass {
 public:
  GatherNonnegativeIndicesPass() {
    pattern::Pattern p("gather-nonnegative-indices");
    pattern::OpRef g = p.Op("Gather", {p.Any("x"), p.Any("k")});
    AddRule(std::make_unique<PatternRule<Plan>>(
        "gather-nonnegative-indices", std::move(p), g.id(),
        [](const pattern::Match& m) -> Verdict<Plan> {
          const Value* data = m.root()->input(0);
          return Decide(*m.root(), data ? ShapeOfType(data->type()) : std::nullopt);
        },
        [](const pattern::Match& m, const Plan& plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Tensor t;
          t.mutable_meta().set_data_type(plan.data_type);
          for (int64_t d : plan.dims) t.mutable_meta().add_dims(d);
          std::string bytes;
          if (plan.data_type == onnx::TensorProto::INT64) {
            bytes.assign(reinterpret_cast<const char*>(plan.indices.data()), plan.indices.size() * sizeof(int64_t));
          } else {
            std::vector<int32_t> v(plan.indices.begin(), plan.indices.end());
            bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int32_t));
          }
          t.SetRawBytes(std::move(bytes));
          OS_ASSIGN_OR_RETURN(Value * k, rw.Constant(std::move(t), "indices"));
          const Node& old = *m.root();
          std::vector<onnx::AttributeProto> attrs;
          if (const Attribute* a = old.FindAttribute("axis")) attrs.push_back(a->proto());
          Value* y = rw.Op("Gather", {m.value("x"), k}, std::move(attrs));
          const Value* out = old.output(0);
          if (out->has_type()) *y->mutable_info()->mutable_type() = out->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Gather");  // the data's dim on the axis decides
    return PatternPass::Run(model, context);
  }
};

}  // namespace

std::string WhyGatherIndicesStay(const Node& gather, const std::optional<Shape>& data_shape) {
  Verdict<Plan> v = Decide(gather, data_shape);
  return v ? "" : v.reason();
}

StatusOr<std::unique_ptr<Pass>> CreateGatherNonnegativeIndicesPass(const PassOptions&) {
  return std::make_unique<GatherNonnegativeIndicesPass>();
}

}  // namespace onnxsurgeon::passes
