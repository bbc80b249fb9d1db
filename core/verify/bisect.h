// `onnxsurgeon bisect --pass PIPELINE IN`: when a pipeline's output computes something else
// than its input (judged as --check judges: every output, per-dtype tolerance), which step
// made it so? First the pass: the pipeline runs pass by pass, each result compared with
// the input. Then the step within that pass, by binary search on a RewriteBudget
// (core/rewrite/budget.h): the pass runs again stopped after N steps (rule applications,
// folded nodes; one step for a pass without finer ones) until the first N whose result
// differs. For a pass with no finer steps (convert-opset, convert-float16), the node is the
// last of the shortest prefix of the model that, cut out and run through the pass alone,
// differs. The step's rule and the nodes it rewrote are named, and a reproducer is cut
// out of the model just before that step (the `extract` pass around those nodes, grown a
// little until running the pass on it shows the difference again). Deterministic: the
// inputs are drawn once from the seed, and passes are deterministic.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/ir/model.h"
#include "core/pass/pipeline.h"
#include "core/rewrite/budget.h"
#include "core/verify/compare.h"

namespace onnxsurgeon {

struct BisectOptions {
  CompareOptions compare;     // inputs, shapes, seed (outputs_only is set by bisect)
  bool widen = true;          // widen tolerances for approximating passes, as --check does
  int max_region_growth = 3;  // times the reproducer's region may grow by its neighbours
};

struct BisectResult {
  bool differs = false;               // the whole pipeline's output differs from the input
  std::string pass;                   // the first pass whose output differs ("" when none)
  int pass_index = -1;                // its index in the pipeline
  int64_t steps = 0;                  // steps that pass makes in all
  int64_t step = 0;                   // the first step after which it differs (1-based)
  RewriteStep culprit;                // that step: rule, root node, nodes it rewrote
  CompareResult comparison;           // the input against the model right after that step
  std::unique_ptr<Model> reproducer;  // the region before the step (null: none could be cut)
  bool reproduces = false;            // running the pass on the reproducer shows a difference
  bool found_by_prefixes = false;     // a pass without finer steps: the node found by cutting prefixes
  int64_t reproducer_nodes = 0;
  std::string note;              // why there is no reproducer, or what it shows
  std::vector<std::string> log;  // each probe and its verdict, in order
  std::vector<std::string> tolerance_notes;
};

// Given the input model, a pipeline and options. Execute runs copies of the model through
// the pipeline (the input is left as it is) and compares in onnxruntime. Result the
// bisection; an error when a pass fails or the models cannot be compared.
StatusOr<BisectResult> Bisect(const Model& input, const std::vector<PipelineItem>& pipeline,
                              const BisectOptions& options);

Json BisectToJson(const BisectResult& result);
std::string FormatBisectText(const BisectResult& result);

}  // namespace onnxsurgeon
