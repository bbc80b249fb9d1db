// compare --backend for backends that compile and run whole models only (nncase's K210
// simulator, onnx2tf -> TFLite, rknn-toolkit2's simulator): they expose no
// intermediate tensor, so the model is cut instead. onnxruntime computes every tensor of
// A once (the reference); the backend runs A, and when an output is off, models cut at
// candidate tensors (`extract`: the subgraph computing that one tensor from the graph
// inputs), by binary search over the failing output's ancestors in A's order: a cut whose
// tensor is off moves the search earlier, one that matches later. About log2(ancestors)
// backend runs find a tensor that is off right after one that is not.
//
// The backends run through their harness runners (tests/backends/runners, the file
// protocol of _protocol.py, embedded in the binary: backend_check.h) in their venvs
// (scripts/backends/setup.sh).
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/io/model_io.h"
#include "core/pass/pass.h"
#include "core/verify/backend_check.h"
#include "core/verify/compare_internal.h"
#include "core/verify/python_helper.h"

namespace onnxsurgeon::compare_internal {
namespace fs = std::filesystem;
namespace {

// ncnn is not among them: its Mat has no batch dimension, so its runner cuts inputs and
// outputs to the first batch item, and no tensor would compare as onnxruntime's.
constexpr const char* kCutBackends[] = {"nncase-k210", "tflite", "rknn2"};

// A copy of A computing `tensors` from the graph inputs they need, saved with its weights
// inline (nncase reads the model's bytes only). Result the path and its inputs, in order.
StatusOr<std::pair<std::string, std::vector<std::string>>> SaveCut(const Model& a,
                                                                   const std::vector<std::string>& tensors,
                                                                   const std::string& path) {
  const PassInfo* extract = FindPass("extract");
  if (!extract) return absl::InternalError("the extract pass is not registered");
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> copy, CopySharingWeights(a));
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass,
                      CreatePass(*extract, PassOptions(extract->options, {{"outputs", absl::StrJoin(tensors, ";")}})));
  OS_RETURN_IF_ERROR(pass->Run(*copy, PassContext{}).status());
  SaveOptions save;
  save.external_data = ExternalDataMode::kInline;
  OS_RETURN_IF_ERROR(SaveModel(*copy, path, save));
  std::vector<std::string> inputs;
  for (Value* v : copy->graph().inputs())
    if (!v->IsInitializer()) inputs.push_back(v->name());
  return std::make_pair(path, inputs);
}

}  // namespace

bool IsCutBackend(const std::string& name) {
  return std::find(std::begin(kCutBackends), std::end(kCutBackends), name) != std::end(kCutBackends);
}

StatusOr<CompareResult> CompareByCuts(Model& a, const CompareOptions& options, const std::vector<TensorPair>& pairs,
                                      const TempDir& dir) {
  bool ready = false;
  const std::string python = BackendPython(options.backend, &ready);
  if (python.empty() || !ready) {
    return absl::FailedPreconditionError(
        absl::StrCat("--backend ", options.backend, ": its venv is not installed; run `bash scripts/backends/setup.sh ",
                     options.backend, "` or set ONNXSURGEON_BACKENDS_DIR"));
  }
  // The runner embedded in the binary (or $ONNXSURGEON_BACKEND_RUNNERS's).
  const std::string runners = dir / "runners";
  fs::create_directories(runners);
  OS_ASSIGN_OR_RETURN(const std::string runner, BackendRunnerScript(options.backend, runners));
  CompareResult result;
  CompareOptions judged = options;
  if (options.backend == "rknn2") {  // rknn-toolkit2 has no fp32 mode for rk3588
    judged.fp16_tolerance = true;
    result.tolerance_notes.push_back("rknn2's simulator computes in float16: float16 tolerances");
  }
  // The reference: every paired tensor of A, computed once by onnxruntime and stored.
  std::vector<std::string> names;
  for (const TensorPair& p : pairs) names.push_back(p.a);
  SegmentOptions seg_options;
  seg_options.batch = options.batch;
  OS_ASSIGN_OR_RETURN(std::vector<Segment> segments, WriteSegments(a, names, seg_options, dir.path(), "a"));
  result.segments_a = static_cast<int64_t>(segments.size());
  const std::string reference = dir / "reference", inputs = dir / "inputs.npz";
  fs::create_directories(reference);
  Json dump;
  dump["mode"] = "dump";
  dump["dump_dir"] = reference;
  dump["sides"] = Json::array({{{"label", "A"}, {"kind", "onnxruntime"}, {"segments", SegmentsJson(segments)}}});
  dump["inputs"] = InputsJson(a, options, options.inputs_file, inputs);
  OS_ASSIGN_OR_RETURN(Json dumped, RunHelper(dir, "compare_run.py", dump, "", &result.python));
  result.runtime = dumped.value("runtime", std::string());
  if (dumped.contains("defaulted_dims"))
    result.defaulted_dims = dumped["defaulted_dims"].get<std::vector<std::string>>();

  absl::flat_hash_map<std::string, const TensorPair*> pair_of;
  for (const TensorPair& p : pairs) pair_of[p.a] = &p;
  int probes = 0;
  // Runs A cut at `tensors` on the backend; the rows, or the backend's refusal.
  auto probe = [&](const std::vector<std::string>& tensors,
                   std::string* refused) -> StatusOr<std::vector<TensorComparison>> {
    const std::string path = dir / absl::StrCat("cut_", probes, ".onnx");
    OS_ASSIGN_OR_RETURN(auto cut, SaveCut(a, tensors, path));
    Json config;
    config["mode"] = "probe";
    config["fp16_tolerance"] = judged.fp16_tolerance;
    config["sides"] = Json::array();
    config["inputs"] = InputsJson(a, options, inputs, "");
    config["probe"] = {{"model", cut.first},
                       {"python", python},
                       {"runner", runner},
                       {"input_names", cut.second},
                       {"outdir", dir / absl::StrCat("cut_", probes)},
                       {"ref_dir", reference},
                       {"tensors", tensors}};
    ++probes;
    OS_ASSIGN_OR_RETURN(Json got, RunHelper(dir, "compare_run.py", config, "", nullptr));
    if (result.b_runtime.empty() && got.contains("backend"))
      result.b_runtime = absl::StrCat(options.backend, " ", got.value("backend", std::string()));
    *refused = got.value("refused", std::string());
    std::vector<TensorComparison> rows;
    const Json& list = got["rows"];
    for (size_t i = 0; i < tensors.size() && i < list.size(); ++i)
      rows.push_back(RowFromJson(*pair_of[tensors[i]], list[i]));
    return rows;
  };

  // The whole model first.
  std::vector<std::string> outputs;
  for (const TensorPair& p : pairs)
    if (p.how == "output") outputs.push_back(p.a);
  std::string refused;
  OS_ASSIGN_OR_RETURN(std::vector<TensorComparison> rows, probe(outputs, &refused));
  if (!refused.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(options.backend, " refuses the model (", refused, "); `onnxsurgeon check --target` says why"));
  }
  result.rows = rows;
  const TensorComparison* failing = nullptr;
  for (const TensorComparison& r : result.rows)
    if (!r.ok() && !failing) failing = &r;
  if (failing) {
    // Candidates: the failing output's ancestors among the paired tensors, in A's order.
    absl::flat_hash_set<const Value*> ancestors;
    std::vector<const Value*> stack = {a.graph().FindValue(failing->pair.a)};
    while (!stack.empty()) {
      const Value* v = stack.back();
      stack.pop_back();
      if (!v || !ancestors.insert(v).second) continue;
      if (const Node* n = v->producer())
        for (const Value* in : n->inputs()) stack.push_back(in);
    }
    std::vector<std::string> candidates;
    for (const TensorPair& p : pairs)
      if (p.how != "output" && ancestors.contains(a.graph().FindValue(p.a))) candidates.push_back(p.a);
    int64_t lo = -1, hi = static_cast<int64_t>(candidates.size());  // candidates[hi]: the output
    absl::flat_hash_set<std::string> refusals;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      // A cut the backend refuses says nothing: the next candidate is tried instead.
      std::vector<TensorComparison> got;
      bool answered = false;
      for (; mid < hi && !answered; ++mid) {
        if (refusals.contains(candidates[mid])) continue;
        OS_ASSIGN_OR_RETURN(got, probe({candidates[mid]}, &refused));
        answered = refused.empty() && !got.empty();
        if (!refused.empty()) {
          refusals.insert(candidates[mid]);
          result.notes.push_back(absl::StrCat("cut at '", candidates[mid], "' refused by the backend: ", refused));
        }
      }
      if (!answered) break;
      --mid;
      result.rows.push_back(got[0]);
      (got[0].ok() ? lo : hi) = mid;
    }
  }
  result.segments_b = probes;
  std::stable_sort(result.rows.begin(), result.rows.end(), [](const TensorComparison& x, const TensorComparison& y) {
    return x.pair.position < y.pair.position;
  });
  MarkDivergence(a, result);
  return result;
}

}  // namespace onnxsurgeon::compare_internal
