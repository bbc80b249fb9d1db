// Pass: one named transformation of a Model, with documented options.
//
// Passes are declared in one table (passes/passes.def: name, factory, summary, typed
// options), not by static initializers, so nothing depends on what the linker keeps.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/pass/options.h"
#include "core/rewrite/budget.h"

namespace onnxsurgeon {

// What a pass did: counts per rule (or per kind of change) and whether anything changed.
struct PassResult {
  bool changed = false;
  std::map<std::string, int64_t> counts;
  void Count(const std::string& what, int64_t n = 1) {
    if (n == 0) return;
    counts[what] += n;
    changed = true;
  }
};

// Ops a pipeline removed on purpose. A decompose-* or rewrite-* pass adds the op it
// lowers (decompose-layernorm: LayerNormalization, rewrite-gelu: Gelu, rewrite-erf: Erf);
// from then on, fusions in the same pipeline (fix-layernorm, fuse-gelu, simplify's
// fusions) leave that op alone, and the pass manager stops with an error naming both
// passes if a later pass still brings the op back. So `decompose-layernorm,simplify`
// cannot end with a LayerNormalization, whatever the opset.
class ForbiddenOps {
 public:
  // Given an ai.onnx op type and the pass that removed it.
  void Forbid(const std::string& op_type, const std::string& by_pass) { by_.emplace(op_type, by_pass); }
  bool IsForbidden(const std::string& op_type) const { return by_.count(op_type) > 0; }
  // The pass that forbade `op_type` ("" when it is not forbidden).
  std::string ForbiddenBy(const std::string& op_type) const {
    auto it = by_.find(op_type);
    return it == by_.end() ? std::string() : it->second;
  }
  const std::map<std::string, std::string>& ops() const { return by_; }

 private:
  std::map<std::string, std::string> by_;  // op type -> the first pass that removed it
};

// What the pass manager hands every pass.
struct PassContext {
  // --debug-patterns: pattern passes report every rule miss (rule, node, reason) here.
  std::function<void(const std::string&)> debug_patterns;
  // Progress: passes that walk nodes (the greedy driver) add each node they visit here,
  // for the CLI's progress line. Null when nobody is watching.
  std::atomic<int64_t>* nodes_visited = nullptr;
  // The pipeline's forbidden ops (set by RunPipeline; null when a pass runs on its own).
  std::shared_ptr<ForbiddenOps> forbidden;
  // bisect: a bound on rewrite steps shared by every pass of the pipeline (the greedy
  // driver, fold-constants); null: unbounded.
  RewriteBudget* budget = nullptr;

  void Forbid(const std::string& op_type, const std::string& by_pass) const {
    if (forbidden) forbidden->Forbid(op_type, by_pass);
  }
  bool IsForbidden(const std::string& op_type) const { return forbidden && forbidden->IsForbidden(op_type); }
  std::string ForbiddenBy(const std::string& op_type) const {
    return forbidden ? forbidden->ForbiddenBy(op_type) : std::string();
  }
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual StatusOr<PassResult> Run(Model& model, const PassContext& context) = 0;
};

// Given a pass, its name and a context. Execute runs it, unless the context's budget is
// spent (then nothing runs). A pass that changed the model without spending from the
// budget itself (one without rules or step counting: cse, dce, ...) spends one step, named
// after it, for all it did. Result the pass's result (empty when skipped).
StatusOr<PassResult> RunWithinBudget(Pass& pass, const std::string& name, Model& model, const PassContext& context);

struct FixedPointPipeline;

// A node a run of a pass cannot handle, and why (a dry run's answer).
struct UnconvertibleNode {
  std::string node, op, where, why;
};

// A pass as the pass table (passes/passes.def) declares it.
struct PassInfo {
  std::string name;                     // kebab-case
  std::string summary;                  // one line
  std::vector<PassOptionSpec> options;  // options[0] is the primary (`name=value`) option
  // Makes the pass from options CheckPassOptions accepted (defaults filled in by the getters).
  std::function<StatusOr<std::unique_ptr<Pass>>(const PassOptions&)> create;
  // For a pass that is a declared pipeline of other passes (simplify): its steps, which
  // the listing and the docs print. Null otherwise.
  const FixedPointPipeline* pipeline = nullptr;
  // For a pass that can say without running it which nodes a run with these options would
  // fail on (convert-opset: the nodes with no form at the opset; check --target asks it).
  // Null otherwise: every node is taken to be handled.
  std::function<std::vector<UnconvertibleNode>(const Model&, const PassOptions&)> dry_run;
};

// Given a pass and options for it. Execute checks every key is declared and every value
// fits its type. Result OK, or an error naming the option (with a "did you mean").
Status CheckPassOptions(const PassInfo& info, const PassOptions& options);
// CheckPassOptions, then info.create.
StatusOr<std::unique_ptr<Pass>> CreatePass(const PassInfo& info, const PassOptions& options);

// The table of built-in passes, in the order of passes/passes.def. Core does not link the
// passes library: the program installs the table once at start (passes/registry.h's
// InstallBuiltinPasses()); empty until then.
const std::vector<PassInfo>& AllPasses();
// Given the built-in table (it must outlive every use). Execute makes AllPasses() return it.
void SetBuiltinPasses(const std::vector<PassInfo>& table);
// A pass of the table, else one registered at run time; null when neither has it.
const PassInfo* FindPass(std::string_view name);

// Given a pass made at run time (a rule set defined in Python). Execute makes pipelines
// able to name it; a later registration of the same name replaces it. Result an error if
// the name is a built-in pass or not kebab-case.
Status RegisterPass(PassInfo info);
// The passes registered at run time, in registration order.
std::vector<const PassInfo*> RegisteredPasses();

}  // namespace onnxsurgeon
