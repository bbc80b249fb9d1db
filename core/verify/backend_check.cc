#include "core/verify/backend_check.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/io/model_io.h"
#include "core/util/subprocess.h"
#include "core/verify/backend_runners.h"
#include "core/verify/compare_internal.h"
#include "core/verify/python_helper.h"
#include "core/verify/segments.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;
using namespace compare_internal;

namespace {

struct KnownBackend {
  const char* profile;
  BackendOfTarget backend;
};

// The profiles a backend runs here (tests/backends/backends.py: the same venvs). ort-1.16
// (whose facts 1.15 does not share: it runs MatMulNBits) needs an ort-1.16 venv; "ort" runs
// on the --check Python's onnxruntime.
const std::vector<KnownBackend>& Known() {
  static const std::vector<KnownBackend> known = {
      {"ort", {"ort", "", {}}},
      {"ort-1.10", {"ort", "ort-1.10", {"1.10."}}},
      {"ort-1.14", {"ort", "ort-1.14", {"1.14."}}},
      {"ort-1.15", {"ort", "ort-1.15", {"1.15."}}},
      {"ort-1.16", {"ort", "ort-1.16", {"1.16."}}},
      {"openvino", {"openvino", "openvino", {}}},
      {"rknn2", {"rknn2", "rknn2", {}}},
      {"nncase-k210", {"nncase-k210", "nncase-k210", {}}},
      {"tflite", {"tflite", "tflite", {}}},
      {"ncnn", {"ncnn", "ncnn", {}}},
  };
  return known;
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

// The Python that runs the backend: its venv, else a --check candidate whose probe works.
StatusOr<std::string> FindBackendPython(const std::string& profile, const BackendOfTarget& b, const std::string& runner,
                                        const TempDir& dir) {
  std::vector<std::string> tried;
  if (!b.venv.empty()) {
    bool ready = false;
    std::string python = BackendPython(b.venv, &ready);
    if (!python.empty() && ready) return python;
    tried.push_back(absl::StrCat("no ", b.venv, " venv from make backends-setup"));
  }
  for (const std::string& python : PythonCandidates()) {
    const std::string out = dir / "probe.txt", err = dir / "probe.err";
    int rc = RunProgram({python, runner, "--probe"}, "", out, err);
    if (rc != 0) continue;
    std::string version = ReadWholeFile(out);
    while (!version.empty() && (version.back() == '\n' || version.back() == '\r')) version.pop_back();
    if (b.versions.empty()) return python;
    for (const std::string& prefix : b.versions)
      if (version.rfind(prefix, 0) == 0) return python;
    tried.push_back(absl::StrCat(python, " has ", version));
  }
  std::string how = b.venv.empty()
                        ? "`pip install onnxruntime` in the Python --check uses (or set ONNXSURGEON_PYTHON)"
                        : absl::StrCat("`make backends-setup BACKENDS=", b.venv, "` in a clone of onnxsurgeon (or set ",
                                       "ONNXSURGEON_BACKENDS_DIR to the folder holding ", b.venv,
                                       "/venv), or install it into ", "the Python --check uses");
  return absl::FailedPreconditionError(absl::StrCat("no ", profile, " backend installed: ", how,
                                                    tried.empty() ? "" : " (", absl::StrJoin(tried, "; "),
                                                    tried.empty() ? "" : ")"));
}

}  // namespace

std::optional<BackendOfTarget> BackendForTarget(const std::string& profile_name) {
  for (const KnownBackend& k : Known())
    if (profile_name == k.profile) return k.backend;
  return std::nullopt;
}

std::vector<std::string> BackendCheckTargets() {
  std::vector<std::string> names;
  for (const KnownBackend& k : Known()) names.push_back(k.profile);
  return names;
}

StatusOr<std::string> BackendRunnerScript(const std::string& runner, const std::string& dir) {
  if (const char* d = getenv("ONNXSURGEON_BACKEND_RUNNERS"); d && *d) {
    fs::path path = fs::path(d) / absl::StrCat("run-", runner, ".py");
    std::error_code ec;
    if (!fs::is_regular_file(path, ec))
      return absl::NotFoundError(absl::StrCat("no ", path.string(), " (ONNXSURGEON_BACKEND_RUNNERS)"));
    return path.string();
  }
  const char* text = nullptr;
  for (const auto& [name, script] : kBackendRunners)
    if (runner == name) text = script;
  if (!text) return absl::NotFoundError(absl::StrCat("no backend runner named '", runner, "'"));
  const std::string path = absl::StrCat(dir, "/run-", runner, ".py");
  if (!WriteText(absl::StrCat(dir, "/_protocol.py"), kBackendRunnerProtocol) || !WriteText(path, text))
    return absl::InternalError(absl::StrCat("cannot write the backend runner into ", dir));
  return path;
}

Status FindTargetBackend(const std::string& profile_name) {
  std::optional<BackendOfTarget> backend = BackendForTarget(profile_name);
  if (!backend) {
    return absl::NotFoundError(absl::StrCat("no real backend runs target ", profile_name,
                                            " here (backends: ", absl::StrJoin(BackendCheckTargets(), ", "), ")"));
  }
  TempDir dir("onnxsurgeon-backend-find");
  if (dir.path().empty()) return absl::InternalError("cannot create a temporary folder");
  OS_ASSIGN_OR_RETURN(std::string runner, BackendRunnerScript(backend->runner, dir.path()));
  return FindBackendPython(profile_name, *backend, runner, dir).status();
}

StatusOr<BackendCheckResult> RunBackendCheck(const std::string& profile_name, Model& reference, Model& model,
                                             const BackendCheckOptions& options) {
  std::optional<BackendOfTarget> backend = BackendForTarget(profile_name);
  if (!backend) {
    return absl::NotFoundError(absl::StrCat("no real backend runs target ", profile_name,
                                            " here (backends: ", absl::StrJoin(BackendCheckTargets(), ", "), ")"));
  }
  TempDir dir("onnxsurgeon-backend-check");
  if (dir.path().empty()) return absl::InternalError("--backend-check: cannot create a temporary folder");
  const std::string runners = dir / "runners";
  fs::create_directories(runners);
  OS_ASSIGN_OR_RETURN(std::string runner, BackendRunnerScript(backend->runner, runners));
  OS_ASSIGN_OR_RETURN(std::string python, FindBackendPython(profile_name, *backend, runner, dir));

  BackendCheckResult result;
  result.python = python;
  // The model as the backend reads it: one file, weights inline (nncase reads the bytes).
  const std::string model_path = dir / "model.onnx";
  {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> copy, CopySharingWeights(model));
    SaveOptions save;
    save.external_data = ExternalDataMode::kInline;
    OS_RETURN_IF_ERROR(SaveModel(*copy, model_path, save));
  }
  std::vector<std::string> model_inputs, outputs;
  for (Value* v : model.graph().inputs())
    if (!v->IsInitializer()) model_inputs.push_back(v->name());
  for (Value* v : reference.graph().outputs()) outputs.push_back(v->name());
  if (static_cast<size_t>(model.graph().outputs().size()) != outputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model has ", model.graph().outputs().size(), " outputs, the reference ", outputs.size()));
  }
  // The reference: onnxruntime computes the reference model's outputs (one segment).
  OS_ASSIGN_OR_RETURN(std::vector<Segment> segments,
                      WriteSegments(reference, outputs, SegmentOptions{}, dir.path(), "r"));
  CompareOptions inputs_options;
  inputs_options.input_shapes = options.input_shapes;
  // ncnn's Mat has no batch dimension: a batch the model leaves open is 1.
  inputs_options.default_dim = backend->runner == "ncnn" ? 1 : 2;
  const bool fp16 = backend->runner == "rknn2";  // no float32 mode for rk3588
  for (int run = 0; run < options.runs; ++run) {
    inputs_options.seed = options.seed + static_cast<uint64_t>(run);
    const std::string ref_dir = dir / absl::StrCat("reference_", run),
                      inputs = dir / absl::StrCat("inputs_", run, ".npz");
    fs::create_directories(ref_dir);
    Json dump;
    dump["mode"] = "dump";
    dump["dump_dir"] = ref_dir;
    dump["sides"] =
        Json::array({{{"label", "reference"}, {"kind", "onnxruntime"}, {"segments", SegmentsJson(segments)}}});
    // The backend's model decides the shapes (a static target fixed them).
    dump["inputs"] = InputsJson(model, inputs_options, "", inputs);
    OS_ASSIGN_OR_RETURN(Json dumped, RunHelper(dir, "compare_run.py", dump, "", nullptr));
    result.runtime = dumped.value("runtime", std::string());
    Json probe;
    probe["mode"] = "probe";
    probe["fp16_tolerance"] = fp16;
    probe["sides"] = Json::array();
    probe["inputs"] = InputsJson(model, inputs_options, inputs, "");
    probe["probe"] = {{"model", model_path},
                      {"python", python},
                      {"runner", runner},
                      {"input_names", model_inputs},
                      {"outdir", dir / absl::StrCat("backend_", run)},
                      {"ref_dir", ref_dir},
                      {"tensors", outputs},
                      {"timeout", options.timeout_seconds}};
    OS_ASSIGN_OR_RETURN(Json got, RunHelper(dir, "compare_run.py", probe, "", nullptr));
    std::string version = got.value("backend", std::string());
    result.backend = version.empty() ? profile_name : absl::StrCat(profile_name, " (", version, ")");
    result.refused = got.value("refused", std::string());
    result.runs_done = run + 1;
    if (!result.refused.empty()) {
      result.failed_run = run;
      result.rows.clear();
      return result;
    }
    result.rows.clear();
    const Json& list = got["rows"];
    for (size_t i = 0; i < outputs.size(); ++i) {
      TensorComparison c = RowFromJson({outputs[i], outputs[i], "output"}, i < list.size() ? list[i] : Json());
      if (!c.computed && c.problem.empty()) c.problem = "the backend returned no such output";
      result.rows.push_back(std::move(c));
    }
    for (const TensorComparison& c : result.rows) {
      if (!c.problem.empty()) {
        result.failed_run = run;
        return result;
      }
    }
  }
  return result;
}

std::string FormatBackendCheck(const BackendCheckResult& r) {
  std::string out = absl::StrCat("backend check on ", r.backend, " against ", r.runtime, ": ");
  if (!r.refused.empty()) return absl::StrCat(out, "refused (input set ", r.failed_run + 1, "): ", r.refused, "\n");
  if (r.failed_run >= 0) {
    for (const TensorComparison& c : r.rows) {
      if (c.problem.empty()) continue;
      return absl::StrCat(out, "output '", c.pair.a, "' differs (input set ", r.failed_run + 1, " of ", r.runs_done,
                          "): ", c.problem, "; max abs error ", absl::StrFormat("%.3g", c.max_abs), ", max rel error ",
                          absl::StrFormat("%.3g", c.max_rel), ", ", absl::StrFormat("%.3g", 100 * c.share_off),
                          "% of elements off\n");
    }
  }
  double worst_abs = 0, worst_rel = 0;
  for (const TensorComparison& c : r.rows) {
    worst_abs = std::max(worst_abs, c.max_abs);
    worst_rel = std::max(worst_rel, c.max_rel);
  }
  return absl::StrCat(out, "ok, ", r.rows.size(), " output(s) on ", r.runs_done, " input set(s), max abs error ",
                      absl::StrFormat("%.3g", worst_abs), ", max rel error ", absl::StrFormat("%.3g", worst_rel), "\n");
}

}  // namespace onnxsurgeon
