#include "passes/targeting/planner.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/ir/constant.h"
#include "core/ir/input_shapes.h"
#include "core/pass/options.h"
#include "core/pass/pipeline.h"

namespace onnxsurgeon::target {
namespace {

constexpr int kMaxRounds = 6;

// A main-graph node that computes from constants only (simplify's fold-constants evaluates
// it): a profile that simplifies first ([plan] simplify_first) does so for it too, though
// no fact blocks it. nncase 1.9 refuses such arithmetic when left to it (T5's relative
// position buckets, int64 Abs/Less/Where on constants: 'bad optional access';
// targets/probes/nncase_constant_compute.txt). Constant nodes and nodes with no input are
// not computations (Random* draws are never folded).
bool ComputesFromConstants(const Model& model) {
  for (const Node* n : model.graph().nodes()) {
    if (n->Is("Constant") || n->num_inputs() == 0 || !n->Is(n->op_type())) continue;  // ai.onnx only
    bool all = true, any = false;
    for (size_t i = 0; i < n->num_inputs() && all; ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      any = true;
      all = GetConstantTypeAndDims(v).has_value();
    }
    if (all && any) return true;
  }
  return false;
}

Status RemainingError(const Profile& profile, const CheckReport& report, const std::vector<std::string>& plan,
                      const std::vector<PassRunReport>& reports) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < report.blockers.size() && i < 10; ++i) lines.push_back(report.blockers[i].Describe());
  if (report.blockers.size() > 10) lines.push_back(absl::StrCat("... and ", report.blockers.size() - 10, " more"));
  // What a step's pass refused, with its reason ("left: com.microsoft.Attention: ...").
  for (const PassRunReport& r : reports)
    for (const auto& [key, n] : r.result.counts)
      if (absl::StartsWith(key, "left: ")) lines.push_back(absl::StrCat(r.name, " ", key, " (", n, ")"));
  return absl::FailedPreconditionError(
      absl::StrCat("target ", profile.name, ": ", report.blockers.size(), " blocker(s) remain after the plan (",
                   plan.empty() ? "nothing to run" : absl::StrJoin(plan, ","), "): ", absl::StrJoin(lines, "; ")));
}

}  // namespace

CheckOptions CheckOptionsFor(const std::string& input_shapes) {
  CheckOptions options;
  // A malformed text is set-input-shape's to refuse: check reads nothing from it.
  auto shapes = ParseInputShapes(input_shapes, ShapeNames::kRequired);
  if (!shapes.ok()) return options;
  for (const InputShape& s : *shapes) {
    options.inputs_with_shapes.insert(s.name);
    if (!s.dims.empty() && s.dims[0] >= 0) options.input_batch[s.name] = s.dims[0];
  }
  return options;
}

// Steps by their place in the planner's order (PLAN_STEP rows of passes/passes.def).
struct ByOrder {
  bool operator()(const PlanStep* a, const PlanStep* b) const { return a->order < b->order; }
};

StatusOr<TargetRun> RunTarget(Model& model, const CompiledProfile& target, const TargetOptions& options,
                              const PassManagerOptions& pm_in) {
  const Profile& profile = target.profile;
  PassManagerOptions pm = pm_in;
  if (!pm.context.forbidden) pm.context.forbidden = std::make_shared<ForbiddenOps>();
  CheckOptions check = CheckOptionsFor(options.input_shapes);
  check.allowed_facts = options.allowed_facts;
  TargetRun run;
  bool simplified_first = false;
  if (profile.simplify_first && (!CheckTarget(model, target, check).blockers.empty() || ComputesFromConstants(model))) {
    OS_ASSIGN_OR_RETURN(auto items, ParsePipeline("simplify"));
    OS_ASSIGN_OR_RETURN(auto reports, RunPipeline(model, items, pm));
    // Named in the plan only when it did something: otherwise the plan is what it was.
    if (std::any_of(reports.begin(), reports.end(), [](const PassRunReport& r) { return r.result.changed; })) {
      for (auto& r : reports) run.reports.push_back(std::move(r));
      run.plan.push_back("simplify");
      simplified_first = true;
    }
  }
  std::set<const PlanStep*, ByOrder> done;
  // The plan's rounds: each runs the steps the remaining blockers ask for, in the planner's
  // order, until nothing changes. `simplify_now` adds simplify to the first round.
  auto run_rounds = [&](bool simplify_now) -> StatusOr<bool> {
    bool changed_any = false;
    for (int round = 0; round < kMaxRounds; ++round) {
      CheckReport report = CheckTarget(model, target, check);
      std::set<const PlanStep*, ByOrder> steps;
      if (simplify_now && round == 0) steps.insert(&PlanStepNamed("simplify"));
      for (const Finding& f : report.blockers)
        if (f.step && (!done.count(f.step) || f.step->repeat == Repeat::kRepeatable)) steps.insert(f.step);
      // New input shapes make every computed shape stale: re-infer and fold what became constant.
      if (steps.count(&PlanStepNamed("set-input-shape"))) steps.insert(&PlanStepNamed("simplify"));
      if (steps.empty()) break;
      bool changed = false;
      bool recheck = false;                 // a step changed the model since `now` was checked
      std::optional<CheckReport> now;       // the blockers after this round's last change (none yet: `report`)
      for (const PlanStep* step : steps) {  // in the planner's fixed order
        // An earlier step of this round may have removed this step's blockers too
        // (convert-opset decomposes Gelu, so rewrite-gelu has nothing left to do; converting
        // to opset 12 for ReduceSum lowers the IR version too).
        if (step != &PlanStepNamed("simplify")) {
          if (recheck) {
            now = CheckTarget(model, target, check);
            recheck = false;
          }
          if (now && std::none_of(now->blockers.begin(), now->blockers.end(),
                                  [&](const Finding& f) { return f.step == step; }))
            continue;
        }
        std::string text = step->PipelineText({target, model, options.input_shapes});
        auto items = ParsePipeline(text);
        if (!items.ok())
          return Status(items.status().code(),
                        absl::StrCat("target ", profile.name, ": step '", text, "': ", items.status().message()));
        // One run of a step reaches its fixed point: simplify re-infers types between its own
        // rounds (passes/simplify.cc), so what its folds made decidable folds in the same run.
        OS_ASSIGN_OR_RETURN(auto reports, RunPipeline(model, *items, pm));
        for (auto& r : reports) {
          changed |= r.result.changed;
          recheck |= r.result.changed;
          run.reports.push_back(std::move(r));
        }
        run.plan.push_back(text);
        done.insert(step);
      }
      changed_any |= changed;
      if (!changed) break;  // a fixed point: another round would do the same again
    }
    return changed_any;
  };
  OS_ASSIGN_OR_RETURN(bool changed_after_first, run_rounds(false));
  // Simplified first, then changed by the steps (a decomposition's own constants): simplify
  // once more, as the plan would have without the first one, and finish what that asks.
  // Likewise when the steps left computation on constants (an unrolled Scan's counters) on
  // a simplify-first profile, so a second --target finds nothing to do.
  const bool constants_left = profile.simplify_first && ComputesFromConstants(model);
  if ((simplified_first || constants_left) && changed_after_first && run.plan.back() != "simplify") {
    OS_RETURN_IF_ERROR(run_rounds(true).status());
  }
  run.remaining = CheckTarget(model, target, check);
  if (!run.remaining.blockers.empty() && !options.allow_remaining)
    return RemainingError(profile, run.remaining, run.plan, run.reports);
  return run;
}

}  // namespace onnxsurgeon::target
