#include "core/verify/compare.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/util/subprocess.h"
#include "core/verify/compare_internal.h"
#include "core/verify/compare_run_script.h"
#include "core/verify/python_helper.h"
#include "core/verify/segments.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;
namespace {

std::string Figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

namespace compare_internal {

Json SegmentsJson(const std::vector<Segment>& segments) {
  Json list = Json::array();
  for (const Segment& s : segments) {
    list.push_back({{"path", s.path},
                    {"inputs", s.inputs},
                    {"outputs", s.outputs},
                    {"exposed", s.exposed},
                    {"release", s.release}});
  }
  return list;
}

Json InputsJson(const Model& model, const CompareOptions& options, const std::string& file, const std::string& save) {
  Json specs = Json::array();
  for (const InputSpec& s : InputSpecs(model)) {
    Json dims = Json::array();
    for (size_t k = 0; k < s.dims.size(); ++k) {
      if (s.dims[k] >= 0) dims.push_back(s.dims[k]);
      else dims.push_back(s.symbols[k]);
    }
    specs.push_back({{"name", s.name}, {"dtype", s.elem_type}, {"dims", dims}});
  }
  return {{"file", file},
          {"save", save},
          {"specs", specs},
          {"input_shapes", Json(options.input_shapes)},
          {"default_dim", options.default_dim},
          {"seed", options.seed}};
}

// The tensors A exposes: every comparable node output (all of them, for a backend or a
// reference, whose tensors are named as A's), or only the graph outputs.
std::vector<TensorPair> SelfPairs(Model& a, bool outputs_only) {
  std::vector<TensorPair> pairs = MatchTensors(a, a);
  if (outputs_only) {
    pairs.erase(std::remove_if(pairs.begin(), pairs.end(), [](const TensorPair& p) { return p.how != "output"; }),
                pairs.end());
  }
  return pairs;
}

StatusOr<Json> RunHelper(const TempDir& dir, const std::string& name, const Json& config, const std::string& python,
                         std::string* used_python) {
  OS_ASSIGN_OR_RETURN(HelperRun run, RunPythonHelper("compare", name, kCompareRunScript, dir, config, python));
  if (used_python) *used_python = run.python;
  std::string error = run.result.value("error", std::string());
  if (!error.empty()) return absl::FailedPreconditionError(error);
  return run.result;
}

// A tensor off tolerance matters when the difference reaches an output: a rewrite may
// change a tensor on purpose under its own name (fold-into-weights scales a MatMul's
// weights, and the scores downstream, until the Div it folded away), and later tensors
// match again. Walking back from the outputs that are off, through tensors that are off
// or were not compared, gives the tensors on a path of differences; the first of them in
// A's order is the first divergence. Off tensors no such path reaches are drift.
void MarkDivergence(const Model& a, CompareResult& result) {
  absl::flat_hash_map<std::string, size_t> row_of;
  for (size_t i = 0; i < result.rows.size(); ++i) row_of.emplace(result.rows[i].pair.a, i);
  std::vector<const Value*> stack;
  absl::flat_hash_set<const Value*> visited;
  for (const TensorComparison& row : result.rows) {
    if (row.pair.how == "output" && !row.ok())
      if (const Value* v = a.graph().FindValue(row.pair.a)) stack.push_back(v);
  }
  // Outputs not paired with B's (reference rows named as A's are paired by name).
  for (const TensorComparison& row : result.rows) {
    if (row.pair.how != "output" && !row.ok() && row.pair.a == row.pair.b) {
      const Value* v = a.graph().FindValue(row.pair.a);
      if (v && v->IsGraphOutput()) stack.push_back(v);
    }
  }
  int64_t first = -1;
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (!visited.insert(v).second) continue;
    auto it = row_of.find(v->name());
    if (it != row_of.end()) {
      const TensorComparison& row = result.rows[it->second];
      if (row.computed && row.ok()) continue;  // the difference does not come through here
      if (!row.ok() && (first < 0 || static_cast<int64_t>(it->second) < first)) first = it->second;
    }
    if (const Node* p = v->producer())
      for (const Value* in : p->inputs())
        if (in && in->producer()) stack.push_back(in);
  }
  result.first_divergence = first;
  result.drift = 0;
  for (size_t i = 0; i < result.rows.size(); ++i)
    result.drift += !result.rows[i].ok() && static_cast<int64_t>(i) < first;
  if (first < 0)
    for (const TensorComparison& row : result.rows) result.drift += !row.ok();
}

TensorComparison RowFromJson(const TensorPair& p, const Json& r) {
  TensorComparison c;
  c.pair = p;
  if (!r.is_object() || r.contains("missing")) {
    c.computed = false;
    c.missing = r.is_object() ? r.value("missing", "") : "?";
    return c;
  }
  c.dtype = r.value("dtype", "");
  c.b_dtype = r.value("b_dtype", "");
  c.shape = r.value("shape", std::vector<int64_t>{});
  c.max_abs = r.value("max_abs", 0.0);
  c.max_rel = r.value("max_rel", 0.0);
  c.ratio = r.value("ratio", 0.0);
  c.atol = r.value("atol", 0.0);
  c.rtol = r.value("rtol", 0.0);
  c.off = r.value("off", int64_t{0});
  c.size = r.value("size", int64_t{0});
  c.share_off = r.value("share_off", 0.0);
  c.problem = r.value("problem", "");
  return c;
}

}  // namespace compare_internal

using namespace compare_internal;

std::vector<std::string> CompareBackends() {
  return {"ort-1.10", "ort-1.14", "ort-1.15", "openvino", "nncase-k210", "tflite", "rknn2"};
}

StatusOr<CompareResult> CompareModels(Model& a, Model* b, const CompareOptions& options) {
  TempDir dir("onnxsurgeon-compare");
  if (dir.path().empty()) return absl::InternalError("compare: cannot create a temporary folder");
  const bool backend = !options.backend.empty(), reference = !options.reference_file.empty();
  std::vector<TensorPair> pairs;
  if (!a.graph().IsTopologicallySorted()) OS_RETURN_IF_ERROR(a.graph().TopologicalSort());
  if (backend || reference) {
    pairs = SelfPairs(a, options.outputs_only);
  } else {
    if (!b) return absl::InvalidArgumentError("compare: no second model");
    if (!b->graph().IsTopologicallySorted()) OS_RETURN_IF_ERROR(b->graph().TopologicalSort());
    pairs = MatchTensors(a, *b);
    if (options.outputs_only) {
      pairs.erase(std::remove_if(pairs.begin(), pairs.end(), [](const TensorPair& p) { return p.how != "output"; }),
                  pairs.end());
    }
  }
  if (backend && IsCutBackend(options.backend)) return CompareByCuts(a, options, pairs, dir);
  std::vector<std::string> names_a, names_b;
  for (const TensorPair& p : pairs) {
    names_a.push_back(p.a);
    names_b.push_back(p.b);
  }
  SegmentOptions seg_options;
  seg_options.batch = options.batch;
  OS_ASSIGN_OR_RETURN(std::vector<Segment> seg_a, WriteSegments(a, names_a, seg_options, dir.path(), "a"));
  absl::flat_hash_set<std::string> exposed_a, exposed_b;
  for (const Segment& s : seg_a) exposed_a.insert(s.exposed.begin(), s.exposed.end());

  Json config;
  config["mode"] = "compare";
  config["fp16_tolerance"] = options.fp16_tolerance;
  config["extra_atol"] = options.extra_atol;
  config["extra_rtol"] = options.extra_rtol;
  Json side_a = {{"label", "A"}, {"kind", "onnxruntime"}, {"segments", SegmentsJson(seg_a)}};
  std::string inputs_file = options.inputs_file;
  CompareResult result;
  result.segments_a = static_cast<int64_t>(seg_a.size());

  Json side_b;
  if (backend) {
    const auto known = CompareBackends();
    if (std::find(known.begin(), known.end(), options.backend) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("no backend named '", options.backend, "' (known: ", absl::StrJoin(known, ", "), ")"));
    }
    bool ready = false;
    std::string python = BackendPython(options.backend, &ready);
    if (python.empty() || !ready) {
      return absl::FailedPreconditionError(absl::StrCat(
          "--backend ", options.backend, ": its venv is not installed (", python.empty() ? "none" : python,
          "); run `bash scripts/backends/setup.sh ", options.backend, "` or set ONNXSURGEON_BACKENDS_DIR"));
    }
    // The backend runs in its own venv and stores what it computed; the main helper then
    // runs A in onnxruntime on the same (saved) inputs and compares.
    std::string dump = dir / "backend";
    fs::create_directories(dump);
    Json dump_config = config;
    dump_config["mode"] = "dump";
    dump_config["dump_dir"] = dump;
    Json kind = options.backend == "openvino" ? "openvino" : "onnxruntime";
    dump_config["sides"] = Json::array({{{"label", "B"}, {"kind", kind}, {"segments", SegmentsJson(seg_a)}}});
    dump_config["inputs"] = InputsJson(a, options, inputs_file, dir / "inputs.npz");
    std::string used;
    OS_ASSIGN_OR_RETURN(Json dumped, RunHelper(dir, "compare_dump.py", dump_config, python, &used));
    result.b_runtime = dumped.value("runtime", std::string());
    if (dumped.contains("defaulted_dims"))
      result.defaulted_dims = dumped["defaulted_dims"].get<std::vector<std::string>>();
    inputs_file = dir / "inputs.npz";
    side_b = {{"label", "B"}, {"kind", "dump"}, {"dir", dump}};
    exposed_b = exposed_a;
    result.segments_b = result.segments_a;
  } else if (reference) {
    side_b = {{"label", "B"}, {"kind", "npz"}, {"file", fs::absolute(options.reference_file).string()}};
    exposed_b = exposed_a;
  } else {
    OS_ASSIGN_OR_RETURN(std::vector<Segment> seg_b, WriteSegments(*b, names_b, seg_options, dir.path(), "b"));
    for (const Segment& s : seg_b) exposed_b.insert(s.exposed.begin(), s.exposed.end());
    side_b = {{"label", "B"}, {"kind", "onnxruntime"}, {"segments", SegmentsJson(seg_b)}};
    result.segments_b = static_cast<int64_t>(seg_b.size());
  }
  // Only pairs both sides expose go to the helper; the rest are reported as not computed.
  std::vector<TensorPair> run_pairs, skipped;
  for (const TensorPair& p : pairs) {
    (exposed_a.contains(p.a) && exposed_b.contains(p.b) ? run_pairs : skipped).push_back(p);
  }
  Json pair_list = Json::array();
  for (const TensorPair& p : run_pairs) pair_list.push_back({{"a", p.a}, {"b", p.b}});
  config["pairs"] = pair_list;
  config["sides"] = Json::array({side_a, side_b});
  std::string fallback = reference && inputs_file.empty() ? fs::absolute(options.reference_file).string() : "";
  config["inputs"] = InputsJson(a, options, inputs_file.empty() ? fallback : inputs_file, options.save_inputs);
  OS_ASSIGN_OR_RETURN(Json got, RunHelper(dir, "compare_run.py", config, "", &result.python));
  result.runtime = got.value("runtime", std::string());
  if (!backend && got.contains("defaulted_dims"))
    result.defaulted_dims = got["defaulted_dims"].get<std::vector<std::string>>();
  const Json& rows = got["rows"];
  size_t k = 0;
  for (const TensorPair& p : run_pairs) {
    TensorComparison c = RowFromJson(p, k < rows.size() ? rows[k] : Json());
    ++k;
    if (reference && !c.computed && c.missing == "B") continue;  // the reference has no such array
    result.rows.push_back(std::move(c));
  }
  if (!reference) {
    for (const TensorPair& p : skipped) {
      TensorComparison c;
      c.pair = p;
      c.computed = false;
      c.missing = std::string(exposed_a.contains(p.a) ? "B" : "A");
      result.rows.push_back(std::move(c));
      ++result.not_exposed;
    }
  }
  std::stable_sort(result.rows.begin(), result.rows.end(), [](const TensorComparison& x, const TensorComparison& y) {
    return x.pair.position < y.pair.position;
  });
  MarkDivergence(a, result);
  return result;
}

namespace {

Json RowJson(const TensorComparison& c) {
  Json j = {
      {"a", c.pair.a},           {"b", c.pair.b},         {"matched_by", c.pair.how}, {"position", c.pair.position},
      {"a_node", c.pair.a_node}, {"a_op", c.pair.a_op},   {"b_node", c.pair.b_node},  {"b_op", c.pair.b_op},
      {"b_rule", c.pair.b_rule}, {"computed", c.computed}};
  if (!c.computed) {
    j["missing"] = c.missing;
    return j;
  }
  j["dtype"] = c.dtype;
  if (c.b_dtype != c.dtype) j["b_dtype"] = c.b_dtype;
  j["shape"] = c.shape;
  j["max_abs"] = c.max_abs;
  j["max_rel"] = c.max_rel;
  j["elements_off"] = c.off;
  j["elements"] = c.size;
  j["share_off"] = c.share_off;
  j["tolerance_ratio"] = c.ratio;
  j["atol"] = c.atol;
  j["rtol"] = c.rtol;
  j["ok"] = c.ok();
  j["problem"] = c.problem;
  return j;
}

std::string Percent(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * share);
  return buf;
}

}  // namespace

Json CompareToJson(const CompareResult& r) {
  Json j;
  j["ok"] = r.ok();
  j["a"] = r.a_label;
  j["b"] = r.b_label;
  j["runtime"] = r.runtime;
  if (!r.b_runtime.empty()) j["b_runtime"] = r.b_runtime;
  j["python"] = r.python;
  j["defaulted_dims"] = r.defaulted_dims;
  j["tolerance_notes"] = r.tolerance_notes;
  j["notes"] = r.notes;
  j["segments"] = {{"a", r.segments_a}, {"b", r.segments_b}};
  j["drift"] = r.drift;
  j["first_divergence"] = r.first_divergence >= 0 ? RowJson(r.rows[r.first_divergence]) : Json();
  Json rows = Json::array();
  for (const TensorComparison& c : r.rows) rows.push_back(RowJson(c));
  j["tensors"] = rows;
  return j;
}

std::string FormatCompareText(const CompareResult& r, size_t max_rows) {
  int64_t compared = 0, by_name = 0, by_provenance = 0, by_boundary = 0, outputs = 0, missing = 0;
  for (const TensorComparison& c : r.rows) {
    if (!c.computed) {
      ++missing;
      continue;
    }
    ++compared;
    by_name += c.pair.how == "name";
    by_provenance += c.pair.how == "provenance";
    by_boundary += c.pair.how == "boundary";
    outputs += c.pair.how == "output";
  }
  std::string out = absl::StrCat("compare: ", r.a_label, " vs ", r.b_label, " (", r.runtime,
                                 r.b_runtime.empty() ? "" : absl::StrCat(" vs ", r.b_runtime), ")\n");
  absl::StrAppend(&out, "  ", compared, " tensors compared (", outputs, " outputs, ", by_name, " by name, ",
                  by_provenance, " by provenance",
                  by_boundary ? absl::StrCat(", ", by_boundary, " at region boundaries") : "", ")");
  if (missing) absl::StrAppend(&out, ", ", missing, " not computed on one side");
  absl::StrAppend(&out, "; segments ", r.segments_a, " + ", r.segments_b, "\n");
  for (const auto& note : r.tolerance_notes) absl::StrAppend(&out, "  tolerance: ", note, "\n");
  for (const auto& note : r.notes) absl::StrAppend(&out, "  note: ", note, "\n");
  if (!r.defaulted_dims.empty()) {
    absl::StrAppend(&out, "  symbolic dims set to 2: ", absl::StrJoin(r.defaulted_dims, ", "),
                    " (fix them with --input-shapes)\n");
  }
  if (r.drift) {
    absl::StrAppend(&out, "  ", r.drift, " tensor(s) off tolerance", r.first_divergence >= 0 ? " before it" : "",
                    " but matched again downstream (changed on purpose by a rewrite, or drift)\n");
  }
  if (r.first_divergence < 0) {
    absl::StrAppend(&out, "  no divergence: the outputs are within tolerance\n");
  } else {
    const TensorComparison& c = r.rows[r.first_divergence];
    absl::StrAppend(&out, "  first divergence: '", c.pair.a, "'",
                    c.pair.b != c.pair.a ? absl::StrCat(" (B: '", c.pair.b, "')") : "", ", made by node '",
                    c.pair.a_node, "' (", c.pair.a_op, ")");
    if (c.pair.b_node != c.pair.a_node) {
      absl::StrAppend(&out, ", in B node '", c.pair.b_node, "' (", c.pair.b_op, ")",
                      c.pair.b_rule.empty() ? "" : absl::StrCat(" from rule '", c.pair.b_rule, "'"));
    }
    absl::StrAppend(&out, "\n");
    if (c.computed) {
      absl::StrAppend(&out, "    max abs ", Figure(c.max_abs), ", max rel ", Figure(c.max_rel), ", ",
                      Percent(c.share_off), " of ", c.size, " elements off (atol ", Figure(c.atol), ", rtol ",
                      Figure(c.rtol), "): ", c.problem, "\n");
    }
  }
  // Rows: from a few before the divergence (or the start), at most max_rows.
  size_t start = r.first_divergence > 2 ? static_cast<size_t>(r.first_divergence - 2) : 0;
  size_t shown = 0;
  if (!r.rows.empty()) absl::StrAppend(&out, "  tensors, in A's order:\n");
  for (size_t i = start; i < r.rows.size() && shown < max_rows; ++i, ++shown) {
    const TensorComparison& c = r.rows[i];
    if (!c.computed) {
      absl::StrAppend(&out, "    -    ", c.pair.a, " (", c.pair.a_op, "): not computed by ", c.missing, "\n");
      continue;
    }
    absl::StrAppend(&out, "    ", c.ok() ? "ok  " : "OFF ", " ", c.pair.a, " (", c.pair.a_op, "): max abs ",
                    Figure(c.max_abs), ", max rel ", Figure(c.max_rel), ", off ", Percent(c.share_off), "\n");
  }
  if (start + shown < r.rows.size()) {
    absl::StrAppend(&out, "    ... ", r.rows.size() - start - shown, " more (--max-rows, --json)\n");
  }
  return out;
}

}  // namespace onnxsurgeon
