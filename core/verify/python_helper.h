// Running the embedded Python helpers (--check, compare, bisect) with an interpreter that
// has onnxruntime and numpy, found by one rule (docs/design.md, "The command line"):
//
//   1. $ONNXSURGEON_PYTHON, alone (not second-guessed);
//   2. the active virtualenv's and conda environment's python;
//   3. a python beside the onnxsurgeon binary (the venv a wheel installed the CLI into);
//   4. the Python the build was configured with (CMake's Python3_EXECUTABLE: `make`
//      configures with the clone's .venv), and the clone's .venv itself;
//   5. python3 on PATH.
//
// Each helper script is written into a temporary folder beside the shared tolerance table
// (python/onnxsurgeon/tolerance.py, importable there as `onnxsurgeon_tolerance`) and run
// as `python SCRIPT CONFIG.json RESULT.json`. A helper that cannot import what it needs
// writes {"missing": "module"}, and the next interpreter is tried.
#pragma once

#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/ir/status.h"
#include "core/util/subprocess.h"

namespace onnxsurgeon {

// The interpreters the rule above gives, in order, each once.
std::vector<std::string> PythonCandidates();

// The python of a backend's venv (scripts/backends/setup.sh): $ONNXSURGEON_BACKENDS_DIR,
// else $BACKENDS_DIR, else the clone's .backends, then NAME/venv/bin/python. Result the
// path and whether NAME/ready says the install worked ("" when there is no venv).
std::string BackendPython(const std::string& name, bool* ready = nullptr);

// The source tree the binary was built from ("" when unknown).
std::string SourceDir();

struct HelperRun {
  Json result;         // what the helper wrote
  std::string python;  // the interpreter that ran it
};

// Given what is asking ("--check"), a script name and its text, a temporary folder and the
// config. Execute writes script, tolerance table and config into `dir` and runs the script
// with each candidate interpreter (or only `python` when given) until one has the modules.
// Result the helper's JSON; an error saying what to install when no interpreter has them,
// or quoting the helper's last stderr line when it failed.
StatusOr<HelperRun> RunPythonHelper(const std::string& what, const std::string& script_name, const std::string& script,
                                    const TempDir& dir, const Json& config, const std::string& python = "");

}  // namespace onnxsurgeon
