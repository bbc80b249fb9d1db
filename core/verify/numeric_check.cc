#include "core/verify/numeric_check.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/inspect/json.h"
#include "core/io/model_io.h"
#include "core/util/subprocess.h"
#include "core/verify/ort_check_script.h"
#include "core/verify/python_helper.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;
namespace {

std::string Figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

void ApproximationTolerance(const std::vector<PipelineItem>& pipeline, NumericCheckOptions& options,
                            std::vector<std::string>& notes) {
  auto widen = [&](double bound, const std::string& why) {
    options.extra_atol = std::max(options.extra_atol, bound);
    options.extra_rtol = std::max(options.extra_rtol, bound);
    notes.push_back(why);
  };
  for (const PipelineItem& item : pipeline) {
    const std::string& name = item.info->name;
    if (name == "rewrite-gelu") {
      const std::string& to = item.options.String("to");
      if (to == "tanh") widen(5e-4, "rewrite-gelu(to=tanh) approximates GELU within 5e-4");
      if (to == "sigmoid") widen(2.1e-2, "rewrite-gelu(to=sigmoid) approximates GELU within 2.1e-2");
    } else if (name == "rewrite-erf") {
      widen(5e-7, "rewrite-erf approximates Erf within 5e-7");
    } else if (name == "convert-float16") {
      options.fp16_tolerance = true;
      notes.push_back("convert-float16: every float output compared with fp16 tolerance (atol 1e-2, rtol 1e-2)");
    }
  }
}

StatusOr<NumericCheckResult> RunNumericCheck(const std::string& original_path, const Model& result,
                                             const NumericCheckOptions& options) {
  TempDir dir("onnxsurgeon-check");
  if (dir.path().empty()) return absl::InternalError("--check: cannot create a temporary folder");
  SaveOptions save;
  save.external_data = ExternalDataMode::kAll;  // any size, one data file beside it
  save.location = "result.onnx.data";
  OS_RETURN_IF_ERROR(SaveModel(result, dir / "result.onnx", save));

  Json config;
  config["original"] = fs::absolute(original_path).string();
  config["result"] = dir / "result.onnx";
  config["runs"] = options.runs;
  config["seed"] = options.seed;
  config["input_shapes"] = Json(options.input_shapes);
  config["default_dim"] = options.default_dim;
  config["extra_atol"] = options.extra_atol;
  config["extra_rtol"] = options.extra_rtol;
  config["fp16_tolerance"] = options.fp16_tolerance;
  OS_ASSIGN_OR_RETURN(HelperRun run, RunPythonHelper("--check", "ort_check.py", kOrtCheckScript, dir, config));
  const Json& j = run.result;
  NumericCheckResult r;
  r.python = run.python;
  r.ok = j.value("ok", false);
  r.runtime = absl::StrCat("onnxruntime ", j.value("onnxruntime", std::string("?")));
  r.runs = j.value("runs", options.runs);
  r.default_dim = options.default_dim;
  r.error = j.value("error", std::string());
  if (j.contains("defaulted_dims")) r.defaulted_dims = j["defaulted_dims"].get<std::vector<std::string>>();
  if (j.contains("outputs")) {
    for (const Json& o : j["outputs"]) {
      OutputComparison c;
      c.name = o.value("name", "");
      c.type = o.value("type", "");
      c.shape = o.value("shape", std::vector<int64_t>{});
      c.max_abs = o.value("max_abs", 0.0);
      c.max_rel = o.value("max_rel", 0.0);
      c.atol = o.value("atol", 0.0);
      c.rtol = o.value("rtol", 0.0);
      c.ok = o.value("ok", false);
      c.problem = o.value("problem", "");
      r.outputs.push_back(std::move(c));
    }
  }
  return r;
}

std::string FormatNumericCheck(const NumericCheckResult& r) {
  std::string out =
      absl::StrCat("check: ", r.ok ? "passed" : "FAILED", " (", r.runtime, ", ", r.runs, " random input set(s))\n");
  if (!r.error.empty()) absl::StrAppend(&out, "  ", r.error, "\n");
  for (const auto& note : r.tolerance_notes) absl::StrAppend(&out, "  tolerance: ", note, "\n");
  if (!r.defaulted_dims.empty()) {
    absl::StrAppend(&out, "  symbolic dims set to ", r.default_dim, ": ", absl::StrJoin(r.defaulted_dims, ", "),
                    " (fix them with --input-shapes)\n");
  }
  for (const auto& o : r.outputs) {
    absl::StrAppend(&out, "  ", o.ok ? "ok  " : "FAIL", " ", o.name, ": max abs ", Figure(o.max_abs), ", max rel ",
                    Figure(o.max_rel), " (atol ", Figure(o.atol), ", rtol ", Figure(o.rtol), ")",
                    o.problem.empty() ? "" : ": " + o.problem, "\n");
  }
  return out;
}

}  // namespace onnxsurgeon
