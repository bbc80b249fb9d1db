// What compare.cc and compare_by_cuts.cc share: the helper's config pieces, its call, the
// row it returns and the divergence walk. Not an API.
#pragma once

#include <string>
#include <vector>

#include "core/inspect/json.h"
#include "core/util/subprocess.h"
#include "core/verify/compare.h"
#include "core/verify/segments.h"

namespace onnxsurgeon::compare_internal {

Json SegmentsJson(const std::vector<Segment>& segments);
// The helper's "inputs": `file` to read (empty: random), `save` to write the feeds to.
Json InputsJson(const Model& model, const CompareOptions& options, const std::string& file, const std::string& save);
// Every comparable node output of A paired with itself (a backend, a reference), or only
// the graph outputs.
std::vector<TensorPair> SelfPairs(Model& a, bool outputs_only);
// Runs compare_run.py (python: "" for the candidates' rule) and returns its JSON; its
// "error" becomes an error.
StatusOr<Json> RunHelper(const TempDir& dir, const std::string& name, const Json& config, const std::string& python,
                         std::string* used_python);
TensorComparison RowFromJson(const TensorPair& pair, const Json& row);
// Sets first_divergence and drift (compare.h says how).
void MarkDivergence(const Model& a, CompareResult& result);

// compare --backend for a backend that runs whole models only (compare_by_cuts.cc).
bool IsCutBackend(const std::string& name);
StatusOr<CompareResult> CompareByCuts(Model& a, const CompareOptions& options, const std::vector<TensorPair>& pairs,
                                      const TempDir& dir);

}  // namespace onnxsurgeon::compare_internal
