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

namespace {

// Steps by their place in the planner's order (PLAN_STEP rows of passes/passes.def).
struct ByOrder {
  bool operator()(const PlanStep* a, const PlanStep* b) const { return a->order < b->order; }
};

// One run of the planner on a model: every pipeline it runs goes through RunText, and
// whether the model changed is what the passes' results say (PassResult::changed, the
// driver's and the Rewriter's change record), never a comparison of texts.
class Planner {
 public:
  Planner(Model& model, const CompiledProfile& target, const TargetOptions& options, const PassManagerOptions& pm)
      : model_(model), target_(target), options_(options), pm_(pm), check_(CheckOptionsFor(options.input_shapes)) {
    if (!pm_.context.forbidden) pm_.context.forbidden = std::make_shared<ForbiddenOps>();
    check_.allowed_facts = options.allowed_facts;
  }

  StatusOr<TargetRun> Run() {
    const Profile& profile = target_.profile;
    // [plan] simplify_first: simplify before the steps, named in the plan only when it did
    // something (otherwise the plan is what it was).
    bool simplified_first = false;
    if (profile.simplify_first &&
        (!CheckTarget(model_, target_, check_).blockers.empty() || ComputesFromConstants(model_))) {
      OS_ASSIGN_OR_RETURN(simplified_first, RunText("simplify", Record::kIfChanged));
    }
    OS_ASSIGN_OR_RETURN(bool changed_after_first, RunRounds(false));
    // Simplified first, then changed by the steps (a decomposition's own constants): simplify
    // once more, as the plan would have without the first one, and finish what that asks.
    // Likewise when the steps left computation on constants (an unrolled Scan's counters) on
    // a simplify-first profile, so a second --target finds nothing to do.
    const bool constants_left = profile.simplify_first && ComputesFromConstants(model_);
    if ((simplified_first || constants_left) && changed_after_first) OS_RETURN_IF_ERROR(RunRounds(true).status());
    run_.remaining = CheckTarget(model_, target_, check_);
    if (!run_.remaining.blockers.empty() && !options_.allow_remaining)
      return RemainingError(profile, run_.remaining, run_.plan, run_.reports);
    return std::move(run_);
  }

 private:
  enum class Record { kAlways, kIfChanged };

  // Given a pipeline text. Execute runs it through the pass manager with the plan's forbidden
  // ops, and adds it to the plan and its reports to the run's (with kIfChanged, only when it
  // changed the model). Result whether some pass of it changed the model.
  StatusOr<bool> RunText(const std::string& text, Record record) {
    auto items = ParsePipeline(text);
    if (!items.ok())
      return Status(items.status().code(),
                    absl::StrCat("target ", target_.profile.name, ": step '", text, "': ", items.status().message()));
    OS_ASSIGN_OR_RETURN(auto reports, RunPipeline(model_, *items, pm_));
    bool changed = std::any_of(reports.begin(), reports.end(), [](const PassRunReport& r) { return r.result.changed; });
    if (record == Record::kIfChanged && !changed) return false;
    for (auto& r : reports) run_.reports.push_back(std::move(r));
    run_.plan.push_back(text);
    return changed;
  }

  // The steps this round's blockers ask for, in the planner's order. `simplify_now` adds simplify.
  std::set<const PlanStep*, ByOrder> StepsFor(const CheckReport& report, bool simplify_now) const {
    std::set<const PlanStep*, ByOrder> steps;
    if (simplify_now) steps.insert(&PlanStepNamed("simplify"));
    for (const Finding& f : report.blockers)
      if (f.step && (!done_.count(f.step) || f.step->repeat == Repeat::kRepeatable)) steps.insert(f.step);
    // New input shapes make every computed shape stale: re-infer and fold what became constant.
    if (steps.count(&PlanStepNamed("set-input-shape"))) steps.insert(&PlanStepNamed("simplify"));
    return steps;
  }

  // The plan's rounds: each runs the steps the remaining blockers ask for, in the planner's
  // order, until nothing changes. `simplify_now` adds simplify to the first round. Result
  // whether some step changed the model.
  StatusOr<bool> RunRounds(bool simplify_now) {
    bool changed_any = false;
    for (int round = 0; round < kMaxRounds; ++round) {
      CheckReport report = CheckTarget(model_, target_, check_);
      std::set<const PlanStep*, ByOrder> steps = StepsFor(report, simplify_now && round == 0);
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
            now = CheckTarget(model_, target_, check_);
            recheck = false;
          }
          if (now && std::none_of(now->blockers.begin(), now->blockers.end(),
                                  [&](const Finding& f) { return f.step == step; }))
            continue;
        }
        // One run of a step reaches its fixed point: simplify re-infers types between its own
        // rounds (passes/simplify.cc), so what its folds made decidable folds in the same run.
        OS_ASSIGN_OR_RETURN(bool step_changed,
                            RunText(step->PipelineText({target_, model_, options_.input_shapes}), Record::kAlways));
        changed |= step_changed;
        recheck |= step_changed;
        done_.insert(step);
      }
      changed_any |= changed;
      if (!changed) break;  // a fixed point: another round would do the same again
    }
    return changed_any;
  }

  Model& model_;
  const CompiledProfile& target_;
  const TargetOptions& options_;
  PassManagerOptions pm_;
  CheckOptions check_;
  TargetRun run_;
  std::set<const PlanStep*, ByOrder> done_;  // steps run so far (kOnce ones run no more)
};

}  // namespace

StatusOr<TargetRun> RunTarget(Model& model, const CompiledProfile& target, const TargetOptions& options,
                              const PassManagerOptions& pm) {
  return Planner(model, target, options, pm).Run();
}

}  // namespace onnxsurgeon::target
