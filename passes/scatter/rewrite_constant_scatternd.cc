// rewrite-constant-scatternd: a ScatterND whose indices are a constant becomes a selection,
//     y = Where(mask, Gather(updates, map), data)
// for converters that break on ScatterND in some form (rknn-toolkit2 2.5: a constant-index
// ScatterND on what a Gemm/MatMul/Conv computed crashes its build, 'IndexError: list index
// out of range' in its conv rules; measured on index_put_op16 and index_put_dynamo18).
//
// Exact: no arithmetic, every element of y is an element of data or of updates. With k the
// length of an index tuple and data of shape D (rank r), the indices pick elements (k = r)
// or slices D[k:] (k < r) of data. mask (bool, D[:k] padded with r-k ones) marks the
// positions written; map (int64, D[:k]) holds for each one the number of the index tuple
// that writes it (0 where nothing is written: those gathered values are never selected).
// With one level of index tuples (indices of rank 2, updates [N] + D[k:]), map indexes
// updates' axis 0 with Gather; with more (indices [a, b, ..., k]), map holds the tuple's
// position [a_i, b_i, ...] and GatherND reads it.
//
// Only reduction='none' (the attribute absent or "none"): a reduction would be arithmetic
// (lower-scatternd-reduction handles those). Left alone, saying why, when the indices are
// not a constant, repeat an element (ScatterND's result is then undefined), leave D's range,
// when D[:k] is not static, or when mask and map would exceed max-elements.
//
// Options:
//   max-elements=16777216   largest D[:k] (elements of mask and of map) the pass builds
//
// Given:  %y = ScatterND(%h, {[0], [2], [5]}, %v)          h: float[6, 8], v: float[3, 8]
// Result: %y = Where({1,0,1,0,0,1} as bool[6, 1], Gather(%v, {0,0,1,0,0,2}), %h)
#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct SelectPlan {
  std::vector<int64_t> prefix;      // D[:k]
  int64_t rank = 0;                 // r
  std::vector<int64_t> tuple_dims;  // indices.shape[:-1]
  std::vector<int64_t> mask;        // per position of D[:k]: 0 or 1
  std::vector<int64_t> map;         // per position: the tuple's flat number
};

class RewriteConstantScatterNDPass : public PatternPass {
 public:
  explicit RewriteConstantScatterNDPass(int64_t max_elements) {
    pattern::Pattern p("constant-scatternd");
    pattern::OpRef scatter = p.Op("ScatterND", {p.Any("data"), p.Any("indices"), p.Any("updates")})
                                 .CaptureAttr("reduction", "reduction")
                                 .Capture("scatter");
    AddRule(std::make_unique<PatternRule<SelectPlan>>(
        "constant-scatternd", std::move(p), scatter.id(),
        [max_elements](const pattern::Match& m) -> Verdict<SelectPlan> {
          if (const Attribute* r = m.attr("reduction"); r && r->s() != "none")
            return Refuse(absl::StrCat("reduction='", r->s(), "' is arithmetic (lower-scatternd-reduction)"));
          auto c = GetConstant(m.value("indices"));
          if (!c) return Refuse("its indices are computed at run time");
          auto values = c->AsInt64s();
          if (!values || c->dims.empty()) return Refuse("its indices are not an integer tensor of rank >= 1");
          const int64_t k = c->dims.back();
          std::optional<Shape> shape = ShapeOf(m.value("data"));
          if (!shape) return Refuse("the rank of its data is unknown (run infer-shapes first)");
          const std::vector<int64_t> dims = DimsOrMinusOne(*shape);
          const int64_t rank = static_cast<int64_t>(dims.size());
          if (k < 1 || k > rank) return Refuse(absl::StrCat("index tuples of length ", k, " for data of rank ", rank));
          SelectPlan plan;
          plan.rank = rank;
          plan.tuple_dims.assign(c->dims.begin(), c->dims.end() - 1);
          // D[:k] must be static; the rest may be anything.
          int64_t positions = 1;
          for (int64_t i = 0; i < k; ++i) {
            if (dims[i] < 0) return Refuse(absl::StrCat("dimension ", i, " of its data is not static"));
            plan.prefix.push_back(dims[i]);
            positions *= dims[i];
            if (positions > max_elements)
              return Refuse(
                  absl::StrCat("the indexed part of its data has more than max-elements=", max_elements, " elements"));
          }
          plan.mask.assign(positions, 0);
          plan.map.assign(positions, 0);
          const int64_t tuples = static_cast<int64_t>(values->size()) / k;
          if (tuples == 0) return Refuse("it has no index tuples (it writes nothing)");
          for (int64_t t = 0; t < tuples; ++t) {
            int64_t flat = 0;
            for (int64_t i = 0; i < k; ++i) {
              int64_t idx = (*values)[t * k + i];
              if (idx < 0) idx += plan.prefix[i];
              if (idx < 0 || idx >= plan.prefix[i])
                return Refuse(absl::StrCat("index ", (*values)[t * k + i], " is outside dimension ", i, " of size ",
                                           plan.prefix[i]));
              flat = flat * plan.prefix[i] + idx;
            }
            if (plan.mask[flat]) return Refuse("two index tuples write one element (ScatterND's result is undefined)");
            plan.mask[flat] = 1;
            plan.map[flat] = t;
          }
          return plan;
        },
        [](const pattern::Match& m, const SelectPlan& plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* data = m.value("data");
          Value* updates = m.value("updates");
          std::vector<int64_t> mask_dims = plan.prefix;
          mask_dims.resize(plan.rank, 1);
          OS_ASSIGN_OR_RETURN(Tensor mask_t, Tensor::FromInt64s(onnx::TensorProto::BOOL, mask_dims, plan.mask));
          OS_ASSIGN_OR_RETURN(Value * mask, rw.Constant(std::move(mask_t), "mask"));
          Value* gathered = nullptr;
          if (plan.tuple_dims.size() == 1) {
            OS_ASSIGN_OR_RETURN(Tensor map_t, Tensor::FromInt64s(onnx::TensorProto::INT64, plan.prefix, plan.map));
            OS_ASSIGN_OR_RETURN(Value * map, rw.Constant(std::move(map_t), "map"));
            gathered = rw.Op("Gather", {updates, map}, {Rewriter::AttrInt("axis", 0)});
          } else {
            // The tuple's position in indices.shape[:-1], for GatherND over updates.
            const int64_t q = static_cast<int64_t>(plan.tuple_dims.size());
            std::vector<int64_t> positions;
            positions.reserve(plan.map.size() * q);
            for (int64_t flat : plan.map) {
              std::vector<int64_t> pos(q);
              for (int64_t i = q - 1; i >= 0; --i) {
                pos[i] = plan.tuple_dims[i] == 0 ? 0 : flat % plan.tuple_dims[i];
                flat = plan.tuple_dims[i] == 0 ? 0 : flat / plan.tuple_dims[i];
              }
              positions.insert(positions.end(), pos.begin(), pos.end());
            }
            std::vector<int64_t> map_dims = plan.prefix;
            map_dims.push_back(q);
            OS_ASSIGN_OR_RETURN(Tensor map_t, Tensor::FromInt64s(onnx::TensorProto::INT64, map_dims, positions));
            OS_ASSIGN_OR_RETURN(Value * map, rw.Constant(std::move(map_t), "map"));
            gathered = rw.Op("GatherND", {updates, map});
          }
          return std::vector<Value*>{rw.Op("Where", {mask, gathered, data})};
        }));
  }

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "ScatterND");
    return PatternPass::Run(model, context);
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateRewriteConstantScatterNDPass(const PassOptions& o) {
  return std::make_unique<RewriteConstantScatterNDPass>(o.Int("max-elements"));
}

}  // namespace onnxsurgeon::passes
