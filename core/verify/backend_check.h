// `--target NAME --backend-check [N]` and `check --target NAME --probe`: the target's real
// backend runs a model, and its outputs are compared, element by element, with what
// onnxruntime computes for a reference model on the same inputs.
//
// The backend runs through its runner (the file protocol of tests/backends/runners/
// _protocol.py; the runners are embedded in the binary, so an installed wheel has them
// too; $ONNXSURGEON_BACKEND_RUNNERS names another folder of run-NAME.py files) in a Python
// that has the backend: the backend's venv from `make backends-setup`
// ($ONNXSURGEON_BACKENDS_DIR, $BACKENDS_DIR or the clone's .backends, NAME/ready), else
// the first of the interpreters --check tries whose `run-NAME.py --probe` succeeds (for a
// pinned onnxruntime, with that version). onnxruntime itself runs the reference in the
// Python --check uses. Tolerances are --check's (python/onnxsurgeon/tolerance.py), float16
// ones for rknn2, whose simulator computes in float16.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "core/verify/compare.h"

namespace onnxsurgeon {

// The backend a target profile is checked on ("" when none runs here): the runner name
// and how to install it.
struct BackendOfTarget {
  std::string runner;                 // run-RUNNER.py: "ort", "openvino", "nncase-k210", ...
  std::string venv;                   // the make backends-setup venv's name ("" for the --check Python's onnxruntime)
  std::vector<std::string> versions;  // version prefixes a candidate's probe must print (pinned onnxruntime)
};
// Given a profile name. Result its backend, or nullopt when no runner exists for it.
std::optional<BackendOfTarget> BackendForTarget(const std::string& profile_name);
// The profiles BackendForTarget knows, for messages.
std::vector<std::string> BackendCheckTargets();

struct BackendCheckOptions {
  int runs = 1;       // random input sets
  uint64_t seed = 0;  // of the first; run i uses seed + i
  std::map<std::string, std::vector<int64_t>> input_shapes;
  int timeout_seconds = 900;  // per backend run; a run that takes longer counts as refused
};

struct BackendCheckResult {
  std::string backend;  // "nncase-k210 1.9.0..." as the runner reports it
  std::string python;   // the backend's interpreter
  std::string runtime;  // the reference's: "onnxruntime 1.x"
  int runs_done = 0;
  std::string refused;                 // the backend's refusal ("" when it ran)
  int failed_run = -1;                 // the input set that failed (-1: none)
  std::vector<TensorComparison> rows;  // the outputs of the failing run (else of the last)
  bool ok() const { return refused.empty() && failed_run < 0; }
};

// Given the profile name, the reference model (run in onnxruntime) and the model for the
// backend (same input and output names and order). Execute runs both on `runs` random
// input sets (the backend model's input shapes, --input-shapes for dims it leaves open)
// and compares every output. Result the comparison; FailedPreconditionError when the
// backend is not installed (the message says how to install it), NotFoundError when no
// backend runs the profile, another error when onnxruntime cannot run the reference.
StatusOr<BackendCheckResult> RunBackendCheck(const std::string& profile_name, Model& reference, Model& model,
                                             const BackendCheckOptions& options);

// Given a profile name. Result OK when its backend is installed here; the errors
// RunBackendCheck would return otherwise (FailedPrecondition: not installed, with how to
// install it; NotFound: no backend runs the profile). `--search` asks this before it plans.
Status FindTargetBackend(const std::string& profile_name);

// The text report: the first failing output and its error, or the outputs' worst errors.
std::string FormatBackendCheck(const BackendCheckResult& result);

// The runner script for `runner` ("ort", "openvino", ...) and its _protocol.py in `dir`
// (written from the embedded copies), or from $ONNXSURGEON_BACKEND_RUNNERS when set.
// Result the runner's path; an error when it is unknown or cannot be written.
StatusOr<std::string> BackendRunnerScript(const std::string& runner, const std::string& dir);

}  // namespace onnxsurgeon
