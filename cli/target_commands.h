// The CLI's target commands, kept out of main.cc so the argument parser can change
// without touching them:
//   onnxsurgeon targets [--markdown | --sources NAME]  list the profiles, their facts and sources
//   onnxsurgeon check --target NAME [--json] [--input-shapes S] IN
//   onnxsurgeon --target NAME [--input-shapes S] IN -o OUT   (RunTargetStep)
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/verify/backend_check.h"
#include "passes/targeting/check.h"

namespace onnxsurgeon::cli {

int CmdTargets(const std::vector<std::string>& args);

// Findings as `check --target` prints them: grouped by profile fact (and what --target does
// about it), each group one header with its count, what --target does and the fact's
// source, then one line per place, each line starting with `indent`.
std::string GroupedFindings(const std::vector<target::Finding>& findings, const std::string& indent);

// OK when `target` names a built-in profile or a readable, valid .toml profile; else the
// error (the CLI reports it as a usage error, before reading the model).
Status CheckTargetName(const std::string& target);

// `check --target`: exit 0 when nothing blocks, 1 when something does (or the model is
// bad), 2 on a usage error.
// With `probe`, the target's real backend is asked instead of the profile (RunBackendCheck:
// the model in the backend against the model in onnxruntime): 0 when it runs the model
// and matches, 1 when it refuses or differs, 2 when it is not installed.
int CmdCheckTarget(const std::string& target, const std::string& input, const std::string& input_shapes, bool json,
                   bool probe = false);

// --backend-check: target's backend on `model` against onnxruntime on the model at
// `reference_path` (core/verify/backend_check.h).
StatusOr<BackendCheckResult> BackendCheckTarget(const std::string& reference_path, Model& model,
                                                const std::string& target, const BackendCheckOptions& options);

// What target `name` still refuses in `model`, one line per blocker, for the HTML report.
// Result true when nothing blocks.
bool TargetVerdict(const Model& model, const std::string& name, const std::string& input_shapes, std::string& text);

// The markdown table of every built-in profile and each one's facts with their sources
// (docs/profiles.md, written by scripts/update-docs.py).
std::string TargetsMarkdown();

// Runs the target's plan after the user's passes (same forbidden ops: pm.context). Prints
// the plan on `log`. Adjusts `save` (weights inline for targets that ignore external
// data); a user's --external-data that contradicts the profile is an error.
Status RunTargetStep(Model& model, const std::string& target, const std::string& input_shapes, bool allow_remaining,
                     const PassManagerOptions& pm, bool external_data_given, SaveOptions& save,
                     std::vector<PassRunReport>& reports, std::ostream& log);

}  // namespace onnxsurgeon::cli
