// `--target NAME --search`: instead of trusting the profile, try candidate plans until the
// target's real backend accepts the result and matches onnxruntime on the original
// (core/verify/backend_check.h). The candidates, in this fixed order (docs/cli.md):
//   1. profile       the user's passes, then the profile's plan (what --target does)
//   2. simplify      simplify first, then the plan
//   3. opset N-1     convert-opset one below the opset the plan would give, then the plan
//   4. lowest opset  convert-opset to the profile's lowest opset, then the plan
//   5. decomposed    lower-contrib-ops, decompose-layernorm and rewrite-gelu first (the
//                    profile's remedies, applied whether or not the profile asks), then the plan
//   6. static        (only with --input-shapes) set-input-shape and simplify first, then the plan
// Candidates 1-5 fix input shapes only where the profile needs static shapes. A candidate
// whose prefix cannot change the model (3 and 4 when no lower opset exists) is skipped.
// Every candidate starts from the input file; nothing is written until one succeeds.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "core/io/model_io.h"
#include "core/pass/pass_manager.h"
#include "core/pass/pipeline.h"
#include "core/verify/backend_check.h"

namespace onnxsurgeon::cli {

// The metadata_props key of the plan that worked, in the written model.
inline constexpr char kTargetPlanKey[] = "onnxsurgeon.target_plan";

struct SearchRequest {
  std::string target, input;
  std::vector<PipelineItem> user;  // the user's --pass items, run first in every candidate
  std::map<std::string, std::vector<int64_t>> input_shapes;
  bool allow_remaining = false;  // a candidate the profile still rejects goes to the backend anyway
  BackendCheckOptions check;     // runs and seed; the timeout is set from the budget
  double budget_seconds = 600;
  PassManagerOptions pm;  // without forbidden ops: each candidate gets its own
  bool external_data_given = false;
};

struct SearchResult {
  bool found = false;
  std::unique_ptr<Model> model;  // the accepted candidate's result
  std::string plan;              // its whole pipeline, as --pass text
  std::vector<PassRunReport> reports;
  BackendCheckResult check;
  SaveOptions save;                // adjusted by the profile (inline weights)
  std::vector<std::string> tried;  // "NAME: one-line failure" per candidate, in order
};

// The pipeline text of `items` (name, or name(key=value,...)), as --pass parses it.
std::string PipelineText(const std::vector<PipelineItem>& items);

// Given the request and the save options the user asked for. Execute tries the candidates
// (progress on `log`). Result the first accepted one, or found=false with every failure;
// an error only when the backend is not installed (FailedPrecondition/NotFound, as
// FindTargetBackend) or the input cannot be read.
StatusOr<SearchResult> SearchTargetPlan(const SearchRequest& request, const SaveOptions& save, std::ostream& log);

}  // namespace onnxsurgeon::cli
