#include "core/pass/fixed_point.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/pass/pipeline.h"

namespace onnxsurgeon {
namespace {

class FixedPointPass : public Pass {
 public:
  FixedPointPass(const FixedPointPipeline& pipeline, int64_t max_rounds,
                 std::vector<std::pair<std::string, std::unique_ptr<Pass>>> steps)
      : pipeline_(pipeline), max_rounds_(max_rounds), steps_(std::move(steps)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    for (int64_t round = 0; round < max_rounds_; ++round) {
      bool changed = false;
      if (pipeline_.before_round) {
        auto refreshed = pipeline_.before_round(model);
        if (refreshed.ok() && *refreshed > 0) {
          result.counts["before-round"] += *refreshed;
          result.changed = true;  // saved, but no step's work: a round after it still decides the fixed point
        }
      }
      for (auto& [name, pass] : steps_) {
        auto step = RunWithinBudget(*pass, name, model, context);
        if (!step.ok()) {
          return absl::Status(step.status().code(), absl::StrCat("step '", name, "': ", step.status().message()));
        }
        changed |= step->changed;
        for (const auto& [what, n] : step->counts) result.counts[absl::StrCat(name, "/", what)] += n;
      }
      result.counts["rounds"] = round + 1;
      result.changed |= changed;
      if (!changed) break;                                                       // early stop: a fixed point
      if (round + 1 == max_rounds_) result.counts["stopped-at-max-rounds"] = 1;  // not a fixed point yet
    }
    return result;
  }

 private:
  const FixedPointPipeline& pipeline_;
  int64_t max_rounds_;
  std::vector<std::pair<std::string, std::unique_ptr<Pass>>> steps_;
};

std::string StepName(std::string_view step) { return std::string(step.substr(0, step.find('('))); }

}  // namespace

std::vector<std::string> FixedPointPipeline::StepNames() const {
  std::vector<std::string> names;
  for (const std::string& s : steps) names.push_back(StepName(s));
  return names;
}

std::string FixedPointPipeline::StepsText() const { return absl::StrJoin(steps, ", "); }

StatusOr<std::unique_ptr<Pass>> MakeFixedPointPass(const FixedPointPipeline& pipeline, const FixedPointRun& run) {
  std::vector<std::string> names = pipeline.StepNames();
  for (const std::string& s : run.skip) {
    if (std::find(names.begin(), names.end(), s) == names.end())
      return absl::InvalidArgumentError(absl::StrCat("skip: '", s, "' is not a step"));
  }
  std::vector<std::pair<std::string, std::unique_ptr<Pass>>> steps;
  for (const std::string& text : pipeline.steps) {
    if (std::find(run.skip.begin(), run.skip.end(), StepName(text)) != run.skip.end()) continue;
    auto items = ParsePipeline(text);
    if (!items.ok())
      return absl::Status(items.status().code(), absl::StrCat("step '", text, "': ", items.status().message()));
    for (const PipelineItem& item : *items) {
      PassOptions options = item.options;
      if (auto it = run.step_options.find(item.info->name); it != run.step_options.end()) {
        std::map<std::string, std::string> given = options.given();
        for (const auto& [key, value] : it->second) given[key] = value;
        options = PassOptions(item.info->options, std::move(given));
      }
      auto pass = CreatePass(*item.info, options);
      if (!pass.ok())
        return absl::Status(pass.status().code(), absl::StrCat("step '", text, "': ", pass.status().message()));
      steps.emplace_back(item.info->name, *std::move(pass));
    }
  }
  return std::unique_ptr<Pass>(std::make_unique<FixedPointPass>(pipeline, run.max_rounds, std::move(steps)));
}

}  // namespace onnxsurgeon
