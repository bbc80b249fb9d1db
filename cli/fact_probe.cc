#include "cli/fact_probe.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "core/inspect/json.h"
#include "core/io/model_io.h"
#include "core/verify/backend_check.h"
#include "passes/targeting/planner.h"

namespace onnxsurgeon::cli {
namespace {

struct FactVerdict {
  std::string verdict;  // real | false | unproven
  std::string why;
  size_t places = 0;  // the fact's places in the model the backend got
  std::vector<std::string> plan;
  std::optional<BackendCheckResult> check;
};

// The facts check --target finds in `model` (blocking or allowed), for "did you mean".
std::vector<std::string> FactsFound(const Model& model, const target::CompiledProfile& t,
                                    const target::CheckOptions& options) {
  target::CheckReport report = target::CheckTarget(model, t, options);
  std::set<std::string> facts;
  for (const auto* list : {&report.blockers, &report.allowed})
    for (const target::Finding& f : *list) facts.insert(target::FactText(f, t.profile));
  return {facts.begin(), facts.end()};
}

StatusOr<FactVerdict> Probe(const target::CompiledProfile& t, Model& model, Model& reference,
                            const std::map<std::string, std::vector<int64_t>>& shapes, const std::string& fact) {
  FactVerdict v;
  target::TargetOptions options;
  options.input_shapes = SetInputShapeValue(shapes);
  options.allowed_facts = {fact};
  target::CheckOptions check = target::CheckOptionsFor(options.input_shapes);
  v.verdict = "unproven";
  std::vector<std::string> found = FactsFound(model, t, check);
  if (std::find(found.begin(), found.end(), fact) == found.end()) {
    v.why = absl::StrCat("the fact finds nothing in this model (facts check --target finds: ",
                         found.empty() ? "none" : absl::StrJoin(found, "; "), ")");
    return v;
  }
  auto run = target::RunTarget(model, t, options);
  if (!run.ok()) {
    // What still blocks, by fact: the model the plan left cannot isolate the allowed one.
    check.allowed_facts = options.allowed_facts;
    std::map<std::string, int> blocking;
    for (const target::Finding& f : target::CheckTarget(model, t, check).blockers) ++blocking[f.fact];
    std::vector<std::string> facts;
    for (const auto& [f, n] : blocking) facts.push_back(absl::StrCat(f, " (", n, n == 1 ? " place)" : " places)"));
    v.why = blocking.empty()
                ? OneLine(std::string(run.status().message()))
                : absl::StrCat("other facts still block, so no model isolates this one: ", absl::StrJoin(facts, "; "));
    return v;
  }
  v.plan = run->plan;
  v.places = run->remaining.allowed.size();
  if (v.places == 0) {
    v.why = "after the plan nothing in the model falls under the fact";
    return v;
  }
  BackendCheckOptions backend;
  backend.input_shapes = shapes;
  OS_ASSIGN_OR_RETURN(BackendCheckResult result, RunBackendCheck(t.profile.name, reference, model, backend));
  std::string text = FormatBackendCheck(result);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  v.verdict = result.ok() ? "false" : "real";
  v.why = absl::StrCat("with only it allowed (", v.places, v.places == 1 ? " place" : " places", "): ", text);
  v.check = std::move(result);
  return v;
}

}  // namespace

int ProbeFact(const target::CompiledProfile& t, const std::string& input, const std::string& input_shapes,
              const std::string& fact, bool json) {
  auto model = LoadModel(input);
  if (!model.ok()) return ModelError(model.status());
  auto reference = LoadModel(input);
  if (!reference.ok()) return ModelError(reference.status());
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!input_shapes.empty()) {
    auto specs = ParseInputShapeArgs({input_shapes});
    if (!specs.ok()) return UsageError("check", std::string(specs.status().message()));
    auto resolved = ResolveInputShapes(*specs, **model);
    if (!resolved.ok()) return UsageError("check", std::string(resolved.status().message()));
    shapes = *std::move(resolved);
  }
  if (Status s = FindTargetBackend(t.profile.name); !s.ok()) {
    std::cerr << "onnxsurgeon: error: check --probe: " << OneLine(std::string(s.message())) << "\n";
    return kUsageError;
  }
  auto v = Probe(t, **model, **reference, shapes, fact);
  if (!v.ok()) {
    std::cerr << "onnxsurgeon: error: check --probe --allow: " << OneLine(std::string(v.status().message())) << "\n";
    return kModelError;
  }
  if (json) {
    Json j;
    j["model"] = input;
    j["target"] = t.profile.name;
    j["fact"] = fact;
    j["verdict"] = v->verdict;
    j["why"] = v->why;
    j["places"] = v->places;
    j["plan"] = v->plan;
    if (v->check) {
      j["backend"] = v->check->backend;
      j["refused"] = v->check->refused;
    }
    std::cout << DumpJson(j);
  } else {
    std::cout << input << ": target " << t.profile.name << ", fact '" << fact << "' (probed alone): " << v->verdict
              << ": " << v->why << "\n";
  }
  return v->verdict == "real" ? kOk : kModelError;
}

}  // namespace onnxsurgeon::cli
