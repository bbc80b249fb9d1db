// lower-scatternd-reduction: removes ScatterND's `reduction` attribute, for targets that
// reject it (TensorRT, runtimes older than opset 16), without changing the result.
//
// reduction='none' is the default: the attribute is dropped. For add/mul/max/min the
// updates that hit one element must all be combined with it, also when indices repeat,
// so ScatterND into zeros plus an Add is NOT enough. Two exact lowerings:
//
// 1. indices are a constant whose index tuples are provably distinct (no negative index,
//    or negative ones normalised against a static data shape):
//        y = ScatterND(data, indices, data[indices] (op) updates)
//    with data[indices] = GatherND(data, indices).
// 2. otherwise (indices computed at run time, or repeating): every update i is first
//    combined with all updates j that hit the same element,
//        same[i, j] = (indices[i] == indices[j])           (normalised, whole tuples)
//        total[i]   = reduce_j Where(same[i, j], updates[j], identity)
//    so every duplicate carries the same total, and then as in 1:
//        y = ScatterND(data, indices, data[indices] (op) total)
//    where duplicates write identical values, so which write wins does not matter.
//    Identity is 0 for add, 1 for mul, updates[i] itself for max/min (no sentinel: works
//    for every type). Where (not a 0/1 product) keeps inf and NaN updates from leaking
//    into other elements. Cost: an N x N x M tensor (N index tuples, M elements per
//    update); when N and M are static and N*N*M exceeds max-pair-elements the pass stops
//    with an error rather than build it.
// Max and min are exact. Add and mul combine the duplicates before data rather than one
// by one into it; the same numbers are summed (multiplied), in another order, as ONNX
// leaves the order of duplicate updates unspecified.
//
// Options:
//   max-pair-elements=67108864   largest N*N*M lowering 2 may build (when shapes are known)
//
// Before:  y = ScatterND<reduction="add">(data, idx, upd)
// After:   y = ScatterND(data, idx, Add(GatherND(data, idx), total))   (total as above)
#include <set>

#include "absl/strings/str_cat.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/lowering/scatternd.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

using lowering::Reduction;

StatusOr<Reduction> ParseReduction(const Attribute* a) {
  if (!a || a->s() == "none") return Reduction::kNone;
  if (a->s() == "add") return Reduction::kAdd;
  if (a->s() == "mul") return Reduction::kMul;
  if (a->s() == "max") return Reduction::kMax;
  if (a->s() == "min") return Reduction::kMin;
  return absl::InvalidArgumentError(
      absl::StrCat("ScatterND reduction='", a->s(), "' is not one of none, add, mul, max, min"));
}

class LowerScatterNDReductionPass : public PatternPass {
 public:
  explicit LowerScatterNDReductionPass(int64_t max_pair_elements) : max_pair_elements_(max_pair_elements) {
    pattern::Pattern p("scatternd-reduction");
    pattern::OpRef scatter = p.Op("ScatterND", {p.Any("data"), p.Any("indices"), p.Any("updates")})
                                 .CaptureAttr("reduction", "reduction")
                                 .Capture("scatter");
    AddRule(std::make_unique<PatternRule<>>(
        "scatternd-reduction", std::move(p), scatter.id(),
        [](const pattern::Match& m) -> Verdict<> {
          if (m.attr("reduction")) return Matched();
          return Refuse("no reduction attribute");
        },
        [this](const pattern::Match& m, NoPlan, Rewriter& rw) { return Lower(m, rw); }));
  }

 private:
  StatusOr<std::vector<Value*>> Lower(const pattern::Match& m, Rewriter& rw) const {
    Node* scatter = m.node("scatter");
    Value* data = m.value("data");
    Value* indices = m.value("indices");
    Value* updates = m.value("updates");
    OS_ASSIGN_OR_RETURN(Reduction reduction, ParseReduction(m.attr("reduction")));
    if (reduction == Reduction::kNone) return std::vector<Value*>{rw.Op("ScatterND", {data, indices, updates})};
    int32_t type = ElementType(updates);
    if (type == 0) type = ElementType(data);
    OS_ASSIGN_OR_RETURN(Value * y, lowering::ScatterWithoutReduction(rw, *scatter, data, indices, updates, reduction,
                                                                     scatter->graph()->OpsetVersion(""), type,
                                                                     max_pair_elements_, "lower-scatternd-reduction"));
    return std::vector<Value*>{y};
  }

  int64_t max_pair_elements_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateLowerScatterNDReductionPass(const PassOptions& o) {
  return std::make_unique<LowerScatterNDReductionPass>(o.Int("max-pair-elements"));
}

}  // namespace onnxsurgeon::passes
