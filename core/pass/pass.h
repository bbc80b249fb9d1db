// Pass: one named transformation of a Model, with documented options.
//
// Passes are registered in one explicit table (passes/registry.cc), not by static
// initializers, so nothing depends on what the linker keeps.
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

struct PassOptionSpec {
  std::string name;
  std::string help;
  std::string default_value;  // as written in a pipeline
};

// Options as parsed from a pipeline, checked against the pass's specs.
class PassOptions {
 public:
  PassOptions() = default;
  explicit PassOptions(std::map<std::string, std::string> values) : values_(std::move(values)) {}
  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  std::string GetString(const std::string& key, const std::string& fallback) const;
  // A ';'-separated list (',' separates passes in the grammar); items trimmed, empty
  // items dropped. `fallback` when the option is absent.
  std::vector<std::string> GetList(const std::string& key, std::vector<std::string> fallback = {}) const;
  StatusOr<int64_t> GetInt(const std::string& key, int64_t fallback) const;
  StatusOr<double> GetDouble(const std::string& key, double fallback) const;
  StatusOr<bool> GetBool(const std::string& key, bool fallback) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

struct PassInfo {
  std::string name;     // kebab-case
  std::string summary;  // one line
  std::vector<PassOptionSpec> options;  // options[0] is the primary (`name=value`) option
  std::function<StatusOr<std::unique_ptr<Pass>>(const PassOptions&)> create;
};

// The table of all passes (passes/registry.cc).
const std::vector<PassInfo>& AllPasses();
// A pass of the table, else one registered at run time; null when neither has it.
const PassInfo* FindPass(std::string_view name);

// Given a pass made at run time (a rule set defined in Python). Execute makes pipelines
// able to name it; a later registration of the same name replaces it. Result an error if
// the name is a built-in pass or not kebab-case.
Status RegisterPass(PassInfo info);
// The passes registered at run time, in registration order.
std::vector<const PassInfo*> RegisteredPasses();

}  // namespace onnxsurgeon
