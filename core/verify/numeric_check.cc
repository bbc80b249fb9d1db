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

namespace onnxsurgeon {
namespace fs = std::filesystem;
namespace {

// The interpreters to try, in order: an explicit ONNXSURGEON_PYTHON alone; else the active
// virtualenv's and conda environment's interpreter (where a user just ran `pip install
// onnxruntime`), the one beside this executable (the venv a wheel installed the CLI into),
// then python3 on PATH. Each path once.
std::vector<std::string> PythonCandidates() {
  if (const char* p = getenv("ONNXSURGEON_PYTHON"); p && *p) return {p};  // not second-guessed
  std::vector<std::string> out;
  std::error_code ec;
  auto add = [&](const std::string& python) {
    if (std::find(out.begin(), out.end(), python) == out.end()) out.push_back(python);
  };
  auto add_from = [&](const fs::path& dir) {
    for (const char* name : {"python3", "python"}) {
      if (fs::is_regular_file(dir / name, ec)) {  // follows symlinks; build/python is a folder
        add((dir / name).string());
        return;
      }
    }
  };
  for (const char* env : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const char* prefix = getenv(env); prefix && *prefix) add_from(fs::path(prefix) / "bin");
  }
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) add_from(self.parent_path());
  add("python3");
  return out;
}

std::string LastLine(const std::string& text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "" : std::string(lines.back());
}

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
  { std::ofstream(dir / "config.json") << DumpJson(config); }

  std::vector<std::string> tried;
  for (const std::string& python : PythonCandidates()) {
    std::string out_json = dir / "out.json", stderr_path = dir / "stderr.txt";
    std::error_code ignored;
    fs::remove(out_json, ignored);
    int rc =
        RunProgram({python, "-c", kOrtCheckScript, dir / "config.json", out_json}, "", dir / "stdout.txt", stderr_path);
    if (rc == -1) {
      tried.push_back(absl::StrCat(python, ": not found"));
      continue;
    }
    std::string text = ReadWholeFile(out_json);
    Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InternalError(absl::StrCat("--check: the onnxruntime helper (", python, ") failed (exit ", rc,
                                              "): ", LastLine(ReadWholeFile(stderr_path))));
    }
    if (j.contains("missing")) {
      tried.push_back(absl::StrCat(python, ": no module named '", j["missing"].get<std::string>(), "'"));
      continue;
    }
    NumericCheckResult r;
    r.python = python;
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
  return absl::FailedPreconditionError(
      absl::StrCat("--check needs onnxruntime and numpy in a Python 3: `pip install onnxruntime numpy` in the active "
                   "virtualenv (or any of those tried), or set ONNXSURGEON_PYTHON to a python that has them (tried ",
                   absl::StrJoin(tried, "; "), ")"));
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
