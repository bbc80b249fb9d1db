// gather-scalar-to-reshape: writes a Gather that picks one slice of axis 0 by a constant
// scalar index, from data of rank 3 or more (x[t] of a time-major [T,B,F] sequence, an
// unrolled Scan's step), as a Gather of the one-element index, which keeps the axis, and a
// Reshape that drops it. onnx2tf 1.29 holds rank-3+ data channels-last ([T,F,B] for
// [T,B,F]) and keeps that order in the rank-reduced result: the Gather's [B,F] comes out as
// [F,B], refused by a following Gemm or silently wrong where B = F; its Reshape transposes
// the data back first and is right (targets/probes/tflite_layout_models.py).
//
// Exact: Gather with indices [k] gives the data's slice k with the axis kept as dim 1, and
// the Reshape to the original result's dims removes it. The data's dims after axis 0 must
// be static except one at most (written -1); the index keeps its type and value.
//
// Given:  %y = Gather<axis = 0>(%x, %k)          %x: float[5,2,3], %k = int64 0 (scalar)
// Result: %y = Reshape(Gather<axis = 0>(%x, %k1), [2,3])           %k1 = int64 {0}
#include "passes/backend_forms/gather_scalar_to_reshape.h"

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
  std::vector<int64_t> result_dims;  // the Reshape's shape: the data's dims after axis 0
  bool allow_zero = false;           // a dim is 0: Reshape must read it as 0, not "copy"
};

int64_t GatherAxis(const Node& gather, size_t rank) {
  int64_t axis = 0;
  if (const Attribute* a = gather.FindAttribute("axis")) axis = a->proto().i();
  return axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
}

bool IsScalarIndexConstant(const Value* k) {
  auto meta = GetConstantTypeAndDims(k);
  return meta && meta->second.empty() &&
         (meta->first == onnx::TensorProto::INT64 || meta->first == onnx::TensorProto::INT32);
}

Verdict<Plan> Decide(const Node& gather, const std::optional<Shape>& data_shape) {
  if (!data_shape) return Refuse("the data's rank is unknown");
  if (!DropsLeadingAxis(gather, data_shape)) return Refuse("not a scalar constant index on axis 0 of rank 3 or more");
  Plan plan;
  int dynamic = 0;
  for (size_t i = 1; i < data_shape->size(); ++i) {
    const Dim& d = (*data_shape)[i];
    if (!d.is_static() && ++dynamic > 1) return Refuse("more than one of the data's dims after axis 0 is not static");
    // Reshape reads a 0 in its shape as "copy the input's dim" unless allowzero (opset 14).
    if (d.is_static() && d.value == 0) {
      if (gather.graph()->OpsetVersion("") < 14)
        return Refuse("a dim after axis 0 is 0 (an empty tensor) and Reshape's allowzero needs opset 14");
      plan.allow_zero = true;
    }
    plan.result_dims.push_back(d.is_static() ? d.value : -1);
  }
  return plan;
}

Tensor IntTensor(int32_t data_type, const std::vector<int64_t>& dims, const std::vector<int64_t>& values) {
  Tensor t;
  t.mutable_meta().set_data_type(data_type);
  for (int64_t d : dims) t.mutable_meta().add_dims(d);
  std::string bytes;
  if (data_type == onnx::TensorProto::INT64) {
    bytes.assign(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  } else {
    std::vector<int32_t> v(values.begin(), values.end());
    bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int32_t));
  }
  t.SetRawBytes(std::move(bytes));
  return t;
}

class GatherScalarToReshapePass : public PatternPass {
 public:
  GatherScalarToReshapePass() {
    pattern::Pattern p("gather-scalar-to-reshape");
    pattern::OpRef g = p.Op("Gather", {p.Any("x"), p.Any("k")});
    AddRule(std::make_unique<PatternRule<Plan>>(
        "gather-scalar-to-reshape", std::move(p), g.id(),
        [](const pattern::Match& m) -> Verdict<Plan> {
          const Value* data = m.root()->input(0);
          return Decide(*m.root(), data ? ShapeOfType(data->type()) : std::nullopt);
        },
        [](const pattern::Match& m, const Plan& plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          const Node& old = *m.root();
          const Value* k = m.value("k");
          auto meta = GetConstantTypeAndDims(k);
          auto index = GetConstant(k);
          auto ints = index ? index->AsInt64s() : std::nullopt;
          if (!meta || !ints || ints->size() != 1) return absl::InternalError("the index cannot be read");
          OS_ASSIGN_OR_RETURN(Value * k1, rw.Constant(IntTensor(meta->first, {1}, *ints), "index"));
          std::vector<onnx::AttributeProto> attrs;
          if (const Attribute* a = old.FindAttribute("axis")) attrs.push_back(a->proto());
          Value* kept = rw.Op("Gather", {m.value("x"), k1}, std::move(attrs));
          OS_ASSIGN_OR_RETURN(Value * shape,
                              rw.Constant(IntTensor(onnx::TensorProto::INT64,
                                                    {static_cast<int64_t>(plan.result_dims.size())}, plan.result_dims),
                                          "shape"));
          std::vector<onnx::AttributeProto> reshape_attrs;
          if (plan.allow_zero) reshape_attrs.push_back(Rewriter::AttrInt("allowzero", 1));
          Value* y = rw.Op("Reshape", {kept, shape}, std::move(reshape_attrs));
          const Value* out = old.output(0);
          if (out->has_type()) *y->mutable_info()->mutable_type() = out->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Gather");  // the data's rank and dims decide
    return PatternPass::Run(model, context);
  }
};

}  // namespace

bool DropsLeadingAxis(const Node& gather, const std::optional<Shape>& data_shape) {
  if (!gather.Is("Gather") || gather.num_inputs() < 2 || !data_shape || data_shape->size() < 3) return false;
  return GatherAxis(gather, data_shape->size()) == 0 && IsScalarIndexConstant(gather.input(1));
}

std::string WhyScalarGatherStays(const Node& gather, const std::optional<Shape>& data_shape) {
  Verdict<Plan> v = Decide(gather, data_shape);
  return v ? "" : v.reason();
}

StatusOr<std::unique_ptr<Pass>> CreateGatherScalarToReshapePass(const PassOptions&) {
  return std::make_unique<GatherScalarToReshapePass>();
}

}  // namespace onnxsurgeon::passes
