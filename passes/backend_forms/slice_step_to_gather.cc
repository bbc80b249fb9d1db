// slice-step-to-gather: writes a Slice's axes with a step other than 1 (a reversal x[::-1],
// every other row x[::2]) as a Gather of the constant index list they select, for runtimes
// and converters without Slice steps (pnnx lowers Slice to ncnn's Crop, which has no step:
// targets/ncnn.toml's step-not-one fact).
//
// Exact: Slice on an axis of size d with start s, end e, step k (negative s and e count
// from the end, then clamped: to [0, d] for k > 0, to [0, d - 1] and [-1, d - 1] for k < 0)
// selects s, s + k, ... while before e; Gather with those indices (1-D, so the rank
// stays) selects the same. Axes with step 1 stay one Slice (before the Gathers). Needs
// starts, ends, axes and steps constant (opset >= 10) and the dims of the stepped axes
// static; refused when an axis would select nothing (a Gather of no indices).
//
// Options: form=gather (the default) or form=concat: each stepped axis as a Concat of
// one-element step-1 Slices in the selected order, for converters that mistranslate a
// Gather of a constant index list (pnnx 20261020 reads it as a single index: an [1,8]
// output for [1,3,8], targets/probes/ncnn_models.txt). Exact the same way: Concat of the
// slices [i, i + 1) for the selected i is the selected elements in order.
//
// Given:  %y = Slice(%x, [-1], [INT64_MIN], [1], [-1])       %x: float[1,4,3]
// Result: %y = Gather<axis = 1>(%x, [3, 2, 1, 0])
//         (form=concat: Concat<axis = 1>(Slice(%x, [3], [4], [1]), ..., Slice(%x, [0], [1], [1])))
#include "passes/backend_forms/slice_step_to_gather.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/shape.h"
#include "core/ir/tensor.h"
#include "core/pass/pattern_pass.h"
#include "passes/lowering/element_type.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

struct StepPlan {
  std::vector<int64_t> starts, ends, axes;                        // the step-1 axes, kept as a Slice
  std::vector<std::pair<int64_t, std::vector<int64_t>>> gathers;  // (axis, indices) per stepped axis
};

// The indices Slice selects on an axis of size `d`.
std::vector<int64_t> Selected(int64_t d, int64_t s, int64_t e, int64_t k) {
  if (s < 0) s += d;
  if (e < 0) e += d;
  std::vector<int64_t> out;
  if (k > 0) {
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    for (int64_t i = s; i < e; i += k) out.push_back(i);
  } else {
    s = std::clamp<int64_t>(s, 0, d - 1);
    e = std::clamp<int64_t>(e, -1, d - 1);
    for (int64_t i = s; i > e; i += k) out.push_back(i);
  }
  return out;
}

Verdict<StepPlan> Decide(const Node& slice) {
  if (slice.num_inputs() < 5 || !slice.input(4)) return Refuse("no steps input (every step is 1)");
  auto starts = ConstantInt64s(slice.input(1));
  auto ends = ConstantInt64s(slice.input(2));
  auto steps = ConstantInt64s(slice.input(4));
  if (!starts || !ends || !steps) return Refuse("starts, ends or steps are computed at run time");
  auto shape = ShapeOf(slice.input(0));
  if (!shape) return Refuse("the input's rank is unknown");
  const int64_t rank = static_cast<int64_t>(shape->size());
  std::vector<int64_t> axes;
  if (slice.num_inputs() >= 4 && slice.input(3)) {
    auto a = ConstantInt64s(slice.input(3));
    if (!a) return Refuse("the axes are computed at run time");
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() || steps->size() != starts->size())
    return Refuse("starts, ends, axes and steps differ in length");
  if (std::all_of(steps->begin(), steps->end(), [](int64_t k) { return k == 1; })) return Refuse("every step is 1");
  StepPlan plan;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return Refuse(absl::StrCat("axis ", axes[i], " is out of range"));
    const int64_t k = (*steps)[i];
    if (k == 0) return Refuse("a step is 0");
    if (k == 1) {
      plan.starts.push_back((*starts)[i]);
      plan.ends.push_back((*ends)[i]);
      plan.axes.push_back(axis);
      continue;
    }
    const Dim& d = (*shape)[axis];
    if (!d.is_static()) return Refuse(absl::StrCat("the dim of stepped axis ", axis, " is not static"));
    std::vector<int64_t> idx = Selected(d.value, (*starts)[i], (*ends)[i], k);
    if (idx.empty()) return Refuse(absl::StrCat("axis ", axis, " selects nothing"));
    plan.gathers.emplace_back(axis, std::move(idx));
  }
  return plan;
}

// Axis `axis` of `y` at the selected indices, as one-element Slices joined by Concat.
Value* ConcatOfSlices(Rewriter& rw, Value* y, int64_t axis, const std::vector<int64_t>& indices) {
  Value* axes = rw.Int64s({axis});
  std::vector<Value*> pieces;
  for (int64_t i : indices) pieces.push_back(rw.Op("Slice", {y, rw.Int64s({i}), rw.Int64s({i + 1}), axes}));
  return pieces.size() == 1 ? pieces[0] : rw.Op("Concat", pieces, {Rewriter::AttrInt("axis", axis)});
}

class SliceStepToGatherPass : public PatternPass {
 public:
  explicit SliceStepToGatherPass(bool concat) {
    pattern::Pattern p("slice-step-to-gather");
    pattern::OpRef s = p.Op("Slice", {p.Any("x"), p.Any("starts"), p.Any("ends"), p.Any("axes"), p.Any("steps")});
    AddRule(std::make_unique<PatternRule<StepPlan>>(
        "slice-step-to-gather", std::move(p), s.id(),
        [](const pattern::Match& m) -> Verdict<StepPlan> { return Decide(*m.root()); },
        [concat](const pattern::Match& m, const StepPlan& plan, Rewriter& rw) -> StatusOr<std::vector<Value*>> {
          Value* y = m.value("x");
          if (!plan.axes.empty()) {
            std::vector<int64_t> ones(plan.axes.size(), 1);
            y = rw.Op("Slice",
                      {y, rw.Int64s(plan.starts), rw.Int64s(plan.ends), rw.Int64s(plan.axes), rw.Int64s(ones)});
          }
          for (const auto& [axis, indices] : plan.gathers)
            y = concat ? ConcatOfSlices(rw, y, axis, indices)
                       : rw.Op("Gather", {y, rw.Int64s(indices)}, {Rewriter::AttrInt("axis", axis)});
          const Value* out = m.root()->output(0);
          if (out->has_type()) *y->mutable_info()->mutable_type() = out->info()->type();
          return std::vector<Value*>{y};
        }));
  }

  // Slices of one shape stepped the same way get equal index lists: merged here, so a later
  // simplify (whose dedupe-initializers would merge them) finds nothing left to do.
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    lowering::InferTypesIfNeeded(model, "Slice");  // the stepped axes' dims decide
    OS_ASSIGN_OR_RETURN(PassResult result, PatternPass::Run(model, context));
    if (!result.changed) return result;
    OS_ASSIGN_OR_RETURN(auto dedupe, CreateDedupeInitializersPass(PassOptions{}));
    OS_ASSIGN_OR_RETURN(PassResult merged, dedupe->Run(model, context));
    for (const auto& [what, n] : merged.counts) result.Count(what, n);
    return result;
  }
};

}  // namespace

std::string WhySliceStepsStay(const Node& node) {
  Verdict<StepPlan> v = Decide(node);
  return v ? "" : v.reason();
}

std::string SliceStepsBeyondReversal(const Node& slice) {
  if (!slice.Is("Slice") || slice.num_inputs() < 5 || !slice.input(4)) return "";
  auto steps = ConstantInt64s(slice.input(4));
  if (!steps) return absl::StrCat("steps '", slice.input(4)->name(), "' are computed at run time");
  auto starts = ConstantInt64s(slice.input(1));
  auto ends = ConstantInt64s(slice.input(2));
  auto shape = ShapeOf(slice.input(0));
  std::optional<std::vector<int64_t>> axes;
  if (slice.num_inputs() >= 4 && slice.input(3)) axes = ConstantInt64s(slice.input(3));
  const std::string all = absl::StrCat("steps '", slice.input(4)->name(), "' = [", absl::StrJoin(*steps, ","), "]");
  for (size_t i = 0; i < steps->size(); ++i) {
    const int64_t k = (*steps)[i];
    if (k == 1) continue;
    if (k != -1 || !starts || !ends || !shape || starts->size() != steps->size() || ends->size() != steps->size())
      return all;
    int64_t axis = static_cast<int64_t>(i);
    if (slice.num_inputs() >= 4 && slice.input(3)) {
      if (!axes || axes->size() != steps->size()) return all;
      axis = (*axes)[i] < 0 ? (*axes)[i] + static_cast<int64_t>(shape->size()) : (*axes)[i];
    }
    if (axis < 0 || axis >= static_cast<int64_t>(shape->size()) || !(*shape)[axis].is_static()) return all;
    const int64_t d = (*shape)[axis].value;
    std::vector<int64_t> whole;
    for (int64_t j = d - 1; j >= 0; --j) whole.push_back(j);
    if (Selected(d, (*starts)[i], (*ends)[i], k) != whole) return absl::StrCat(all, ", not a whole-axis reversal");
  }
  return "";
}

StatusOr<std::unique_ptr<Pass>> CreateSliceStepToGatherPass(const PassOptions& o) {
  return std::make_unique<SliceStepToGatherPass>(o.String("form") == "concat");
}

}  // namespace onnxsurgeon::passes
