// Conditions: the `when` of a profile's [[missing]] fact ("Resize when attribute:mode=cubic"),
// as a registry of kinds. Each kind is one file in this folder defining one ConditionKind:
// its keyword, argument grammar, a one-line doc, the plan step that removes what it matches
// by default, and a parser that compiles the `when` text once, at profile load, into a const
// Condition. The checker then asks the compiled condition about each node; nothing re-reads
// the text. conditions.def lists the kinds (the registry); `onnxsurgeon targets --conditions`
// and docs/targets.md's condition list are printed from it.
//
// Adding a kind: write passes/targeting/conditions/<keyword>.cc defining `const ConditionKind
// k<Name>`, add CONDITION(k<Name>) to conditions.def and the file to passes/CMakeLists.txt,
// and give it a test in tests/cpp/target_conditions_test.cc.
#pragma once

#include <memory>
#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "core/analysis/type_facts.h"
#include "core/ir/node.h"
#include "core/ir/status.h"

namespace onnxsurgeon::target {

// What conditions read besides the node, built once per check and handed in by reference.
struct ConditionAnalyses {
  const TypeFacts& types;  // element types and ranks, inferred where unannotated
};

// What a condition's remedy depends on besides the node.
struct RemedyContext {
  int64_t opset_min, opset_max;  // the profile's ai.onnx opsets
  bool every_op;                 // the fact names every op of its domain (ops = ["*"])
  const TypeFacts& types;        // what the remedy's dry run reads of types (the check's)
  // The graph inputs are static or given static shapes: dims that are not static now may
  // be once the plan sets and re-infers shapes, before the remedy runs.
  bool static_inputs;
};

// A compiled `when`: const and stateless, shared by every copy of its profile.
class Condition {
 public:
  virtual ~Condition() = default;
  // Whether the condition holds for `n`; when it does, `detail` says how (for the report).
  virtual bool Holds(const Node& n, const ConditionAnalyses& analyses, std::string* detail) const = 0;
  // Whether the kind's default remedy removes what it matched on `n`: the remedy pass's own
  // decision, dry-run on `n` (loop-carry-outer-values works on Loop only).
  virtual bool RemedyApplies(const Node& n, const RemedyContext& context) const { return true; }
  // Why nothing removes what it matched on `n`, when no plan step does ("" for the generic
  // reason).
  virtual std::string WhyNoRemedy(const Node& n, const RemedyContext& context) const { return ""; }
};

using ConditionParser = StatusOr<std::unique_ptr<const Condition>> (*)(absl::string_view arguments);

// One kind of condition: what the registry holds per kind.
struct ConditionKind {
  // The text a `when` starts with. A keyword ending in ':', '>' or '<' takes arguments
  // after it ("attribute:", "rank>"); any other keyword is the whole `when`.
  absl::string_view keyword;
  absl::string_view grammar;  // the forms it accepts, e.g. "attribute:NAME, attribute:NAME=V"
  absl::string_view doc;      // one line: what it matches
  // The plan step (passes.def's PLAN_STEP) that removes what it matches, when the fact
  // names no `remedy` and no step removes the node's op ("": none).
  absl::string_view remedy;
  ConditionParser parse;

  bool TakesArguments() const;
};

// Every kind, in the order of conditions.def (the order of the docs).
const std::vector<const ConditionKind*>& ConditionKinds();

// Given a `when` text. Result its kind and compiled condition (a null condition for ""),
// or an error listing the grammar of every kind.
struct CompiledWhen {
  const ConditionKind* kind = nullptr;
  std::shared_ptr<const Condition> condition;
};
StatusOr<CompiledWhen> CompileWhen(absl::string_view when);

// The condition list as `onnxsurgeon targets --conditions` prints it (markdown: a list for
// docs/targets.md).
std::string ConditionsText(bool markdown);

}  // namespace onnxsurgeon::target
