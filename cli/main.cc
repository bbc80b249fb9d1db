// The `onnxsurgeon` command: picks the subcommand; each lives in its own file.
//
//   onnxsurgeon [--pass PIPELINE] [options] IN -o OUT   rewrite a model      rewrite_command.cc
//   onnxsurgeon inspect [--json] IN                     health report        inspect_command.cc
//   onnxsurgeon check --opset N [--json] IN             opset blockers       check_command.cc
//   onnxsurgeon check --target NAME [--json] IN         target blockers      check_command.cc
//   onnxsurgeon targets [--markdown | --sources NAME]   target profiles      target_commands.cc
//   onnxsurgeon passes [--json]                         list passes          passes_command.cc
//   onnxsurgeon diff A B [--json]                       model differences    diff_command.cc
//   onnxsurgeon report [...] IN -o REPORT.html          HTML report          rewrite_command.cc
//   onnxsurgeon compare A B | A --backend NAME          first diverging tensor compare_command.cc
//   onnxsurgeon bisect --pass PIPELINE IN               first diverging step bisect_command.cc
//
// Exit status: 0 success, 1 the model is bad or a pass failed (nothing written),
// 2 usage error (unknown flag, bad pipeline).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/common.h"
#include "cli/target_commands.h"
#include "core/util/suggest.h"
#include "passes/registry.h"

namespace onnxsurgeon::cli {

std::string RewriteHelp();

namespace {

const char* kCommands = R"(usage:
  onnxsurgeon [--pass PIPELINE] [options] IN -o OUT   rewrite a model
  onnxsurgeon --target NAME [options] IN -o OUT       make it what a runtime accepts
  onnxsurgeon inspect [--json] IN                     why does my runtime refuse this model?
  onnxsurgeon check --opset N [--json] IN             what blocks converting to opset N
  onnxsurgeon check --target NAME [--json] IN         what that runtime refuses, and why
  onnxsurgeon targets [--markdown | --sources NAME]   the target profiles
  onnxsurgeon passes [--json]                         every pass and its options
  onnxsurgeon diff A B [--json]                       what changed between two models
  onnxsurgeon report [--pass PIPELINE] IN -o R.html   what a pipeline does, as one HTML page
  onnxsurgeon compare A B [--json] [--html R.html]    where two models part: the first diverging tensor
  onnxsurgeon compare A --backend NAME                the same, A in onnxruntime and in a backend
  onnxsurgeon bisect --pass PIPELINE IN [-o R.onnx]   the first pass, rule and nodes that change the outputs
  onnxsurgeon COMMAND --help                          a command's options
  onnxsurgeon --version

Rewrites an ONNX model with a pipeline of passes, e.g.
  onnxsurgeon --pass fold-constants,dce,downgrade-opset=15 model.onnx -o fixed.onnx
Pipeline grammar: name | name=value | name(key=value,...), separated by commas; quote a
value with commas in it ("...") unless they separate numbers (docs/pipeline.md).

Rewrite options:
)";

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
};

constexpr Command kSubcommands[] = {
    {"inspect", RunInspect}, {"check", RunCheck},     {"passes", RunPasses},   {"diff", RunDiff},
    {"report", RunReport},   {"targets", CmdTargets}, {"compare", RunCompare}, {"bisect", RunBisect},
};

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return UsageError("", "no arguments");
  if (args[0] == "--help" || args[0] == "-h") {
    std::string help = RewriteHelp();
    std::cout << kCommands
              << help.substr(help.find("Options:\n") == std::string::npos ? 0 : help.find("Options:\n") + 9);
    return kOk;
  }
  if (args[0] == "--version") {
    std::cout << "onnxsurgeon " << ONNXSURGEON_VERSION << "\n";
    return kOk;
  }
  std::vector<std::string> names;
  for (const Command& c : kSubcommands) {
    if (args[0] == c.name) return c.run({args.begin() + 1, args.end()});
    names.push_back(c.name);
  }
  // `onnxsurgeon inspcet m.onnx`: a misspelt command, not a model to rewrite.
  std::error_code ec;
  if (!args[0].starts_with("-") && !std::filesystem::exists(args[0], ec)) {
    if (auto match = ClosestMatch(args[0], names)) {
      return UsageError("", "unknown command '" + args[0] + "' (did you mean '" + *match + "'?)");
    }
  }
  return RunRewrite(args);
}

}  // namespace
}  // namespace onnxsurgeon::cli

int main(int argc, char** argv) {
  int code = 1;
  try {
    onnxsurgeon::passes::InstallBuiltinPasses();
    code = onnxsurgeon::cli::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "onnxsurgeon: internal error: " << e.what() << "\n";
  }
  // The output is written (atomically) and closed by now. Skip static destructors: tearing
  // down onnx's operator-schema registry (thousands of schemas) would take a few ms of a
  // process that is otherwise done.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
