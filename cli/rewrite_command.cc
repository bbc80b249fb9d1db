// onnxsurgeon [--pass PIPELINE] [options] IN -o OUT: load, run the pipeline, optionally
// check the result numerically, write it atomically, and summarise what changed.
// onnxsurgeon report [--pass PIPELINE] [options] IN -o REPORT.html [--save OUT]: the same
// run, shown as one HTML page (core/report/html_report.h).
#include <chrono>
#include <iostream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "cli/progress.h"
#include "cli/target_commands.h"
#include "cli/target_search.h"
#include "core/inspect/inspect.h"
#include "core/inspect/json.h"
#include "core/inspect/model_stats.h"
#include "core/interop/onnx_interop.h"
#include "core/io/atomic_file.h"
#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "core/pass/validate.h"
#include "core/report/html_report.h"
#include "core/util/subprocess.h"
#include "core/util/suggest.h"
#include "core/verify/calibrate.h"
#include "core/verify/numeric_check.h"

namespace onnxsurgeon::cli {
namespace {

struct RewriteArgs {
  std::string target, input, output, save_model, report_format, print_after, external_data = "keep", size_limit;
  std::vector<std::string> calibrate;  // .npz input sets for convert-float16's ranges
  std::vector<std::string> passes, input_shapes;
  bool dry_run = false, verify_each = false, debug_patterns = false, quiet = false, skip_fuse_bn = false,
       no_full_check = false, save_as_external_data = false, allow_remaining = false, external_data_given = false,
       search = false;
  double search_budget = 600;  // seconds, for --search
  int check_runs = 0;          // 0: no --check
  int backend_check_runs = 0;  // 0: no --backend-check
  uint64_t seed = 0;
  SaveOptions save;
};

// CLI11 cannot express "--check [N]" next to a positional model, nor onnx-simplifier's
// "--input-shapes a:1,3 b:1,4 model.onnx"; spell both as --flag=value first.
std::vector<std::string> Normalize(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto all_digits = [](const std::string& s) {
      return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
    };
    if (a == "--check" || a == "--backend-check") {
      bool has_n = i + 1 < args.size() && all_digits(args[i + 1]);
      out.push_back(a + "=" + (has_n ? args[++i] : std::string(a == "--check" ? "3" : "1")));
    } else if (a == "--input-shapes" || a == "--overwrite-input-shape") {
      size_t start = out.size();
      while (i + 1 < args.size() && LooksLikeInputShape(args[i + 1])) out.push_back(a + "=" + args[++i]);
      if (out.size() == start) out.push_back(a);  // CLI11 reports the missing value
    } else {
      out.push_back(a);
    }
  }
  return out;
}

// "4096", "1.5KB", "2M", "1GiB" -> bytes.
std::optional<uint64_t> ParseSize(const std::string& text) {
  size_t end = text.find_first_not_of("0123456789.");
  double number;
  if (!absl::SimpleAtod(text.substr(0, end), &number) || number < 0) return std::nullopt;
  std::string unit = end == std::string::npos ? "" : absl::AsciiStrToUpper(text.substr(end));
  if (unit.ends_with("IB")) unit.erase(unit.size() - 2, 1);
  static const std::pair<const char*, double> kUnits[] = {
      {"", 1},          {"B", 1},          {"K", 1024.0},       {"KB", 1024.0},
      {"M", 1048576.0}, {"MB", 1048576.0}, {"G", 1073741824.0}, {"GB", 1073741824.0}};
  for (const auto& [name, scale] : kUnits)
    if (unit == name) return static_cast<uint64_t>(number * scale);
  return std::nullopt;
}

// Sets key=value (appending to a ';' list when `append`) on every pipeline item named `pass`.
int SetOnPasses(std::vector<PipelineItem>& pipeline, const std::vector<std::string>& passes, const std::string& key,
                const std::string& value, bool append) {
  int n = 0;
  for (PipelineItem& item : pipeline) {
    if (std::find(passes.begin(), passes.end(), item.info->name) == passes.end()) continue;
    std::map<std::string, std::string> values = item.options.given();
    std::string k = item.info->name == "fold-constants" && key == "size-limit" ? "max-size" : key;
    std::string& v = values[k];
    v = append && !v.empty() ? v + ";" + value : value;
    item.options = PassOptions(item.info->options, std::move(values));
    ++n;
  }
  return n;
}

std::string ReportJson(const std::vector<PassRunReport>& reports) {
  Json out = Json::array();
  for (const auto& r : reports) {
    Json j;
    j["pass"] = r.name;
    j["changed"] = r.result.changed;
    j["seconds"] = r.seconds;
    j["counts"] = Json(r.result.counts);
    j["histogram_before"] = Json(r.histogram_before);
    j["histogram_after"] = Json(r.histogram_after);
    if (r.quantization_before.any() || r.quantization_after.any()) {
      auto q = [](const QuantizationStats& s) {
        return Json{{"quantize_linear", s.q},
                    {"dequantize_linear", s.dq},
                    {"qoperator", s.qoperator},
                    {"quantized_weight_bytes", s.weight_bytes}};
      };
      j["quantization"] = {{"before", q(r.quantization_before)}, {"after", q(r.quantization_after)}};
    }
    out.push_back(std::move(j));
  }
  return DumpJson(out);
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
  // fusion undone by a later decomposition reads as what it is.
  if (!reports.empty()) {
    const auto& before = reports.front().histogram_before;
    const auto& after = reports.back().histogram_after;
    std::vector<std::string> deltas;
    std::map<std::string, int64_t> all = before;
    for (const auto& [op, n] : after) all.emplace(op, 0);
    for (const auto& [op, unused] : all) {
      auto count = [&](const std::map<std::string, int64_t>& h) {
        auto it = h.find(op);
        return it == h.end() ? int64_t{0} : it->second;
      };
      int64_t d = count(after) - count(before);
      if (d != 0) deltas.push_back(absl::StrCat(op, d > 0 ? " +" : " ", d));
    }
    absl::StrAppend(&out, "net: ", deltas.empty() ? "no op added or removed" : absl::StrJoin(deltas, ", "), "\n");
    const QuantizationStats &qa = reports.front().quantization_before, &qb = reports.back().quantization_after;
    if (qa.any() || qb.any()) {
      absl::StrAppend(&out, "quantization: Q/DQ ", qa.q, "/", qa.dq, " -> ", qb.q, "/", qb.dq, ", QOperator ",
                      qa.qoperator, " -> ", qb.qoperator, ", quantized weight bytes ", qa.weight_bytes, " -> ",
                      qb.weight_bytes, "\n");
    }
  }
  return out;
}

void DefineOptions(CLI::App& app, RewriteArgs& a, bool html) {
  if (html) {
    app.add_option("-o,--output", a.output, "where to write the HTML report")->required();
    app.add_option("--save", a.save_model, "also write the rewritten model here");
  } else {
    app.add_option("-o,--output", a.output, "where to write the result (written atomically)");
  }
  app.add_option("--pass", a.passes, "passes to run (repeatable); none means a load -> save round trip")
      ->allow_extra_args(false);
  app.add_option("--target", a.target,
                 "then make the model what target NAME accepts (a profile from `onnxsurgeon targets`, or a .toml "
                 "file); prints the plan");
  app.add_flag("--allow-remaining", a.allow_remaining, "with --target: write the result although blockers remain");
  app.add_option("--check,--check-n", a.check_runs,
                 "[N] run the original and the result in onnxruntime on N random inputs (default 3) and "
                 "compare every output; on a mismatch exit 1 and write nothing")
      ->check(CLI::Range(1, 1000));
  app.add_option("--backend-check", a.backend_check_runs,
                 "[N] with --target: run the target's real backend on the result and onnxruntime on the original "
                 "on N random input sets (default 1) and compare every output element by element; when the backend "
                 "refuses or differs exit 1 and write nothing; exit 2 when the backend is not installed")
      ->check(CLI::Range(1, 100));
  if (!html) {
    app.add_flag("--search", a.search,
                 "with --target: try candidate plans in a fixed order (the profile's; simplify first; one opset lower; "
                 "the lowest opset; decompositions; static shapes from --input-shapes) until the target's real backend "
                 "accepts the result and matches onnxruntime (as --backend-check); prints the plan that worked and "
                 "stores it in the model's metadata_props (onnxsurgeon.target_plan); exit 1 and write nothing when "
                 "none works, exit 2 when the backend is not installed");
    app.add_option("--search-budget", a.search_budget,
                   "SECONDS: stop --search after this long (default 600); a backend run is cut off at what is left")
        ->check(CLI::Range(1.0, 86400.0));
  }
  app.add_option("--input-shapes,--overwrite-input-shape", a.input_shapes,
                 "NAME:1,3,320,320 (or a bare 1,3,320,320 for a one-input model): fix input shapes before the "
                 "pipeline (set-input-shape) and for --check")
      ->allow_extra_args(false);
  app.add_option("--seed", a.seed, "random seed for --check (default 0)");
  app.add_flag("--skip-fuse-bn", a.skip_fuse_bn, "simplify without fuse-conv-bn (simplify(skip=fuse-conv-bn))");
  app.add_option("--size-limit,--no-large-tensor", a.size_limit,
                 "SIZE (e.g. 4096, 64KB, 1.5MB): the largest tensor fold-constants (also inside simplify) may create");
  app.add_option("--calibrate", a.calibrate,
                 "FILE.npz (repeatable): measure every float value's range in onnxruntime on these inputs and give "
                 "them to convert-float16 (its ranges= option)")
      ->allow_extra_args(false);
  app.add_option("--external-data", a.external_data,
                 "keep (default: external tensors stay external), inline, or all (tensors >= threshold to one file)")
      ->check(CLI::IsMember({"keep", "inline", "all"}));
  app.add_flag("--save-as-external-data", a.save_as_external_data, "same as --external-data all");
  app.add_option("--external-threshold", a.save.size_threshold,
                 "size threshold for --external-data all (default 1024)");
  app.add_option("--external-location", a.save.location, "file for --external-data all (default OUT.data)");
  app.add_flag("--dry-run", a.dry_run, "run the passes and report, write nothing");
  app.add_option("--report", a.report_format, "per-pass report on stderr (text) or stdout (json)")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_flag("-q,--quiet", a.quiet, "no summary and no progress on stderr");
  app.add_flag("--verify-each", a.verify_each, "run the onnx checker after every pass");
  app.add_flag("--no-full-check", a.no_full_check,
               "skip onnx's full checker on the output (the structural checks still run; docs/reliability.md)");
  app.add_option("--print-after", a.print_after, "print the model as ONNX text after PASS");
  app.add_flag("--debug-patterns", a.debug_patterns, "report every pattern-rule miss and why, on stderr");
  app.add_option("model", a.input, "the model to rewrite");
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  OS_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(path));
  OS_RETURN_IF_ERROR(file->Write(text));
  return file->Commit();
}

// The HTML page for a finished run; the original is loaded again for the before graphs.
Status WriteReport(const RewriteArgs& a, const std::unique_ptr<Model>& model, const RunSummary& summary,
                   const std::vector<PassRunReport>& reports, const std::vector<ReportCheck>& checks,
                   const std::string& pipeline) {
  HtmlReportInput in;
  in.model_name = a.input;
  in.pipeline = pipeline;
  in.before = summary.before;
  in.after = Inspect(*model);
  in.seconds = summary.seconds;
  in.passes = reports;
  in.checks = checks;
  OS_ASSIGN_OR_RETURN(auto original, LoadModel(a.input));
  in.regions = FindRewriteRegions(*original, *model);
  return WriteTextFile(a.output, RenderHtmlReport(in));
}

// --target NAME --search: the first candidate plan the backend accepts (cli/target_search.h)
// replaces `model`; its reports and backend check are the run's. Result kOk, or the exit
// code after printing why (every candidate's failure, or the missing backend).
int RunSearch(RewriteArgs& a, const std::vector<PipelineItem>& pipeline,
              const std::map<std::string, std::vector<int64_t>>& input_shapes, const PassManagerOptions& pm,
              std::unique_ptr<Model>& model, std::vector<PassRunReport>& reports,
              std::optional<BackendCheckResult>& searched) {
  SearchRequest request;
  request.target = a.target;
  request.input = a.input;
  request.user = pipeline;
  request.input_shapes = input_shapes;
  request.allow_remaining = a.allow_remaining;
  request.check.runs = std::max(1, a.backend_check_runs);
  request.check.seed = a.seed;
  request.budget_seconds = a.search_budget;
  request.pm = pm;
  request.external_data_given = a.external_data_given;
  std::ostringstream quiet;  // -q: no progress lines, the failures are listed at the end
  auto found = SearchTargetPlan(request, a.save, a.quiet ? static_cast<std::ostream&>(quiet) : std::cerr);
  if (!found.ok()) {
    const bool missing = absl::IsFailedPrecondition(found.status()) || absl::IsNotFound(found.status());
    std::cerr << "onnxsurgeon: error: --search: " << OneLine(std::string(found.status().message()))
              << "; nothing written\n";
    return missing ? kUsageError : kModelError;
  }
  if (!found->found) {
    std::cerr << "onnxsurgeon: error: --search: no candidate plan for " << a.target
              << " is accepted by its backend and matches onnxruntime; nothing written\n";
    for (const std::string& line : found->tried) std::cerr << "  " << line << "\n";
    return kModelError;
  }
  // The replayable plan on stdout (stderr when stdout carries --report json):
  // onnxsurgeon --pass PLAN IN -o OUT.
  (a.report_format == "json" ? std::cerr : std::cout)
      << "target " << a.target << ": plan that worked: " << (found->plan.empty() ? "(nothing to run)" : found->plan)
      << "\n";
  model = std::move(found->model);
  reports = std::move(found->reports);
  a.save = found->save;
  searched = std::move(found->check);
  return kOk;
}

// What the steps after the pipeline share.
struct RunState {
  RewriteArgs& a;
  bool html;
  std::unique_ptr<Model>& model;
  RunSummary& summary;
  std::chrono::steady_clock::time_point start;
  std::vector<PassRunReport>& reports;
  std::vector<ReportCheck> report_checks;
  Progress& progress;
  const std::map<std::string, std::vector<int64_t>>& input_shapes;
};

// A check failed: with `report`, the page still says where. Result the exit code.
int FailedCheck(RunState& r) {
  if (r.html) {
    r.summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - r.start).count();
    Status s = WriteReport(r.a, r.model, r.summary, r.reports, r.report_checks, absl::StrJoin(r.a.passes, ","));
    if (!s.ok()) return ModelError(s);
  }
  return kModelError;
}

// The run's pipeline from the arguments: the pipeline, the options --skip-fuse-bn,
// --size-limit and --calibrate set on its passes, and the input shapes asked for. Result
// nullopt, or the exit code after printing the usage error.
std::optional<int> PreparePipeline(const CLI::App& app, RewriteArgs& a, const std::string& command,
                                   std::vector<PipelineItem>& pipeline_out, std::optional<TempDir>& calibrate_dir,
                                   InputShapes& shape_specs) {
  if (a.input.empty()) return UsageError(command, "no input model");
  if (a.output.empty() && !a.dry_run) return UsageError(command, "no output: give -o OUT (or --dry-run)");
  a.external_data_given = app.count("--external-data") > 0 || a.save_as_external_data;
  if (a.save_as_external_data) a.external_data = "all";
  a.save.external_data = a.external_data == "inline" ? ExternalDataMode::kInline
                         : a.external_data == "all"  ? ExternalDataMode::kAll
                                                     : ExternalDataMode::kKeep;

  auto pipeline = ParsePipeline(absl::StrJoin(a.passes, ","));
  if (!pipeline.ok()) {
    std::cerr << "onnxsurgeon: " << pipeline.status().message() << "\n";
    return kUsageError;
  }
  if (!a.print_after.empty() && !FindPass(a.print_after)) {
    std::vector<std::string> names;
    for (const PassInfo& p : AllPasses()) names.push_back(p.name);
    return UsageError(command,
                      "--print-after: unknown pass '" + a.print_after + "'" + DidYouMean(a.print_after, names));
  }
  if (a.skip_fuse_bn && SetOnPasses(*pipeline, {"simplify"}, "skip", "fuse-conv-bn", /*append=*/true) == 0) {
    return UsageError(command, "--skip-fuse-bn changes simplify, which the pipeline does not run: add --pass simplify");
  }
  if (!a.size_limit.empty()) {
    auto bytes = ParseSize(a.size_limit);
    if (!bytes)
      return UsageError(command, "--size-limit takes a size such as 4096, 64KB or 1.5MB, not '" + a.size_limit + "'");
    if (SetOnPasses(*pipeline, {"simplify", "fold-constants"}, "size-limit", absl::StrCat(*bytes), false) == 0) {
      return UsageError(command,
                        "--size-limit applies to simplify and fold-constants, which the pipeline does not run");
    }
  }
  if (!a.target.empty()) {
    if (Status s = CheckTargetName(a.target); !s.ok()) return UsageError(command, std::string(s.message()));
  }
  if (!a.calibrate.empty()) {
    calibrate_dir.emplace("onnxsurgeon-ranges");
    std::string ranges = *calibrate_dir / "ranges.txt";
    if (SetOnPasses(*pipeline, {"convert-float16"}, "ranges", ranges, false) == 0)
      return UsageError(command, "--calibrate measures ranges for convert-float16, which the pipeline does not run");
    auto measured = MeasureRanges(a.input, a.calibrate, ranges);
    if (!measured.ok()) {
      std::cerr << "onnxsurgeon: " << measured.status().message() << "\n";
      return 1;
    }
    if (!a.quiet) std::cerr << "calibrate: " << *measured << " value range(s) measured in onnxruntime\n";
  }
  if (a.backend_check_runs > 0 && a.target.empty()) {
    return UsageError(command, "--backend-check needs --target NAME: it runs that target's backend");
  }
  if (a.search && a.target.empty()) return UsageError(command, "--search needs --target NAME: it asks that backend");
  // `report` has no --search (the option exists only in the rewrite command).
  const CLI::Option* budget = app.get_option_no_throw("--search-budget");
  if (!a.search && budget && budget->count() > 0) return UsageError(command, "--search-budget needs --search");
  if (!a.input_shapes.empty()) {
    auto specs = ParseInputShapeArgs(a.input_shapes);
    if (!specs.ok()) return UsageError(command, std::string(specs.status().message()));
    shape_specs = *std::move(specs);
  }
  pipeline_out = *std::move(pipeline);
  return std::nullopt;
}

// --check and --backend-check (or the backend check --search made): each result joins the
// report's checks. Result kOk, or the exit code after printing the difference.
int CheckResult(RunState& r, const std::vector<PipelineItem>& pipeline,
                const std::optional<BackendCheckResult>& searched) {
  if (r.a.check_runs > 0) {
    NumericCheckOptions check;
    check.runs = r.a.check_runs;
    check.seed = r.a.seed;
    check.input_shapes = r.input_shapes;
    std::vector<std::string> notes;
    ApproximationTolerance(pipeline, check, notes);
    r.progress.Begin("checking with onnxruntime");
    auto result = RunNumericCheck(r.a.input, *r.model, check);
    r.progress.End();
    if (!result.ok()) return ModelError(result.status());
    result->tolerance_notes = notes;
    r.report_checks.push_back({"numeric check in " + result->runtime, result->ok, FormatNumericCheck(*result)});
    if (!result->ok) {
      std::cerr << FormatNumericCheck(*result);
      std::cerr << "onnxsurgeon: error: --check: "
                << (result->error.empty() ? "the result differs from " + r.a.input : "could not compare the models")
                << (r.html ? "; the report says where, the model is not written\n" : "; nothing written\n");
      return FailedCheck(r);
    }
    if (!r.a.quiet) std::cerr << FormatNumericCheck(*result);
  }

  if (searched) {
    r.report_checks.push_back({"backend check on " + searched->backend, true, FormatBackendCheck(*searched)});
    if (!r.a.quiet) std::cerr << FormatBackendCheck(*searched);
  } else if (r.a.backend_check_runs > 0) {
    BackendCheckOptions check;
    check.runs = r.a.backend_check_runs;
    check.seed = r.a.seed;
    check.input_shapes = r.input_shapes;
    r.progress.Begin("checking on the " + r.a.target + " backend");
    auto result = BackendCheckTarget(r.a.input, *r.model, r.a.target, check);
    r.progress.End();
    if (!result.ok()) {
      const bool missing = absl::IsFailedPrecondition(result.status()) || absl::IsNotFound(result.status());
      std::cerr << "onnxsurgeon: error: --backend-check: " << OneLine(std::string(result.status().message()))
                << "; nothing written\n";
      return missing ? kUsageError : kModelError;
    }
    r.report_checks.push_back({"backend check on " + result->backend, result->ok(), FormatBackendCheck(*result)});
    if (!result->ok()) {
      std::cerr << FormatBackendCheck(*result);
      std::cerr << "onnxsurgeon: error: --backend-check: " << r.a.target << " "
                << (result->refused.empty() ? "computes the result differently from onnxruntime on " + r.a.input
                                            : "refuses the result")
                << (r.html ? "; the report says where, the model is not written\n" : "; nothing written\n");
      return FailedCheck(r);
    }
    if (!r.a.quiet) std::cerr << FormatBackendCheck(*result);
  }

  return kOk;
}

// Both commands: `html` makes -o the report and --save the model.
int Run(const std::vector<std::string>& raw_args, bool html) {
  const std::string command = html ? "report" : "";
  CLI::App app{html ? "Runs a pipeline and shows what it did as one self-contained HTML page."
                    : "Rewrites an ONNX model with a pipeline of passes.",
               html ? "onnxsurgeon report" : "onnxsurgeon"};
  RewriteArgs a;
  DefineOptions(app, a, html);
  if (auto code = ParseArguments(app, command, Normalize(raw_args))) return *code;
  std::string model_output = html ? a.save_model : a.output;
  bool write_model = !model_output.empty() && !a.dry_run;
  std::vector<PipelineItem> parsed;
  std::optional<TempDir> calibrate_dir;  // lives until the pipeline has run
  InputShapes shape_specs;
  if (auto code = PreparePipeline(app, a, command, parsed, calibrate_dir, shape_specs)) return *code;
  auto* pipeline = &parsed;

  auto start = std::chrono::steady_clock::now();
  Progress progress(!a.quiet);
  progress.Begin("loading " + a.input);
  auto model = LoadModel(a.input);
  progress.End();
  if (!model.ok()) return ModelError(model.status());
  // Refuse an output that is an input's file, a folder or in no folder before the passes run.
  if (write_model) {
    if (Status target = CheckSaveTarget(**model, model_output, a.save); !target.ok()) return ModelError(target);
  }

  std::map<std::string, std::vector<int64_t>> input_shapes;
  if (!shape_specs.empty()) {
    auto resolved = ResolveInputShapes(shape_specs, **model);
    if (!resolved.ok()) return UsageError(command, std::string(resolved.status().message()));
    input_shapes = *std::move(resolved);
  }
  if (!input_shapes.empty() && !a.search) {  // --search fixes them only in the candidates that need it
    PipelineItem set_shapes;
    set_shapes.info = FindPass("set-input-shape");
    set_shapes.options = PassOptions(set_shapes.info->options, {{"shapes", SetInputShapeValue(input_shapes)}});
    pipeline->insert(pipeline->begin(), std::move(set_shapes));
  }

  RunSummary summary;
  summary.input = a.input;
  if (!a.quiet || html) {
    summary.before = Inspect(**model, /*check_schemas=*/false);
    summary.file_before = ModelFileBytes(a.input, summary.before);
  }

  PassManagerOptions pm;
  pm.verify_each = a.verify_each;
  pm.validate = a.no_full_check ? OutputValidation::kStructural : OutputValidation::kFull;
  pm.check_input = [&a] { return CheckModelFile(a.input); };
  pm.print_after = a.print_after;
  pm.print = [](const std::string& text) { std::cout << text << "\n"; };
  if (a.debug_patterns) {
    pm.context.debug_patterns = [](const std::string& line) { std::cerr << "debug-patterns: " << line << "\n"; };
  }
  pm.context.nodes_visited = progress.nodes_visited();
  pm.context.forbidden = std::make_shared<ForbiddenOps>();  // shared by --pass and --target
  pm.on_pass_begin = [&](const PipelineItem& item) { progress.Begin(item.info->name); };
  pm.on_pass_end = [&](const PassRunReport&) { progress.End(); };
  StatusOr<std::vector<PassRunReport>> reports = std::vector<PassRunReport>{};
  std::optional<BackendCheckResult> searched;  // --search: the winning candidate's backend check
  if (a.search) {
    // Its own progress: one line per candidate (the passes' steps still show).
    if (int code = RunSearch(a, *pipeline, input_shapes, pm, *model, *reports, searched); code != kOk) return code;
  } else {
    reports = RunPipeline(**model, *pipeline, pm);
  }
  progress.End();
  if (!reports.ok()) return ModelError(reports.status());
  if (!a.target.empty() && !a.search) {
    Status s = RunTargetStep(**model, a.target, SetInputShapeValue(input_shapes), a.allow_remaining, pm,
                             a.external_data_given, a.save, *reports, std::cerr);
    progress.End();
    if (!s.ok()) return ModelError(s);
  }
  if (a.report_format == "json") std::cout << ReportJson(*reports);
  else if (a.report_format == "text" || (a.dry_run && !a.quiet)) std::cerr << ReportText(*reports);

  RunState state{a, html, *model, summary, start, *reports, {}, progress, input_shapes};
  if (int code = CheckResult(state, *pipeline, searched); code != kOk) return code;
  std::vector<ReportCheck>& report_checks = state.report_checks;

  if (write_model) {
    progress.Begin("saving " + model_output);
    Status saved = SaveModel(**model, model_output, a.save);
    progress.End();
    if (!saved.ok()) return ModelError(saved);
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (html) {
    Status checked = CheckModel(**model, /*full_check=*/true);
    report_checks.push_back({"onnx checker (full) on the result", checked.ok(), std::string(checked.message())});
    if (!a.target.empty()) {
      std::string detail;
      bool accepted = TargetVerdict(**model, a.target, SetInputShapeValue(input_shapes), detail);
      report_checks.push_back({"target " + a.target + (accepted ? ": accepted" : ": still refuses"), accepted, detail});
    }
    Status s = WriteReport(a, *model, summary, *reports, report_checks, absl::StrJoin(a.passes, ","));
    if (!s.ok()) return ModelError(s);
  }
  if (!a.quiet) {
    summary.output = write_model ? model_output : "";
    summary.after = Inspect(**model, /*check_schemas=*/false);
    if (write_model) summary.file_after = ModelFileBytes(model_output, summary.after);
    for (const auto& r : *reports)
      if (r.result.changed) summary.changed_passes.push_back(r.name);
    std::cerr << FormatRunSummary(summary);
    if (html) std::cerr << "report: " << a.output << "\n";
  }
  return kOk;
}

}  // namespace

std::string RewriteHelp() {
  CLI::App app{"", "onnxsurgeon"};
  RewriteArgs a;
  DefineOptions(app, a, false);
  return app.help();
}

int RunRewrite(const std::vector<std::string>& args) { return Run(args, false); }
int RunReport(const std::vector<std::string>& args) { return Run(args, true); }

}  // namespace onnxsurgeon::cli
