// The `--target` planner's steps, from passes/passes.def's PLAN_STEP rows: in the order the
// planner runs them, each with the pass it runs, whether it may run again in a later round,
// the ops it removes and how its pipeline text is written for a profile and model.
#pragma once

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "core/analysis/type_facts.h"
#include "core/ir/model.h"
#include "core/ir/node.h"

namespace onnxsurgeon::target {

struct CompiledProfile;
struct ConditionKind;

enum class Repeat { kOnce, kRepeatable };

// A finding the planner asks steps about: the node, the fact's condition kind (null for a
// fact without `when`, or a finding of no fact), the profile, and whether every graph input
// has a static shape (declared, or given with --input-shapes).
struct RemovalQuery {
  const Node& node;
  const ConditionKind* kind;
  const CompiledProfile& target;
  bool static_inputs;
  const TypeFacts* types = nullptr;  // the checker's (a step that reads types builds its own without)
};

// Whether running a step removes a finding: yes, no, or yes once what `needs` says is done.
struct Removal {
  enum Answer { kNo, kYes, kNeeds } answer = kNo;
  std::string needs;
};

// What a pipeline text is written from.
struct StepTextContext {
  const CompiledProfile& target;
  const Model& model;
  const std::string& input_shapes;  // set-input-shape's shapes= text ("" in a check report)
};

struct PlanStep {
  absl::string_view name;
  absl::string_view pass;
  Repeat repeat;
  absl::string_view removes_ops;  // ';'-separated; "*": any op, removes_when decides
  Removal (*removes_when)(const RemovalQuery&);
  std::string (*text)(const StepTextContext&);
  int order;  // its position in the table: the planner runs steps in this order

  // Whether this step removes `q`'s finding, by the node's op (removes_ops, removes_when).
  Removal RemovesNode(const RemovalQuery& q) const;
  // The pipeline text that runs it ("convert-opset=19", "fix-layernorm(to=decomposed)").
  std::string PipelineText(const StepTextContext& context) const;
};

// Whether `node` is an onnxruntime contrib op lower-contrib-ops lowers (com.microsoft, or
// SimplifiedLayerNormalization / SkipSimplifiedLayerNormalization in the default domain;
// not onnxruntime's LayerNormalization-1, which the LayerNorm steps handle).
bool IsLowerableContribOp(const Node& node);
// Whether the target runs `node`, an onnxruntime contrib op (com.microsoft or the default
// domain's SimplifiedLayerNormalization...): its profile's contrib_ops list names it, or
// com.microsoft is a known domain and no [[missing]] fact names the op (with `analyses`, a
// fact with a `when` counts where its condition holds on the node; without, it does not).
struct ConditionAnalyses;
bool RunsContribOp(const CompiledProfile& target, const Node& node, const ConditionAnalyses* analyses = nullptr);
// Whether `node` is an onnxruntime contrib op (any, lowered or not).
bool IsOrtContribOp(const Node& node);

// Every step, in the planner's order.
const std::vector<PlanStep>& PlanSteps();
// The step called `name`, or null.
const PlanStep* FindPlanStep(absl::string_view name);
// The step called `name`, which must exist (the names the checker itself uses).
const PlanStep& PlanStepNamed(absl::string_view name);

}  // namespace onnxsurgeon::target
