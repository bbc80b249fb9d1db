#include "cli/target_search.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "passes/targeting/compiled_profile.h"
#include "passes/targeting/planner.h"

namespace onnxsurgeon::cli {
namespace {

struct Candidate {
  std::string name;
  std::string prefix;  // pipeline text run after the user's passes, before the plan
};

// The fixed order of target_search.h. Opset candidates below the profile's range, or
// equal to an earlier one, are left out.
std::vector<Candidate> Candidates(const target::Profile& p, const Model& model, const std::string& shapes) {
  std::vector<Candidate> out = {{"profile", ""}, {"simplify first", "simplify"}};
  int64_t planned = std::clamp<int64_t>(model.OpsetVersion(""), p.opset_min, p.opset_max);
  if (planned - 1 >= p.opset_min) out.push_back({"one opset lower", absl::StrCat("convert-opset=", planned - 1)});
  if (p.opset_min < planned - 1) out.push_back({"lowest opset", absl::StrCat("convert-opset=", p.opset_min)});
  out.push_back({"decompositions", "lower-contrib-ops,decompose-layernorm,rewrite-gelu"});
  if (!shapes.empty()) out.push_back({"static shapes", absl::StrCat("set-input-shape(shapes=", shapes, "),simplify")});
  return out;
}

std::string Quoted(const std::string& value) {
  if (value.find_first_of(",()=\"' ") == std::string::npos) return value;
  return value.find('"') == std::string::npos ? absl::StrCat("\"", value, "\"") : absl::StrCat("'", value, "'");
}

// One candidate's run: its pipeline text, the model and reports, or why it failed.
struct Attempt {
  std::unique_ptr<Model> model;
  std::string plan;
  std::vector<PassRunReport> reports;
  std::string failure;  // "" when the plan ran
  bool unchanged_prefix = false;
};

Attempt RunCandidate(const SearchRequest& r, const target::CompiledProfile& target, const Candidate& c,
                     const std::string& shapes) {
  Attempt a;
  auto model = LoadModel(r.input);
  if (!model.ok()) {
    a.failure = OneLine(std::string(model.status().message()));
    return a;
  }
  a.model = *std::move(model);
  std::vector<PipelineItem> items = r.user;
  auto prefix = ParsePipeline(c.prefix);
  if (!prefix.ok()) {
    a.failure = OneLine(std::string(prefix.status().message()));
    return a;
  }
  items.insert(items.end(), prefix->begin(), prefix->end());
  PassManagerOptions pm = r.pm;
  pm.context.forbidden = std::make_shared<ForbiddenOps>();  // what a decomposition forbids stays in its candidate
  auto reports = RunPipeline(*a.model, items, pm);
  if (!reports.ok()) {
    a.failure = OneLine(std::string(reports.status().message()));
    return a;
  }
  if (!prefix->empty() && reports->size() == items.size()) {
    a.unchanged_prefix = std::none_of(reports->end() - static_cast<std::ptrdiff_t>(prefix->size()), reports->end(),
                                      [](const PassRunReport& p) { return p.result.changed; });
  }
  a.reports = *std::move(reports);
  target::TargetOptions options;
  options.input_shapes = shapes;
  options.allow_remaining = r.allow_remaining;
  auto run = target::RunTarget(*a.model, target, options, pm);
  if (!run.ok()) {
    a.failure = OneLine(std::string(run.status().message()));
    return a;
  }
  for (auto& rep : run->reports) a.reports.push_back(std::move(rep));
  std::vector<std::string> parts;
  if (!items.empty()) parts.push_back(PipelineText(items));
  for (const std::string& step : run->plan) parts.push_back(step);
  a.plan = absl::StrJoin(parts, ",");
  return a;
}

}  // namespace

std::string PipelineText(const std::vector<PipelineItem>& items) {
  std::vector<std::string> parts;
  for (const PipelineItem& item : items) {
    const auto& given = item.options.given();
    if (given.empty()) {
      parts.push_back(item.info->name);
      continue;
    }
    std::vector<std::string> options;
    for (const auto& [key, value] : given) options.push_back(absl::StrCat(key, "=", Quoted(value)));
    parts.push_back(absl::StrCat(item.info->name, "(", absl::StrJoin(options, ","), ")"));
  }
  return absl::StrJoin(parts, ",");
}

StatusOr<SearchResult> SearchTargetPlan(const SearchRequest& r, const SaveOptions& save, std::ostream& log) {
  const auto start = std::chrono::steady_clock::now();
  OS_ASSIGN_OR_RETURN(target::CompiledProfile target, target::LoadTarget(r.target));
  const target::Profile& profile = target.profile;
  if (!profile.external_data && r.external_data_given && save.external_data == ExternalDataMode::kAll) {
    return absl::InvalidArgumentError(absl::StrCat("target ", profile.name, " needs the weights inline (",
                                                   profile.external_data_source,
                                                   "); --external-data all contradicts it"));
  }
  OS_RETURN_IF_ERROR(FindTargetBackend(profile.name));
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> reference, LoadModel(r.input));
  const std::string shapes = SetInputShapeValue(r.input_shapes);
  if (!shapes.empty()) {
    // Shapes the model contradicts fail every candidate the same way: say so once.
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> shaped, LoadModel(r.input));
    OS_ASSIGN_OR_RETURN(auto set_shapes, ParsePipeline(absl::StrCat("set-input-shape(shapes=", shapes, ")")));
    OS_RETURN_IF_ERROR(RunPipeline(*shaped, set_shapes, PassManagerOptions{}).status());
  }
  SearchResult result;
  std::vector<Candidate> candidates = Candidates(profile, *reference, shapes);
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    auto fail = [&](const std::string& why) {
      result.tried.push_back(absl::StrCat(c.name, ": ", why));
      log << "search " << i + 1 << "/" << candidates.size() << " (" << c.name << "): " << why << "\n";
    };
    double left = r.budget_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (left < 1) {
      fail(absl::StrCat("not tried: the search budget (", r.budget_seconds, " s) is spent"));
      continue;
    }
    Attempt a = RunCandidate(r, target, c, shapes);
    if (!a.failure.empty()) {
      fail(absl::StrCat("the plan failed: ", a.failure));
      continue;
    }
    if (a.unchanged_prefix) {
      fail(absl::StrCat("skipped: ", c.prefix, " changes nothing, so the result is the first candidate's"));
      continue;
    }
    BackendCheckOptions check = r.check;
    check.input_shapes = r.input_shapes;
    left = r.budget_seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    check.timeout_seconds = std::max(1, static_cast<int>(left));
    auto checked = RunBackendCheck(profile.name, *reference, *a.model, check);
    if (!checked.ok()) {
      fail(absl::StrCat("the backend check failed: ", OneLine(std::string(checked.status().message()))));
      continue;
    }
    if (!checked->ok()) {
      std::string text = FormatBackendCheck(*checked);
      while (!text.empty() && text.back() == '\n') text.pop_back();
      fail(OneLine(text));
      continue;
    }
    log << "search " << i + 1 << "/" << candidates.size() << " (" << c.name << "): accepted\n";
    result.found = true;
    result.model = std::move(a.model);
    result.plan = a.plan;
    result.reports = std::move(a.reports);
    result.check = *std::move(checked);
    result.save = save;
    if (!profile.external_data) result.save.external_data = ExternalDataMode::kInline;
    auto* props = result.model->mutable_proto().mutable_metadata_props();
    auto it = std::find_if(props->begin(), props->end(), [](const auto& m) { return m.key() == kTargetPlanKey; });
    auto* meta = it != props->end() ? &*it : props->Add();
    meta->set_key(kTargetPlanKey);
    meta->set_value(result.plan);
    return result;
  }
  return result;
}

}  // namespace onnxsurgeon::cli
