// convert-float16's range analysis: per float value an interval that holds every element,
// and which nodes must compute in float32 because their values overflow float16 (see
// docs/passes/convert-float16.md, "Range analysis").
#pragma once

#include <limits>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/analysis/type_facts.h"
#include "core/ir/graph.h"
#include "core/ir/status.h"

namespace onnxsurgeon::passes::fp16 {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Range {
  double lo = -kInf, hi = kInf;
  bool grown = false;  // squared/exponentiated from an unknown bound: assumed beyond float16
};

class RangeAnalysis {
 public:
  // Given the main graph (its bodies are analysed too), the model's types, measured ranges
  // by value name, and whether constants beyond float16 will be clamped. Execute nothing
  // on the graph.
  RangeAnalysis(const Graph& main, const TypeFacts& types, const absl::flat_hash_map<std::string, Range>& measured,
                bool clamp);
  ~RangeAnalysis();
  // Why the node must compute in float32 ("" when its ranges allow float16).
  std::string KeepReason(const Node& n) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// A ranges file (what onnxsurgeon.calibrate writes): one value per line, "MIN MAX NAME";
// '#' starts a comment line. Each measured range is doubled (headroom).
StatusOr<absl::flat_hash_map<std::string, Range>> ReadRanges(const std::string& path);

}  // namespace onnxsurgeon::passes::fp16
