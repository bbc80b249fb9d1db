#include "cli/target_commands.h"

#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/common.h"
#include "cli/input_shapes.h"
#include "core/inspect/json.h"
#include "core/profile/profile.h"
#include "passes/targeting/check.h"
#include "passes/targeting/planner.h"

namespace onnxsurgeon::cli {
namespace {

std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string IfLoopText(const target::Profile& p) {
  std::string i = p.if_rule == target::IfRule::kAny                 ? "If"
                  : p.if_rule == target::IfRule::kConstantCondition ? "If (constant cond.)"
                                                                    : "no If";
  return absl::StrCat(i, ", ", p.loop ? "Loop" : "no Loop");
}

// What a profile's [outputs] forbids, e.g. "no copies of another output, no constants".
std::string OutputLimits(const target::Profile& p) {
  std::vector<std::string> limits;
  if (!p.output_copies) limits.push_back("no copies of another output");
  if (!p.output_input_copies) limits.push_back("no copies of an input");
  if (!p.output_constants) limits.push_back("no constants");
  return absl::StrJoin(limits, ", ");
}

// Every fact of a profile with its source, in one order: what `targets --sources NAME`
// prints and what `targets --markdown` lists under each profile, so the two cannot differ.
struct Fact {
  std::string what;
  std::string source;
};

std::vector<Fact> ProfileFacts(const target::Profile& p) {
  std::vector<Fact> facts;
  auto fact = [&](std::string what, const std::string& source) {
    facts.push_back({std::move(what), source.empty() ? "(no source: the profile does not state it)" : source});
  };
  fact(absl::StrCat("opset ", p.opset_min, "-", p.opset_max), p.opset_source);
  if (p.ir_max >= 0) fact(absl::StrCat("IR version <= ", p.ir_max), p.ir_source);
  fact(absl::StrCat("LayerNorm ", target::FormName(p.layernorm)), p.layernorm_source);
  fact(absl::StrCat("GELU ", target::FormName(p.gelu)), p.gelu_source);
  fact(p.erf ? "Erf supported" : "no Erf", p.erf_source);
  fact(absl::StrCat("ScatterND reduction: ", target::ScatterReductionName(p.scatternd_reduction)), p.scatternd_source);
  fact(IfLoopText(p), p.control_flow_source);
  fact(absl::StrCat(p.static_shapes ? "static input shapes needed" : "dynamic shapes accepted",
                    p.max_batch > 0 ? absl::StrCat(", batch at most ", p.max_batch) : ""),
       p.shapes_source);
  if (p.simplify_first) fact("plan: simplify first", p.plan_source);
  fact(absl::StrCat("int64: ", p.int64), p.int64_source);
  fact(p.external_data ? "external data accepted" : "weights must be inline", p.external_data_source);
  if (p.value_info_everywhere) fact("value_info on every tensor", p.value_info_source);
  if (!p.output_copies || !p.output_input_copies || !p.output_constants)
    fact(absl::StrCat("graph outputs: ", OutputLimits(p)), p.outputs_source);
  if (!p.qdq.empty())
    fact(absl::StrCat("QDQ models: Q/DQ pairs ", p.qdq == "consume" ? "consumed (int8 compute from the model's scales)"
                                                 : p.qdq == "dequantize" ? "run in float"
                                                                         : "refused"),
         p.qdq_source);
  if (p.float_block_weights) fact("block-quantized contrib ops lowered with float weights", p.qdq_source);
  if (p.ml_stated)
    fact(absl::StrCat("ai.onnx.ml ops: ", p.ml_ops ? "yes" : "no", ", string tensors: ", p.strings ? "yes" : "no",
                      ", sequences/maps: ", p.sequences ? "yes" : "no"),
         p.ml_types_source);
  fact(absl::StrCat("custom domains: ", p.custom_domains ? "yes" : "no",
                    ", local functions: ", p.local_functions ? "yes" : "no"),
       p.custom_source);
  for (const auto& m : p.missing) {
    fact(absl::StrCat("lacks ", absl::StrJoin(m.ops, ", "), m.when.empty() ? "" : absl::StrCat(" (when ", m.when, ")")),
         m.source);
  }
  return facts;
}

}  // namespace

std::string GroupedFindings(const std::vector<target::Finding>& findings, const std::string& indent) {
  // Groups in order of first appearance, keyed by the fact and what --target does about it.
  std::vector<std::vector<const target::Finding*>> groups;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const target::Finding& f : findings) {
    auto [it, added] = index.try_emplace({f.fact, f.fix}, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(&f);
  }
  std::string out;
  for (const auto& group : groups) {
    const target::Finding& first = *group.front();
    absl::StrAppend(&out, indent, first.fact, ": ", group.size(), group.size() == 1 ? " place" : " places", " -> ",
                    first.fix, "\n", indent, "    source: ", first.source, "\n");
    for (const target::Finding* f : group) {
      std::string head =
          f->node.empty() ? f->where : absl::StrCat(f->op.empty() ? "" : f->op + " ", "'", f->node, "' in ", f->where);
      absl::StrAppend(&out, indent, "    ", head, ": ", f->reason, "\n");
    }
  }
  return out;
}

std::string TargetsMarkdown() {
  std::string out =
      "| target | versions | ai.onnx opset | IR max | LayerNorm | GELU | Erf | ScatterND reduction | If / Loop | "
      "dynamic shapes | weights | custom ops / functions |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const target::Profile& p : target::BuiltinProfiles()) {
    absl::StrAppend(&out, "| `", p.name, "` | ", Cell(p.versions), " | ", p.opset_min, "-", p.opset_max, " | ",
                    p.ir_max >= 0 ? absl::StrCat(p.ir_max) : "-", " | ",
                    p.layernorm == target::Form::kOp ? "op" : "decomposed", " | ",
                    p.gelu == target::Form::kOp ? "op (opset >= 20)" : "decomposed", " | ", p.erf ? "yes" : "rewritten",
                    " | ", target::ScatterReductionName(p.scatternd_reduction), " | ", IfLoopText(p), " | ",
                    p.static_shapes ? "no (--input-shapes)" : "yes",
                    p.max_batch > 0 ? absl::StrCat(", batch <= ", p.max_batch) : "", " | ",
                    p.external_data ? "external ok" : "inline", " | ", p.custom_domains ? "yes" : "no", " / ",
                    p.local_functions ? "yes" : "no", " |\n");
  }
  absl::StrAppend(&out, "\nSources, per target and fact (`onnxsurgeon targets --sources NAME` prints them too):\n");
  for (const target::Profile& p : target::BuiltinProfiles()) {
    absl::StrAppend(&out, "\n### `", p.name, "`: ", p.title, "\n\n");
    if (!p.notes.empty()) absl::StrAppend(&out, p.notes, "\n\n");
    for (const Fact& f : ProfileFacts(p)) absl::StrAppend(&out, "- ", f.what, ": ", f.source, "\n");
  }
  return out;
}

Status CheckTargetName(const std::string& target) { return target::LoadTarget(target).status(); }

int CmdTargets(const std::vector<std::string>& args) {
  CLI::App app{"The target profiles: what each runtime accepts, with sources.", "onnxsurgeon targets"};
  bool markdown = false, conditions = false;
  std::string sources;
  app.add_flag("--markdown", markdown, "the table of every built-in profile, as markdown");
  app.add_option("--sources", sources, "every fact of profile NAME (or a .toml file) with its source");
  app.add_flag("--conditions", conditions,
               "the conditions a [[missing]] fact's `when` may use (with --markdown: as docs/targets.md lists them)");
  if (auto code = ParseArguments(app, "targets", args)) return *code;
  if (conditions) {
    std::cout << target::ConditionsText(markdown);
    return kOk;
  }
  if (markdown) {
    std::cout << TargetsMarkdown();
    return kOk;
  }
  if (!sources.empty()) {
    auto compiled = target::LoadTarget(sources);
    if (!compiled.ok()) {
      std::cerr << "onnxsurgeon: error: " << OneLine(std::string(compiled.status().message())) << "\n";
      return kModelError;
    }
    // The facts as the profile states them (as --markdown lists them); compiling may add
    // facts derived from one key ([quantization] qdq = "refuse"), which that key's line says.
    auto stated = target::LoadProfile(sources);
    if (!stated.ok()) {
      std::cerr << "onnxsurgeon: error: " << OneLine(std::string(stated.status().message())) << "\n";
      return kModelError;
    }
    const target::Profile* p = &*stated;
    std::cout << p->name << ": " << p->title << " (" << p->versions << ")\n";
    if (!p->notes.empty()) std::cout << p->notes << "\n";
    for (const Fact& f : ProfileFacts(*p)) std::cout << "  " << f.what << ": " << f.source << "\n";
    return kOk;
  }
  for (const target::Profile& p : target::BuiltinProfiles()) {
    std::cout << p.name << std::string(p.name.size() < 14 ? 14 - p.name.size() : 1, ' ') << p.versions << "\n    "
              << p.title << "\n";
  }
  return kOk;
}

StatusOr<BackendCheckResult> BackendCheckTarget(const std::string& reference_path, Model& model,
                                                const std::string& target, const BackendCheckOptions& options) {
  OS_ASSIGN_OR_RETURN(target::CompiledProfile compiled, target::LoadTarget(target));
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> reference, LoadModel(reference_path));
  return RunBackendCheck(compiled.profile.name, *reference, model, options);
}

namespace {

// check --target NAME --probe: the backend, not the profile.
int ProbeTarget(const target::Profile& profile, const std::string& input, const std::string& input_shapes, bool json) {
  auto model = LoadModel(input);
  if (!model.ok()) {
    std::cerr << "onnxsurgeon: error: " << OneLine(std::string(model.status().message())) << "\n";
    return kModelError;
  }
  BackendCheckOptions options;
  if (!input_shapes.empty()) {
    auto specs = ParseInputShapeArgs({input_shapes});
    if (!specs.ok()) return UsageError("check", std::string(specs.status().message()));
    auto resolved = ResolveInputShapes(*specs, **model);
    if (!resolved.ok()) return UsageError("check", std::string(resolved.status().message()));
    options.input_shapes = *std::move(resolved);
  }
  auto reference = LoadModel(input);
  if (!reference.ok()) return ModelError(reference.status());
  auto result = RunBackendCheck(profile.name, **reference, **model, options);
  if (!result.ok()) {
    std::cerr << "onnxsurgeon: error: check --probe: " << OneLine(std::string(result.status().message())) << "\n";
    const bool missing = absl::IsFailedPrecondition(result.status()) || absl::IsNotFound(result.status());
    return missing ? kUsageError : kModelError;
  }
  if (json) {
    Json outputs = Json::array();
    for (const TensorComparison& c : result->rows) {
      outputs.push_back({{"name", c.pair.a},
                         {"max_abs", c.max_abs},
                         {"max_rel", c.max_rel},
                         {"share_off", c.share_off},
                         {"problem", c.problem}});
    }
    Json j;
    j["model"] = input;
    j["target"] = profile.name;
    j["backend"] = result->backend;
    j["accepted"] = result->ok();
    j["refused"] = result->refused;
    j["outputs"] = outputs;
    std::cout << DumpJson(j);
  } else {
    std::cout << input << ": target " << profile.name << " (probed): "
              << (result->ok()              ? "accepted"
                  : result->refused.empty() ? "runs, but differs"
                                            : "refused")
              << "\n  " << FormatBackendCheck(*result);
  }
  return result->ok() ? kOk : kModelError;
}

}  // namespace

int CmdCheckTarget(const std::string& name, const std::string& input, const std::string& input_shapes, bool json,
                   bool probe) {
  auto compiled = target::LoadTarget(name);
  if (!compiled.ok()) {
    std::cerr << "onnxsurgeon: check: " << OneLine(std::string(compiled.status().message())) << "\n";
    return kUsageError;
  }
  if (probe) return ProbeTarget(compiled->profile, input, input_shapes, json);
  const target::Profile* profile = &compiled->profile;
  auto model = LoadModel(input);
  if (!model.ok()) {
    std::cerr << "onnxsurgeon: error: " << OneLine(std::string(model.status().message())) << "\n";
    return kModelError;
  }
  target::CheckOptions options = target::CheckOptionsFor(input_shapes);
  target::CheckReport report = target::CheckTarget(**model, *compiled, options);
  if (json) {
    std::cout << target::CheckReportJson(report, *profile, input);
  } else {
    if (report.blockers.empty()) {
      std::cout << input << ": target " << profile->name << ": accepted\n";
    } else {
      size_t fixable = 0;
      for (const auto& f : report.blockers) fixable += f.fixable();
      std::cout << input << ": target " << profile->name << ": " << report.blockers.size() << " blocker(s), " << fixable
                << " removed by --target " << profile->name << "\n";
      std::cout << GroupedFindings(report.blockers, "  ");
    }
    if (!report.warnings.empty()) {
      std::cout << "  warnings (" << report.warnings.size() << "):\n" << GroupedFindings(report.warnings, "    ");
    }
  }
  return report.blockers.empty() ? kOk : kModelError;
}

bool TargetVerdict(const Model& model, const std::string& name, const std::string& input_shapes, std::string& text) {
  auto profile = target::LoadTarget(name);
  if (!profile.ok()) {
    text = std::string(profile.status().message());
    return false;
  }
  target::CheckOptions options = target::CheckOptionsFor(input_shapes);
  target::CheckReport report = target::CheckTarget(model, *profile, options);
  text.clear();
  for (const auto& f : report.blockers) absl::StrAppend(&text, f.Describe(), "\n");
  for (const auto& f : report.warnings) absl::StrAppend(&text, "warning: ", f.Describe(), "\n");
  return report.blockers.empty();
}

Status RunTargetStep(Model& model, const std::string& name, const std::string& input_shapes, bool allow_remaining,
                     const PassManagerOptions& pm, bool external_data_given, SaveOptions& save,
                     std::vector<PassRunReport>& reports, std::ostream& log) {
  OS_ASSIGN_OR_RETURN(target::CompiledProfile compiled, target::LoadTarget(name));
  const target::Profile& profile = compiled.profile;
  if (!profile.external_data && external_data_given && save.external_data == ExternalDataMode::kAll) {
    return absl::InvalidArgumentError(absl::StrCat("target ", profile.name, " needs the weights inline (",
                                                   profile.external_data_source,
                                                   "); --external-data all contradicts it"));
  }
  target::TargetOptions options;
  options.input_shapes = input_shapes;
  options.allow_remaining = allow_remaining;
  OS_ASSIGN_OR_RETURN(target::TargetRun run, target::RunTarget(model, compiled, options, pm));
  if (run.plan.empty())
    log << "target " << profile.name << ": nothing to do, the model already satisfies the profile\n";
  else log << "target " << profile.name << ": ran " << absl::StrJoin(run.plan, ",") << "\n";
  if (!run.remaining.blockers.empty()) {
    log << "target " << profile.name << ": still blocks (" << run.remaining.blockers.size() << "):\n"
        << GroupedFindings(run.remaining.blockers, "  ");
  }
  for (auto& r : run.reports) reports.push_back(std::move(r));
  if (!profile.external_data) save.external_data = ExternalDataMode::kInline;
  return absl::OkStatus();
}

}  // namespace onnxsurgeon::cli
