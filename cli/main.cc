// The `onnxsurgeon` command.
//
//   onnxsurgeon [--pass PIPELINE] [options] IN -o OUT   rewrite a model
//   onnxsurgeon inspect [--json] IN                     health report
//   onnxsurgeon passes                                  list passes and options
//   onnxsurgeon check --opset N [--json] IN             what would block converting to opset N
//   onnxsurgeon --target NAME IN -o OUT                 make the model what a runtime accepts
//   onnxsurgeon check --target NAME [--json] IN         what that runtime refuses, and why
//   onnxsurgeon targets                                 list target profiles (cli/target_commands.h)
//
// Exit status: 0 success, 1 the model is bad or a pass failed (nothing written),
// 2 usage error (unknown flag, bad pipeline).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/inspect/inspect.h"
#include "core/inspect/json_writer.h"
#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "cli/target_commands.h"
#include "passes/opset/converter.h"

namespace onnxsurgeon {
namespace {

constexpr int kOk = 0, kModelError = 1, kUsageError = 2;

const char* kUsage = R"(usage:
  onnxsurgeon [--pass PIPELINE] [--target NAME] [options] IN -o OUT
  onnxsurgeon inspect [--json] IN
  onnxsurgeon passes
  onnxsurgeon targets [--markdown | --sources NAME]
  onnxsurgeon check --opset N [--json] IN
  onnxsurgeon check --target NAME [--json] [--input-shapes S] IN
  onnxsurgeon --help | --version

Rewrites an ONNX model with a pipeline of passes, e.g.
  onnxsurgeon --pass fold-constants,dce,downgrade-opset=15 model.onnx -o fixed.onnx
Pipeline grammar: name | name=value | name(key=value,...), separated by commas.

options:
  -o, --output OUT             where to write the result (written atomically)
  --pass PIPELINE              passes to run; none means a load -> save round trip
  --target NAME                then make the model what target NAME accepts (a profile
                               from `onnxsurgeon targets`, or a .toml file); prints the plan
  --input-shapes NAME:DIMS;... static input shapes, for targets that need them
  --allow-remaining            with --target: write the result although blockers remain
  --external-data MODE         keep (default: external tensors stay external),
                               inline, or all (tensors >= threshold to one file)
  --external-threshold BYTES   size threshold for --external-data all (default 1024)
  --external-location NAME     file for --external-data all (default OUT.data)
  --dry-run                    run the passes and report, write nothing
  --report text|json           per-pass report on stderr (text) or stdout (json)
  --verify-each                run the onnx checker after every pass
  --no-full-check              skip onnx's full checker on the output (our structural
                               checks still run; docs/reliability.md)
  --print-after PASS           print the model as ONNX text after PASS
  --debug-patterns             report every pattern-rule miss and why, on stderr
)";

int Usage(const std::string& message) {
  std::cerr << "onnxsurgeon: " << message << "\n\n" << kUsage;
  return kUsageError;
}

int Fail(const Status& s) {
  std::cerr << "onnxsurgeon: error: " << s.message() << "\n";
  return kModelError;
}

int CmdInspect(const std::vector<std::string>& args) {
  bool json = false;
  std::string input;
  for (const auto& a : args) {
    if (a == "--json") json = true;
    else if (a.starts_with("-")) return Usage("inspect: unknown option '" + a + "'");
    else if (input.empty()) input = a;
    else return Usage("inspect takes one model");
  }
  if (input.empty()) return Usage("inspect: which model?");
  auto model = LoadModel(input);
  if (!model.ok()) return Fail(model.status());
  InspectReport report = Inspect(**model);
  std::cout << (json ? FormatInspectJson(report) : FormatInspectText(report));
  return kOk;
}

// What would block converting the model to opset N: the converter's own logic on a
// copy, nothing written. Exit 0 when nothing blocks, 1 when something does.
int CmdCheck(const std::vector<std::string>& args) {
  bool json = false;
  std::string input, opset_text, target, input_shapes;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") json = true;
    else if (a == "--target" && i + 1 < args.size()) target = args[++i];
    else if (a.starts_with("--target=")) target = a.substr(9);
    else if (a == "--input-shapes" && i + 1 < args.size()) input_shapes = args[++i];
    else if (a.starts_with("--input-shapes=")) input_shapes = a.substr(15);
    else if (a == "--opset" && i + 1 < args.size()) opset_text = args[++i];
    else if (a.starts_with("--opset=")) opset_text = a.substr(8);
    else if (a.starts_with("-")) return Usage("check: unknown option '" + a + "'");
    else if (input.empty()) input = a;
    else return Usage("check takes one model");
  }
  if (!target.empty()) {
    if (!opset_text.empty()) return Usage("check: give --opset or --target, not both");
    if (input.empty()) return Usage("check: which model?");
    return cli::CmdCheckTarget(target, input, input_shapes, json);
  }
  int64_t target_opset;
  if (opset_text.empty() || !absl::SimpleAtoi(opset_text, &target_opset)) return Usage("check: --opset N or --target NAME is required");
  if (input.empty()) return Usage("check: which model?");
  if (target_opset < 7 || target_opset > opset::LatestOpset("")) {
    return Usage(absl::StrCat("check: --opset must be 7..", opset::LatestOpset("")));
  }
  auto model = LoadModel(input);
  if (!model.ok()) return Fail(model.status());
  auto report = opset::CheckOpsetConversion(**model, target_opset);
  if (!report.ok()) return Fail(report.status());
  if (json) {
    JsonWriter w;
    w.BeginObject().Key("model").Value(input).Key("opset").Value(report->source).Key("target").Value(target_opset);
    w.Key("convertible").Bool(report->blockers.empty());
    w.Key("blockers").BeginArray();
    for (const auto& b : report->blockers) {
      w.BeginObject().Key("node").Value(b.node).Key("op").Value(b.op).Key("where").Value(b.where);
      w.Key("from").Value(b.from).Key("to").Value(b.to).Key("why").Value(b.why).EndObject();
    }
    w.EndArray();
    w.Key("steps").BeginObject();
    for (const auto& [k, v] : report->counts) w.Key(k).Value(v);
    w.EndObject().EndObject();
    std::cout << w.str() << "\n";
  } else if (report->blockers.empty()) {
    std::cout << input << ": opset " << report->source << " -> " << target_opset << ": convertible\n";
  } else {
    std::cout << input << ": opset " << report->source << " -> " << target_opset << ": " << report->blockers.size()
              << " node(s) block the conversion\n";
    for (const auto& b : report->blockers) std::cout << "  " << b.Describe() << "\n";
  }
  return report->blockers.empty() ? kOk : kModelError;
}

int CmdPasses() {
  for (const PassInfo& p : AllPasses()) {
    std::cout << p.name << "\n    " << p.summary << "\n";
    for (size_t i = 0; i < p.options.size(); ++i) {
      const auto& o = p.options[i];
      std::cout << "    " << (i == 0 ? "[primary] " : "") << o.name << " (default: "
                << (o.default_value.empty() ? "none" : o.default_value) << "): " << o.help << "\n";
    }
  }
  return kOk;
}

std::string ReportJson(const std::vector<PassRunReport>& reports) {
  JsonWriter w;
  w.BeginArray();
  for (const auto& r : reports) {
    w.BeginObject().Key("pass").Value(r.name).Key("changed").Bool(r.result.changed).Key("seconds").Value(r.seconds);
    w.Key("counts").BeginObject();
    for (const auto& [k, v] : r.result.counts) w.Key(k).Value(v);
    w.EndObject();
    for (auto [key, hist] : {std::pair{"histogram_before", &r.histogram_before}, std::pair{"histogram_after", &r.histogram_after}}) {
      w.Key(key).BeginObject();
      for (const auto& [k, v] : *hist) w.Key(k).Value(v);
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndArray();
  return w.str() + "\n";
}

std::string ReportText(const std::vector<PassRunReport>& reports) {
  std::string out;
  for (const auto& r : reports) {
    absl::StrAppend(&out, r.name, ": ", r.result.changed ? "changed" : "no change", " in ",
                    static_cast<int64_t>(r.seconds * 1e6) / 1e3, " ms");
    for (const auto& [k, v] : r.result.counts) absl::StrAppend(&out, ", ", k, "=", v);
    absl::StrAppend(&out, "\n");
  }
  // Passes report what each did; this line says what the pipeline did as a whole, so a
  // fusion undone by a later decomposition reads as what it is (issue 13, defect 4).
  if (!reports.empty()) {
    const auto& before = reports.front().histogram_before;
    const auto& after = reports.back().histogram_after;
    std::vector<std::string> deltas;
    std::map<std::string, int64_t> all = before;
    for (const auto& [op, n] : after) all.emplace(op, 0);
    for (const auto& [op, unused] : all) {
      auto count = [&](const std::map<std::string, int64_t>& h) { auto it = h.find(op); return it == h.end() ? int64_t{0} : it->second; };
      int64_t d = count(after) - count(before);
      if (d != 0) deltas.push_back(absl::StrCat(op, d > 0 ? " +" : " ", d));
    }
    absl::StrAppend(&out, "net: ", deltas.empty() ? "no op added or removed" : absl::StrJoin(deltas, ", "), "\n");
  }
  return out;
}

int CmdRewrite(const std::vector<std::string>& args) {
  std::string input, output, pipeline_text, report_format, print_after, target, input_shapes;
  bool dry_run = false, verify_each = false, debug_patterns = false, allow_remaining = false, external_data_given = false,
       full_check = true;
  SaveOptions save;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& into) -> bool {
      if (auto eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
        into = a.substr(eq + 1);
        return true;
      }
      if (i + 1 >= args.size()) return false;
      into = args[++i];
      return true;
    };
    auto is = [&](const char* flag) { return a == flag || a.starts_with(std::string(flag) + "="); };
    std::string v;
    if (a == "-o" || is("--output")) {
      if (!value(output)) return Usage("-o needs a path");
    } else if (is("--pass")) {
      if (!value(v)) return Usage("--pass needs a pipeline");
      pipeline_text += (pipeline_text.empty() ? "" : ",") + v;
    } else if (is("--target")) {
      if (!value(target)) return Usage("--target needs a target name (see `onnxsurgeon targets`)");
    } else if (is("--input-shapes")) {
      if (!value(input_shapes)) return Usage("--input-shapes needs NAME:DIMS items");
    } else if (a == "--allow-remaining") {
      allow_remaining = true;
    } else if (is("--external-data")) {
      external_data_given = true;
      if (!value(v)) return Usage("--external-data needs keep, inline or all");
      if (v == "keep") save.external_data = ExternalDataMode::kKeep;
      else if (v == "inline") save.external_data = ExternalDataMode::kInline;
      else if (v == "all") save.external_data = ExternalDataMode::kAll;
      else return Usage("--external-data must be keep, inline or all, not '" + v + "'");
    } else if (is("--external-threshold")) {
      uint64_t n;
      if (!value(v) || !absl::SimpleAtoi(v, &n)) return Usage("--external-threshold needs a byte count");
      save.size_threshold = n;
    } else if (is("--external-location")) {
      if (!value(save.location)) return Usage("--external-location needs a file name");
    } else if (a == "--dry-run") {
      dry_run = true;
    } else if (a == "--verify-each") {
      verify_each = true;
    } else if (a == "--no-full-check") {
      full_check = false;
    } else if (a == "--debug-patterns") {
      debug_patterns = true;
    } else if (is("--report")) {
      if (!value(report_format) || (report_format != "text" && report_format != "json"))
        return Usage("--report must be text or json");
    } else if (is("--print-after")) {
      if (!value(print_after)) return Usage("--print-after needs a pass name");
    } else if (a.starts_with("-") && a != "-") {
      return Usage("unknown option '" + a + "'");
    } else if (input.empty()) {
      input = a;
    } else {
      return Usage("more than one input model ('" + input + "', '" + a + "')");
    }
  }
  if (input.empty()) return Usage("no input model");
  if (output.empty() && !dry_run) return Usage("no output: give -o OUT (or --dry-run)");

  auto pipeline = ParsePipeline(pipeline_text);
  if (!pipeline.ok()) {
    std::cerr << "onnxsurgeon: " << pipeline.status().message() << "\n";
    return kUsageError;
  }
  if (!input_shapes.empty() && target.empty()) return Usage("--input-shapes goes with --target (or use set-input-shape)");
  if (!target.empty()) {
    if (Status s = cli::CheckTargetName(target); !s.ok()) return Usage(std::string(s.message()));
  }
  if (!print_after.empty() && !FindPass(print_after)) return Usage("--print-after: unknown pass '" + print_after + "'");

  auto model = LoadModel(input);
  if (!model.ok()) return Fail(model.status());

  PassManagerOptions pm;
  pm.verify_each = verify_each;
  pm.validate = full_check ? OutputValidation::kFull : OutputValidation::kStructural;
  pm.check_input = [&input] { return CheckModelFile(input); };
  pm.print_after = print_after;
  pm.print = [](const std::string& text) { std::cout << text << "\n"; };
  if (debug_patterns) pm.context.debug_patterns = [](const std::string& line) { std::cerr << "debug-patterns: " << line << "\n"; };
  pm.context.forbidden = std::make_shared<ForbiddenOps>();  // shared by --pass and --target
  auto reports = RunPipeline(**model, *pipeline, pm);
  if (!reports.ok()) return Fail(reports.status());
  if (!target.empty()) {
    Status s = cli::RunTargetStep(**model, target, input_shapes, allow_remaining, pm, external_data_given, save, *reports, std::cerr);
    if (!s.ok()) return Fail(s);
  }
  if (report_format == "json") std::cout << ReportJson(*reports);
  else if (report_format == "text" || dry_run) std::cerr << ReportText(*reports);

  if (dry_run) return kOk;
  Status saved = SaveModel(**model, output, save);
  if (!saved.ok()) return Fail(saved);
  return kOk;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage("no arguments");
  if (args[0] == "--help" || args[0] == "-h") {
    std::cout << kUsage;
    return kOk;
  }
  if (args[0] == "--version") {
    std::cout << "onnxsurgeon " << ONNXSURGEON_VERSION << "\n";
    return kOk;
  }
  if (args[0] == "inspect") return CmdInspect({args.begin() + 1, args.end()});
  if (args[0] == "passes") return CmdPasses();
  if (args[0] == "check") return CmdCheck({args.begin() + 1, args.end()});
  if (args[0] == "targets") return cli::CmdTargets({args.begin() + 1, args.end()});
  return CmdRewrite(args);
}

}  // namespace
}  // namespace onnxsurgeon

int main(int argc, char** argv) {
  int code = 1;
  try {
    code = onnxsurgeon::Main(argc, argv);
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
