// `check --target`: what in a model a target refuses, node by node, with the profile
// fact behind each finding (and its source), and what `--target` does about it.
//
// The planner (planner.h) is driven by the same findings: every fixable blocker names the
// plan step that removes it (plan_steps.h), and `--target` runs those steps, checks again, and
// fails (writing nothing) while anything still blocks. So `--target` never writes a model
// its own `check --target` rejects.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "passes/targeting/compiled_profile.h"
#include "passes/targeting/plan_steps.h"

namespace onnxsurgeon::target {

struct Finding {
  std::string node;                // node name ("" for a model-level finding)
  std::string op;                  // op type, domain-qualified outside ai.onnx ("" for model-level)
  std::string where;               // "main graph", "subgraph 'then' of node 'x'", "function local::F", "model"
  std::string reason;              // what the target refuses here
  std::string fact;                // the profile fact, e.g. "rknn2: If only with a constant condition"
  std::string source;              // where the fact comes from
  const PlanStep* step = nullptr;  // the plan step that removes it (null: none does)
  std::string fix;                 // what --target does (the step's pipeline text), or why nothing can
  bool fixable() const { return step != nullptr; }
  std::string Describe() const;
};

struct CheckOptions {
  // Graph inputs --input-shapes gives static shapes for (static-shape targets).
  std::set<std::string> inputs_with_shapes;
  // The dim 0 --input-shapes gives each of them (the batch a profile's max_batch judges).
  std::map<std::string, int64_t> input_batch;
  // Facts to allow (their text without the "PROFILE: " prefix, e.g. "lacks Shape"): their
  // findings go to CheckReport::allowed instead of blocking, so no step runs for them
  // (`check --target NAME --probe --allow FACT` proves one fact at a time).
  std::set<std::string> allowed_facts;
};

struct CheckReport {
  std::vector<Finding> blockers;
  std::vector<Finding> warnings;  // not refused, but worth knowing (int64 on int32 hardware)
  std::vector<Finding> allowed;   // blockers of CheckOptions::allowed_facts, not counted
};

// The fact's text without the "PROFILE: " prefix check adds ("lacks Shape").
std::string FactText(const Finding& finding, const Profile& profile);

CheckReport CheckTarget(const Model& model, const CompiledProfile& target, const CheckOptions& options = {});

// The report as `check --target --json` prints it (and `onnxsurgeon.check_target` returns):
// {"model", "target", "accepted", "blockers": [...], "warnings": [...]}, each finding with
// node, op, where, reason, fact, source, fix and fixable. One writer, so both agree.
std::string CheckReportJson(const CheckReport& report, const Profile& profile, const std::string& model_name);

}  // namespace onnxsurgeon::target
