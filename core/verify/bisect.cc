#include "core/verify/bisect.h"

#include <algorithm>
#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/pass/pass_manager.h"
#include "core/util/subprocess.h"
#include "core/verify/numeric_check.h"
#include "core/verify/segments.h"

namespace onnxsurgeon {
namespace {

std::string ItemText(const PipelineItem& item) {
  std::vector<std::string> options;
  for (const auto& [k, v] : item.options.given()) options.push_back(absl::StrCat(k, "=", v));
  return options.empty() ? item.info->name : absl::StrCat(item.info->name, "(", absl::StrJoin(options, ","), ")");
}

class Prober {
 public:
  Prober(const Model& input, const BisectOptions& options)
      : input_(input), options_(options), dir_("onnxsurgeon-bisect") {
    compare_ = options.compare;
    compare_.outputs_only = true;
  }

  // Does `candidate` compute something else than the input? Each probe is logged.
  StatusOr<bool> Differs(Model& candidate, const std::string& what, CompareResult* out = nullptr) {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> original, CopySharingWeights(input_));
    return DiffersFrom(*original, candidate, what, out);
  }

  StatusOr<bool> DiffersFrom(Model& original, Model& candidate, const std::string& what, CompareResult* out) {
    CompareOptions o = compare_;
    // The inputs are drawn once (or given) and reused by every probe. A model of other
    // inputs (a reproducer) draws its own from the same seed.
    if (&original == reproducer_input_) {
      o.inputs_file.clear();  // the reproducer's inputs are other values: random from the seed
      o.input_shapes.clear();
    } else {
      if (o.inputs_file.empty() && !inputs_saved_) {
        o.save_inputs = dir_ / "inputs.npz";
      } else if (o.inputs_file.empty()) {
        o.inputs_file = dir_ / "inputs.npz";
      }
    }
    OS_ASSIGN_OR_RETURN(CompareResult r, CompareModels(original, &candidate, o));
    if (!o.save_inputs.empty()) inputs_saved_ = true;
    bool differs = !r.ok();
    log.push_back(absl::StrCat(what, ": ", differs ? "differs" : "same"));
    if (out) *out = std::move(r);
    return differs;
  }

  const Model* reproducer_input_ = nullptr;
  std::vector<std::string> log;

 private:
  const Model& input_;
  const BisectOptions& options_;
  TempDir dir_;
  CompareOptions compare_;
  bool inputs_saved_ = false;
};

// Runs one pipeline item on `model` with a budget (null: none) and the pipeline's
// forbidden ops. Validation is structural only: the bisection compares numbers.
Status RunItem(Model& model, const PipelineItem& item, std::shared_ptr<ForbiddenOps> forbidden, RewriteBudget* budget) {
  PassManagerOptions options;
  options.context.forbidden = std::move(forbidden);
  options.context.budget = budget;
  return RunPipeline(model, {item}, options).status();
}

std::shared_ptr<ForbiddenOps> CopyOf(const std::shared_ptr<ForbiddenOps>& f) {
  return std::make_shared<ForbiddenOps>(*f);
}

// The region a step touched, in `model` (before the step): its nodes that exist there,
// found by their first output (node names are optional).
std::vector<const Node*> RegionNodes(const Model& model, const RewriteStep& step) {
  absl::flat_hash_set<std::string> outputs(step.outputs.begin(), step.outputs.end());
  outputs.erase("");
  std::vector<const Node*> nodes;
  for (Node* n : model.graph().nodes())
    if (outputs.contains(FirstOutputName(*n))) nodes.push_back(n);
  return nodes;
}

// "name", or "(unnamed, output 'y')".
std::string NodeLabel(const std::string& name, const std::string& output) {
  return name.empty() ? absl::StrCat("(unnamed, output '", output, "')") : name;
}

// The region grown by one level: the producers of its inputs and the readers of its outputs.
std::vector<const Node*> Grow(const std::vector<const Node*>& region) {
  absl::flat_hash_set<const Node*> set(region.begin(), region.end());
  std::vector<const Node*> out = region;
  for (const Node* n : region) {
    for (const Value* v : n->inputs())
      if (v && v->producer() && set.insert(v->producer()).second) out.push_back(v->producer());
    for (const Value* v : n->outputs())
      if (v)
        for (const Use& u : v->uses())
          if (u.node->graph() == n->graph() && set.insert(u.node).second) out.push_back(u.node);
  }
  return out;
}

// extract's inputs and outputs for a region of main-graph nodes.
std::pair<std::vector<std::string>, std::vector<std::string>> RegionInterface(const std::vector<const Node*>& region) {
  absl::flat_hash_set<const Node*> set(region.begin(), region.end());
  std::vector<std::string> inputs, outputs;
  absl::flat_hash_set<std::string> seen_in, seen_out;
  for (const Node* n : region) {
    for (const Value* v : n->inputs()) {
      if (!v || v->IsInitializer() || (v->producer() && set.contains(v->producer()))) continue;
      if (v->producer() && v->producer()->Is("Constant")) continue;  // a weight: extract keeps it
      if (seen_in.insert(v->name()).second) inputs.push_back(v->name());
    }
    for (const Value* v : n->outputs()) {
      if (!v) continue;
      bool outside = v->IsGraphOutput();
      for (const Use& u : v->uses()) outside |= !set.contains(u.node);
      if (outside && seen_out.insert(v->name()).second) outputs.push_back(v->name());
    }
  }
  return {inputs, outputs};
}

StatusOr<std::unique_ptr<Model>> Cut(const Model& model, const std::vector<const Node*>& region) {
  auto [inputs, outputs] = RegionInterface(region);
  if (outputs.empty()) return absl::FailedPreconditionError("the region computes nothing used elsewhere");
  // Constant nodes feeding the region come along (extract walks back to them).
  const PassInfo* extract = FindPass("extract");
  if (!extract) return absl::InternalError("the extract pass is not registered");
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> copy, CopySharingWeights(model));
  PassOptions options(extract->options,
                      {{"inputs", absl::StrJoin(inputs, ";")}, {"outputs", absl::StrJoin(outputs, ";")}});
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, CreatePass(*extract, options));
  OS_RETURN_IF_ERROR(pass->Run(*copy, PassContext{}).status());
  return copy;
}

// For a pass with no finer steps (convert-opset, convert-float16, dce, ...): the node of
// `before` (topological order) where the difference enters, as the smallest prefix of the
// main graph that, cut out with `extract` and run through the pass alone, computes
// something else than the same prefix unconverted (binary search; a prefix that cannot be
// cut or converted counts as not showing it). -1 when no prefix shows it.
StatusOr<int64_t> FirstNodeByPrefixes(const Model& before, const std::function<Status(Model&)>& run, Prober& prober,
                                      const std::string& pass) {
  std::vector<const Node*> nodes;
  for (const Node* n : before.graph().nodes()) nodes.push_back(n);
  auto shows = [&](int64_t k) -> bool {
    std::vector<const Node*> prefix(nodes.begin(), nodes.begin() + k);
    auto cut = Cut(before, prefix);
    if (!cut.ok()) return false;
    auto converted = CopySharingWeights(**cut);
    if (!converted.ok() || !run(**converted).ok()) return false;
    prober.reproducer_input_ = cut->get();
    auto differs = prober.DiffersFrom(**cut, **converted, absl::StrCat(pass, " on the first ", k, " node(s)"), nullptr);
    prober.reproducer_input_ = nullptr;
    return differs.ok() && *differs;
  };
  int64_t lo = 0, hi = static_cast<int64_t>(nodes.size());
  if (hi == 0 || !shows(hi)) return -1;
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (shows(mid) ? hi : lo) = mid;
  }
  return hi - 1;
}

}  // namespace

StatusOr<BisectResult> Bisect(const Model& input, const std::vector<PipelineItem>& pipeline,
                              const BisectOptions& options) {
  BisectResult result;
  BisectOptions opts = options;
  if (opts.widen) {
    NumericCheckOptions widened;
    ApproximationTolerance(pipeline, widened, result.tolerance_notes);
    opts.compare.extra_atol = std::max(opts.compare.extra_atol, widened.extra_atol);
    opts.compare.extra_rtol = std::max(opts.compare.extra_rtol, widened.extra_rtol);
    opts.compare.fp16_tolerance |= widened.fp16_tolerance;
  }
  Prober prober(input, opts);

  // The whole pipeline first: nothing to find when the result computes the same.
  auto forbidden = std::make_shared<ForbiddenOps>();
  {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> whole, CopySharingWeights(input));
    PassManagerOptions run;
    run.context.forbidden = std::make_shared<ForbiddenOps>();
    OS_RETURN_IF_ERROR(RunPipeline(*whole, pipeline, run).status());
    OS_ASSIGN_OR_RETURN(result.differs, prober.Differs(*whole, "the whole pipeline"));
  }
  if (!result.differs) {
    result.log = prober.log;
    return result;
  }

  // The first pass whose output differs.
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> before, CopySharingWeights(input));
  for (size_t k = 0; k < pipeline.size(); ++k) {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> after, CopySharingWeights(*before));
    auto forbidden_after = CopyOf(forbidden);
    OS_RETURN_IF_ERROR(RunItem(*after, pipeline[k], forbidden_after, nullptr));
    OS_ASSIGN_OR_RETURN(bool differs, prober.Differs(*after, absl::StrCat("passes 1..", k + 1)));
    if (differs) {
      result.pass_index = static_cast<int>(k);
      result.pass = ItemText(pipeline[k]);
      break;
    }
    before = std::move(after);
    forbidden = forbidden_after;
  }
  if (result.pass_index < 0) {
    // Each pass alone keeps the outputs, the whole pipeline does not: tolerances added up.
    result.note = "no single pass changes the outputs beyond tolerance; their errors add up";
    result.log = prober.log;
    return result;
  }
  const PipelineItem& item = pipeline[result.pass_index];

  // The steps the pass makes, then the first N whose result differs (binary search).
  auto run_steps = [&](int64_t n, RewriteBudget* budget) -> StatusOr<std::unique_ptr<Model>> {
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> m, CopySharingWeights(*before));
    OS_RETURN_IF_ERROR(RunItem(*m, item, CopyOf(forbidden), budget));
    return m;
  };
  {
    RewriteBudget count;
    OS_RETURN_IF_ERROR(run_steps(-1, &count).status());
    result.steps = count.spent();
  }
  int64_t lo = 0, hi = std::max<int64_t>(result.steps, 1);
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    RewriteBudget budget(mid);
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> m, run_steps(mid, &budget));
    OS_ASSIGN_OR_RETURN(bool differs,
                        prober.Differs(*m, absl::StrCat(result.pass, " stopped after ", mid, " step(s)")));
    (differs ? hi : lo) = mid;
  }
  result.step = hi;
  RewriteBudget budget(hi);
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> at, run_steps(hi, &budget));
  result.culprit = budget.last();
  OS_ASSIGN_OR_RETURN(bool confirmed, prober.Differs(*at, absl::StrCat(result.pass, " stopped after ", hi, " step(s)"),
                                                     &result.comparison));
  if (!confirmed) result.note = "the step found does not reproduce on its own (the pass is not deterministic?)";

  // The reproducer: the step's nodes as they were just before it, cut out, grown until the
  // pass shows the difference on the cut model too.
  RewriteBudget previous(hi - 1);
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> pre, run_steps(hi - 1, &previous));
  std::vector<const Node*> region = RegionNodes(*pre, result.culprit);
  if (region.empty() && result.steps <= 1) {
    // No finer steps: find the node by converting prefixes of the model on their own.
    OS_ASSIGN_OR_RETURN(pre, CopySharingWeights(*before));
    auto run = [&](Model& m) { return RunItem(m, item, CopyOf(forbidden), nullptr); };
    OS_ASSIGN_OR_RETURN(int64_t first, FirstNodeByPrefixes(*pre, run, prober, result.pass));
    if (first >= 0) {
      const Node* n = nullptr;
      int64_t i = 0;
      for (const Node* m : pre->graph().nodes())
        if (i++ == first) n = m;
      result.culprit.rule = item.info->name;
      result.culprit.root = n->name();
      result.culprit.nodes = {n->name()};
      result.culprit.outputs = {FirstOutputName(*n)};
      result.found_by_prefixes = true;
      region = {n};
    }
  }
  if (region.empty()) {
    if (result.note.empty()) {
      result.note = absl::StrCat("'", result.culprit.rule, "' has no finer steps; no region to cut out");
    }
  }
  for (int growth = 0; !region.empty() && growth <= opts.max_region_growth; ++growth, region = Grow(region)) {
    auto cut = Cut(*pre, region);
    if (!cut.ok()) {
      result.note = absl::StrCat("cannot cut the step's region out: ", cut.status().message());
      continue;
    }
    OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> rewritten, CopySharingWeights(**cut));
    if (!RunItem(*rewritten, item, CopyOf(forbidden), nullptr).ok()) continue;
    prober.reproducer_input_ = cut->get();
    auto shows =
        prober.DiffersFrom(**cut, *rewritten, absl::StrCat("reproducer of ", region.size(), " node(s)"), nullptr);
    prober.reproducer_input_ = nullptr;
    if (!shows.ok()) continue;
    result.reproducer = *std::move(cut);
    result.reproducer_nodes = static_cast<int64_t>(result.reproducer->graph().num_nodes());
    result.reproduces = *shows;
    if (*shows) {
      result.note = absl::StrCat("running ", result.pass, " on the reproducer (", result.reproducer_nodes,
                                 " nodes) changes its outputs beyond tolerance");
      break;
    }
    result.note = "no cut region reproduces the difference on its own; the last one tried is kept";
  }
  result.log = prober.log;
  return result;
}

Json BisectToJson(const BisectResult& r) {
  Json j;
  j["differs"] = r.differs;
  j["pass"] = r.pass.empty() ? Json() : Json(r.pass);
  j["pass_index"] = r.pass_index;
  j["steps"] = r.steps;
  j["step"] = r.step;
  j["rule"] = r.culprit.rule;
  j["root"] = r.culprit.root;
  j["nodes"] = r.culprit.nodes;
  j["node_outputs"] = r.culprit.outputs;
  j["reproducer_nodes"] = r.reproducer ? Json(r.reproducer_nodes) : Json();
  j["reproduces"] = r.reproduces;
  j["found_by_prefixes"] = r.found_by_prefixes;
  j["note"] = r.note;
  j["tolerance_notes"] = r.tolerance_notes;
  j["log"] = r.log;
  if (r.pass_index >= 0) j["comparison"] = CompareToJson(r.comparison);
  return j;
}

std::string FormatBisectText(const BisectResult& r) {
  std::string out;
  if (!r.differs) {
    absl::StrAppend(&out, "bisect: the pipeline's output is within tolerance of its input: nothing to find\n");
  } else if (r.pass_index < 0) {
    absl::StrAppend(&out, "bisect: the pipeline's output differs, but ", r.note, "\n");
  } else {
    absl::StrAppend(&out, "bisect: pass ", r.pass_index + 1, " '", r.pass, "' changes the outputs, at step ", r.step,
                    " of ", r.steps, "\n");
    const RewriteStep& step = r.culprit;
    auto label = [&](size_t i) { return NodeLabel(step.nodes[i], i < step.outputs.size() ? step.outputs[i] : ""); };
    absl::StrAppend(&out, "  step: ", step.rule.empty() ? "(unnamed)" : step.rule,
                    step.nodes.empty() ? "" : absl::StrCat(" at node '", label(0), "'"), "\n");
    if (step.nodes.size() > 1) {
      std::vector<std::string> labels;
      for (size_t i = 0; i < step.nodes.size(); ++i) labels.push_back(label(i));
      absl::StrAppend(&out, "  nodes it rewrote: ", absl::StrJoin(labels, ", "), "\n");
    }
    for (const TensorComparison& c : r.comparison.rows) {
      if (c.ok()) continue;
      absl::StrAppend(&out, "  output '", c.pair.a, "': max abs ", c.max_abs, ", ", c.off, " of ", c.size,
                      " elements off (atol ", c.atol, ", rtol ", c.rtol, ")\n");
    }
    if (r.found_by_prefixes)
      absl::StrAppend(&out,
                      "  (the pass has no finer steps: the node is where running it on the model's first nodes alone "
                      "first shows the difference)\n");
    if (!r.note.empty()) absl::StrAppend(&out, "  ", r.note, "\n");
  }
  for (const auto& note : r.tolerance_notes) absl::StrAppend(&out, "  tolerance: ", note, "\n");
  absl::StrAppend(&out, "  probes: ", absl::StrJoin(r.log, "; "), "\n");
  return out;
}

}  // namespace onnxsurgeon
