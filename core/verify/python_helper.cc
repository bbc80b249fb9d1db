#include "core/verify/python_helper.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/verify/configured_python.h"
#include "core/verify/tolerance_script.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;
namespace {

std::string LastLine(const std::string& text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  return lines.empty() ? "" : std::string(lines.back());
}

bool WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out);
}

}  // namespace

std::vector<std::string> PythonCandidates() {
  if (const char* p = getenv("ONNXSURGEON_PYTHON"); p && *p) return {p};  // not second-guessed
  std::vector<std::string> out;
  std::error_code ec;
  auto add = [&](const std::string& python) {
    if (!python.empty() && std::find(out.begin(), out.end(), python) == out.end()) out.push_back(python);
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
  // The build's own Python (`make` configures with the clone's .venv), then the clone's
  // .venv: right after `make demo` build/onnxsurgeon finds onnxruntime there.
  if (*kConfiguredPython && fs::is_regular_file(kConfiguredPython, ec)) add(kConfiguredPython);
  if (*kSourceDir) add_from(fs::path(kSourceDir) / ".venv" / "bin");
  if (!self.empty()) add_from(self.parent_path().parent_path() / ".venv" / "bin");  // a moved clone's build/
  add("python3");
  return out;
}

std::string SourceDir() { return kSourceDir; }

std::string BackendPython(const std::string& name, bool* ready) {
  fs::path dir;
  for (const char* env : {"ONNXSURGEON_BACKENDS_DIR", "BACKENDS_DIR"}) {
    if (const char* d = getenv(env); d && *d && dir.empty()) dir = d;
  }
  if (dir.empty() && *kSourceDir) dir = fs::path(kSourceDir) / ".backends";
  std::error_code ec;
  fs::path python = dir / name / "venv" / "bin" / "python";
  if (ready) *ready = fs::is_regular_file(dir / name / "ready", ec);
  return fs::exists(python, ec) ? python.string() : "";
}

StatusOr<HelperRun> RunPythonHelper(const std::string& what, const std::string& script_name, const std::string& script,
                                    const TempDir& dir, const Json& config, const std::string& python) {
  if (dir.path().empty()) return absl::InternalError(absl::StrCat(what, ": cannot create a temporary folder"));
  const std::string script_path = dir / script_name, config_path = dir / (script_name + ".config.json");
  if (!WriteText(script_path, script) || !WriteText(dir / "onnxsurgeon_tolerance.py", kToleranceScript) ||
      !WriteText(config_path, DumpJson(config))) {
    return absl::InternalError(absl::StrCat(what, ": cannot write into the temporary folder ", dir.path()));
  }
  std::vector<std::string> candidates = python.empty() ? PythonCandidates() : std::vector<std::string>{python};
  std::vector<std::string> tried;
  for (const std::string& interpreter : candidates) {
    std::string out_json = dir / (script_name + ".out.json"), stderr_path = dir / (script_name + ".stderr.txt");
    std::error_code ignored;
    fs::remove(out_json, ignored);
    int rc = RunProgram({interpreter, script_path, config_path, out_json}, "", dir / (script_name + ".stdout.txt"),
                        stderr_path);
    if (rc == -1) {
      tried.push_back(absl::StrCat(interpreter, ": not found"));
      continue;
    }
    Json j = Json::parse(ReadWholeFile(out_json), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return absl::InternalError(absl::StrCat(what, ": the onnxruntime helper (", interpreter, ") failed (exit ", rc,
                                              "): ", LastLine(ReadWholeFile(stderr_path))));
    }
    if (j.contains("missing")) {
      tried.push_back(absl::StrCat(interpreter, ": no module named '", j["missing"].get<std::string>(), "'"));
      continue;
    }
    return HelperRun{std::move(j), interpreter};
  }
  return absl::FailedPreconditionError(
      absl::StrCat(what,
                   " needs onnxruntime and numpy in a Python 3: `pip install onnxruntime numpy` in the active "
                   "virtualenv (or any of those tried), or set ONNXSURGEON_PYTHON to a python that has them (tried ",
                   absl::StrJoin(tried, "; "), ")"));
}

}  // namespace onnxsurgeon
