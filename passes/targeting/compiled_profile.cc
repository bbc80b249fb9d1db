#include "passes/targeting/compiled_profile.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace onnxsurgeon::target {
namespace {

Status EntryError(const Profile& p, size_t i, const char* key, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(p.origin, ": missing[", i, "].", key, ": ", what));
}

// [quantization] qdq = "refuse" is a fact like a [[missing]] one: the target lacks
// QuantizeLinear and DequantizeLinear, and the plan step that removes them decides per node
// (fold-qdq folds those on constants).
void AddQdqFacts(Profile& profile) {
  if (profile.qdq != "refuse") return;
  for (const char* domain : {"", "com.microsoft"})
    profile.missing.push_back(MissingOp{{"QuantizeLinear", "DequantizeLinear"}, domain, "", profile.qdq_source, ""});
}

}  // namespace

StatusOr<CompiledProfile> CompileProfile(Profile profile) {
  AddQdqFacts(profile);
  CompiledProfile out;
  for (size_t i = 0; i < profile.missing.size(); ++i) {
    const MissingOp& m = profile.missing[i];
    CompiledFact fact;
    auto when = CompileWhen(m.when);
    if (!when.ok()) return EntryError(profile, i, "when", when.status().message());
    fact.kind = when->kind;
    fact.condition = std::move(when->condition);
    fact.every_op = m.ops.size() == 1 && m.ops[0] == "*";
    if (m.remedy == "none") {
      fact.remedy_none = true;
    } else if (!m.remedy.empty()) {
      fact.remedy = FindPlanStep(m.remedy);
      if (!fact.remedy) {
        std::vector<absl::string_view> names;
        for (const PlanStep& s : PlanSteps()) names.push_back(s.name);
        return EntryError(
            profile, i, "remedy",
            absl::StrCat("'", m.remedy, "' is no plan step (want none or one of ", absl::StrJoin(names, ", "), ")"));
      }
    }
    out.facts.push_back(std::move(fact));
  }
  out.profile = std::move(profile);
  return out;
}

StatusOr<CompiledProfile> ParseTarget(const std::string& toml_text, const std::string& origin) {
  OS_ASSIGN_OR_RETURN(Profile p, ParseProfile(toml_text, origin));
  return CompileProfile(std::move(p));
}

StatusOr<CompiledProfile> LoadTarget(const std::string& name_or_path) {
  OS_ASSIGN_OR_RETURN(Profile p, LoadProfile(name_or_path));
  return CompileProfile(std::move(p));
}

}  // namespace onnxsurgeon::target
