// A target profile as the checker and planner use it: the profile's data (core/profile/
// profile.h) with every [[missing]] fact's `when` compiled once, at load, by the condition
// registry (conditions/condition.h), and its `remedy` resolved to a plan step. A `when` or
// `remedy` the registry does not know is a load-time error naming the file and the entry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/profile/profile.h"
#include "passes/targeting/conditions/condition.h"
#include "passes/targeting/plan_steps.h"

namespace onnxsurgeon::target {

// One [[missing]] fact, compiled.
struct CompiledFact {
  const ConditionKind* kind = nullptr;         // null: no `when`
  std::shared_ptr<const Condition> condition;  // null: no `when` (always holds)
  const PlanStep* remedy = nullptr;            // the fact's own `remedy`, if it names a step
  bool remedy_none = false;                    // remedy = "none": nothing removes it
  bool every_op = false;                       // ops = ["*"]
};

struct CompiledProfile {
  Profile profile;
  std::vector<CompiledFact> facts;  // facts[i] is profile.missing[i]
};

// Given a parsed profile. Result it compiled, or an error naming its origin and entry
// ("x.toml: missing[2].when: ...").
StatusOr<CompiledProfile> CompileProfile(Profile profile);
// ParseProfile (core/profile/profile.h), then CompileProfile.
StatusOr<CompiledProfile> ParseTarget(const std::string& toml_text, const std::string& origin);
// LoadProfile (a built-in name or a .toml path), then CompileProfile.
StatusOr<CompiledProfile> LoadTarget(const std::string& name_or_path);

}  // namespace onnxsurgeon::target
