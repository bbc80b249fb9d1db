// What every subcommand shares: exit codes, one-line errors, and argument parsing with
// CLI11 (unknown flags get a "did you mean").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/ir/status.h"

namespace onnxsurgeon::cli {

constexpr int kOk = 0, kModelError = 1, kUsageError = 2;

// "onnxsurgeon: MESSAGE (see 'onnxsurgeon COMMAND --help')" on one line; returns kUsageError.
int UsageError(const std::string& command, const std::string& message);

// "onnxsurgeon: error: MESSAGE" on one line; returns kModelError.
int ModelError(const Status& status);

// `message` with its control characters escaped (a newline as \n, others as \xNN), so an
// error quoting a name or path from the model stays one line: names are arbitrary strings
// (a bit flip made one "\n\x03N", and the error two lines).
std::string OneLine(std::string_view message);

// Given a configured app and the arguments after the command name. Execute parses them;
// --help prints the app's help on stdout. Result nothing when the command should run,
// else the exit code (0 after --help, kUsageError after a parse error).
std::optional<int> ParseArguments(CLI::App& app, const std::string& command, const std::vector<std::string>& args);

// The subcommands (one file each).
int RunRewrite(const std::vector<std::string>& args);
int RunInspect(const std::vector<std::string>& args);
int RunCheck(const std::vector<std::string>& args);
int RunPasses(const std::vector<std::string>& args);
int RunDiff(const std::vector<std::string>& args);
int RunReport(const std::vector<std::string>& args);
int RunCompare(const std::vector<std::string>& args);
int RunBisect(const std::vector<std::string>& args);

}  // namespace onnxsurgeon::cli
