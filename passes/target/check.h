// `check --target`: what in a model a target refuses, node by node, with the profile
// fact behind each finding (and its source), and what `--target` does about it.
//
// The planner (planner.h) is driven by the same findings: every fixable blocker names the
// pipeline step that removes it, and `--target` runs those steps, checks again, and
// fails (writing nothing) while anything still blocks. So `--target` never writes a model
// its own `check --target` rejects.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/target/profile.h"

namespace onnxsurgeon::target {

// The steps the planner knows, in the order it runs them (a later step never undoes an
// earlier one: decompositions forbid their op for the rest of the pipeline).
enum class Step {
  kInlineFunctions,
  kRewriteIndexPut,
  kFixLayerNorm,
  kCanonicalLayerNorm,  // fuse to LayerNormalization (Transposes for channels-first), then decompose if the profile
                        // wants
  kConvertOpset,
  kConvertOpsetBeforeForm,  // below the opset whose form of an op the target refuses (ReduceSum-13's axes input)
  kDecomposeLayerNorm,
  kRewriteGelu,
  kRewriteErf,
  kRewriteReciprocal,
  kRewriteGlobalPool,
  kSplitGroupedConvTranspose,
  kLoopCarryOuterValues,
  kDropReshapeAllowzero,
  kLowerScatterND,
  kRewriteConstantScatterND,
  kSetInputShape,
  kExtractConstants,
  kSimplify,            // between infer-shapes(reset=true): fold If, shape arithmetic, stale types
  kReshapeToUnsqueeze,  // after simplify: it needs the static shapes, and simplify never undoes it
  kTransposeToReshape,  // after simplify, for the same reasons
  kRewriteCastLike,
  kAnnotateShapes,
  kInlineWeights,
  kPruneImports,
  kLowerIr,
  kNone,  // nothing in onnxsurgeon removes this blocker
};

struct Finding {
  std::string node;    // node name ("" for a model-level finding)
  std::string op;      // op type, domain-qualified outside ai.onnx ("" for model-level)
  std::string where;   // "main graph", "subgraph 'then' of node 'x'", "function local::F", "model"
  std::string reason;  // what the target refuses here
  std::string fact;    // the profile fact, e.g. "rknn2: If only with a constant condition"
  std::string source;  // where the fact comes from
  Step step = Step::kNone;
  std::string fix;  // what --target does (the step's pipeline text), or why nothing can
  std::string Describe() const;
};

struct CheckOptions {
  // Graph inputs --input-shapes gives static shapes for (static-shape targets).
  std::set<std::string> inputs_with_shapes;
  // The dim 0 --input-shapes gives each of them (the batch a profile's max_batch judges).
  std::map<std::string, int64_t> input_batch;
};

struct CheckReport {
  std::vector<Finding> blockers;
  std::vector<Finding> warnings;  // not refused, but worth knowing (int64 on int32 hardware)
};

CheckReport CheckTarget(const Model& model, const Profile& profile, const CheckOptions& options = {});

// The report as `check --target --json` prints it (and `onnxsurgeon.check_target` returns):
// {"model", "target", "accepted", "blockers": [...], "warnings": [...]}, each finding with
// node, op, where, reason, fact, source, fix and fixable. One writer, so both agree.
std::string CheckReportJson(const CheckReport& report, const Profile& profile, const std::string& model_name);

// The pipeline text of a step for this profile and model ("convert-opset=19", ...).
std::string StepText(Step step, const Profile& profile, const Model& model, const std::string& input_shapes);

}  // namespace onnxsurgeon::target
