// target: the `--target NAME` planner as a pass, so pipelines and Python can use it:
// `osg.run(model, "target=rknn2")`, `--pass fix-layernorm,target(name=nncase-k210,input-shapes=x:1x3x32x32)`.
// See passes/targeting/planner.h for what it plans and docs/targets.md for the profiles.
//
// Options:
//   name=               a built-in profile (`onnxsurgeon targets`) or a path to a .toml profile
//   input-shapes=       NAME:DIMS items, ';'-separated, for targets that need static shapes
//   allow-remaining=false  keep the result although blockers remain (else the pass fails)
// The report counts `plan: <step>` for every step run, in order of the step's first run.
#include "absl/strings/str_cat.h"
#include "passes/registry.h"
#include "passes/targeting/planner.h"

namespace onnxsurgeon::passes {
namespace {

class TargetPass : public Pass {
 public:
  TargetPass(target::CompiledProfile profile, target::TargetOptions options)
      : profile_(std::move(profile)), options_(std::move(options)) {}
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassManagerOptions pm;
    pm.context = context;
    OS_ASSIGN_OR_RETURN(target::TargetRun run, target::RunTarget(model, profile_, options_, pm));
    PassResult result;
    for (size_t i = 0; i < run.plan.size(); ++i) result.counts[absl::StrCat("plan ", i + 1, ": ", run.plan[i])] = 1;
    for (const auto& r : run.reports) result.changed |= r.result.changed;
    if (!run.remaining.blockers.empty())
      result.counts["remaining-blockers"] = static_cast<int64_t>(run.remaining.blockers.size());
    return result;
  }

 private:
  target::CompiledProfile profile_;
  target::TargetOptions options_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateTargetPass(const PassOptions& o) {
  const std::string& name = o.String("name");
  if (name.empty()) return absl::InvalidArgumentError("target needs a name (target=rknn2)");
  OS_ASSIGN_OR_RETURN(target::CompiledProfile profile, target::LoadTarget(name));
  target::TargetOptions options;
  options.input_shapes = o.String("input-shapes");
  options.allow_remaining = o.Bool("allow-remaining");
  return std::make_unique<TargetPass>(std::move(profile), std::move(options));
}

}  // namespace onnxsurgeon::passes
