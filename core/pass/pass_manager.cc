#include "core/pass/pass_manager.h"

#include <chrono>
#include <optional>

#include "core/inspect/declared_shapes.h"
#include "core/interop/onnx_interop.h"
#include "core/io/exporter.h"
#include "core/ir/domains.h"

namespace onnxsurgeon {

std::map<std::string, int64_t> OpHistogram(const Model& model) {
  std::map<std::string, int64_t> h;
  for (Node* n : model.graph().AllNodesRecursive()) {
    ++h[QualifiedOpName(n->domain(), n->op_type())];
  }
  return h;
}

namespace {

// The input passed ValidateStructure (RunPipeline refuses it otherwise), so any structural
// defect of the output is the pipeline's.
// A failed full check may be a declared shape the pipeline's rewrites made onnx's checker
// able to refute (a folded Reshape shape proves a stale declared output rank wrong). Such a
// declaration is repaired, as fix-declared-shapes does, and reported as that pass.
Status ValidateOutput(Model& model, const PassManagerOptions& options, const std::optional<Status>& input_full,
                      const Status& input_across_scopes, std::vector<PassRunReport>& reports) {
  if (options.validate == OutputValidation::kNone) return absl::OkStatus();
  if (Status s = ValidateStructure(model); !s.ok())
    return Status(s.code(), absl::StrCat("the pipeline made an invalid model: ", s.message()));
  if (options.validate != OutputValidation::kFull) return absl::OkStatus();
  Status full = CheckModelWithOnnx(model);
  if (!full.ok()) {
    Status input = input_full ? *input_full : options.check_input();
    if (!input.ok()) return absl::OkStatus();  // the input failed the checker already
    PassRunReport repair;
    repair.name = "fix-declared-shapes";
    repair.histogram_before = repair.histogram_after = OpHistogram(model);
    repair.quantization_before = repair.quantization_after = CountQuantization(model);
    for (const DeclaredShapeConflict& c : RepairDeclaredShapes(model))
      repair.result.Count(c.graph_output ? "graph-output-shapes-repaired" : "value-info-shapes-repaired");
    if (repair.result.changed) {
      full = CheckModelWithOnnx(model);
      if (full.ok()) reports.push_back(std::move(repair));
    }
    if (!full.ok())
      return Status(full.code(), absl::StrCat("the pipeline made a model onnx's checker refuses (the input passes): ",
                                              full.message()));
  }
  // If/Loop bodies: shapes computed in one place and read in another, which the checker
  // does not propagate (a branch's folded shape taken from its sibling passed it).
  if (!input_across_scopes.ok()) return absl::OkStatus();
  Status across = CheckShapesAcrossScopes(model);
  if (across.ok()) return across;
  return Status(across.code(), absl::StrCat("the pipeline made a model whose shapes contradict (the input's do not): ",
                                            across.message()));
}

}  // namespace

StatusOr<std::vector<PassRunReport>> RunPipeline(Model& model, const std::vector<PipelineItem>& pipeline,
                                                 const PassManagerOptions& options) {
  std::vector<PassRunReport> reports;
  // Passes read nodes by position and type, and trust names to be defined once: a model
  // that breaks what ValidateStructure checks is refused before any pass runs.
  if (!pipeline.empty()) {
    if (Status s = ValidateStructure(model); !s.ok())
      return Status(s.code(), absl::StrCat("cannot run passes on this model: ", s.message()));
  }
  if (pipeline.empty()) return reports;  // the output is the input: nothing to validate
  std::optional<Status> input_full;      // unset: ask options.check_input when needed
  if (options.validate == OutputValidation::kFull && !options.check_input) input_full = CheckModelWithOnnx(model);
  // Models with subgraphs only: the input's verdict, for the output's (ValidateOutput).
  const Status input_across_scopes =
      options.validate == OutputValidation::kFull ? CheckShapesAcrossScopes(model) : absl::OkStatus();
  PassContext context = options.context;
  if (!context.forbidden) context.forbidden = std::make_shared<ForbiddenOps>();
  for (const PipelineItem& item : pipeline) {
    auto pass = CreatePass(*item.info, item.options);
    if (!pass.ok()) {
      return Status(pass.status().code(), absl::StrCat("pass '", item.info->name, "': ", pass.status().message()));
    }
    PassRunReport report;
    report.name = item.info->name;
    report.histogram_before = OpHistogram(model);
    report.quantization_before = CountQuantization(model);
    if (options.on_pass_begin) options.on_pass_begin(item);
    auto start = std::chrono::steady_clock::now();
    auto result = RunWithinBudget(**pass, item.info->name, model, context);
    report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) {
      return Status(result.status().code(), absl::StrCat("pass '", item.info->name, "': ", result.status().message()));
    }
    report.result = *std::move(result);
    report.histogram_after = OpHistogram(model);
    report.quantization_after = CountQuantization(model);
    // A pass must not bring back what an earlier pass removed on purpose (ForbiddenOps).
    for (const auto& [op, by] : context.forbidden->ops()) {
      if (by == item.info->name) continue;
      auto count = [&](const std::map<std::string, int64_t>& h) {
        auto it = h.find(op);
        return it == h.end() ? int64_t{0} : it->second;
      };
      if (count(report.histogram_after) > count(report.histogram_before)) {
        return absl::FailedPreconditionError(absl::StrCat("pass '", item.info->name, "' reintroduced ", op, ", which '",
                                                          by, "' removed earlier in this pipeline"));
      }
    }
    if (options.verify_each) {
      Status s = CheckModel(model, /*full_check=*/true);
      if (!s.ok()) {
        return Status(s.code(), absl::StrCat("after pass '", item.info->name, "' the model is invalid: ", s.message()));
      }
    }
    if (options.print && options.print_after == item.info->name) options.print(PrintModelText(model));
    if (options.on_pass_end) options.on_pass_end(report);
    reports.push_back(std::move(report));
  }
  if (Status s = ValidateOutput(model, options, input_full, input_across_scopes, reports); !s.ok()) return s;
  return reports;
}

}  // namespace onnxsurgeon
