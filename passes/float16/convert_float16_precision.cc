#include "passes/float16/convert_float16_precision.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/ir/constant.h"

namespace onnxsurgeon::passes::fp16 {
namespace {

constexpr char kReason[] =
    "BatchNormalization whose input cancels ((|mean| + sd) / sd > 4): float16 rounding of the input grows by that "
    "factor";
constexpr char kInputReason[] = "makes the input of a BatchNormalization that cancels ((|mean| + sd) / sd > 4)";

std::optional<std::vector<double>> Doubles(const Value* v) {
  auto c = GetConstant(v);
  if (!c) return std::nullopt;
  return c->AsDoubles();
}

// max over channels of (|mean| + sd) / sd with sd = sqrt(var + epsilon); nullopt when the
// node is not an inference BatchNormalization with constant statistics.
std::optional<double> Cancellation(const Node& n) {
  if (!n.Is("BatchNormalization") || n.num_inputs() < 5 || n.num_outputs() != 1) return std::nullopt;
  if (n.GetInt("training_mode", 0) != 0) return std::nullopt;
  auto mean = Doubles(n.input(3));
  auto var = Doubles(n.input(4));
  if (!mean || !var || mean->size() != var->size() || mean->empty()) return std::nullopt;
  double eps = n.GetFloat("epsilon", 1e-5f), worst = 1;
  for (size_t c = 0; c < mean->size(); ++c) {
    double sd = std::sqrt(std::max((*var)[c], 0.0) + eps);
    if (!std::isfinite(sd) || !std::isfinite((*mean)[c]) || sd <= 0) return std::nullopt;
    worst = std::max(worst, (std::fabs((*mean)[c]) + sd) / sd);
  }
  return worst;
}

}  // namespace

absl::flat_hash_map<const Node*, std::string> PrecisionKeeps(const Graph& g) {
  absl::flat_hash_map<const Node*, std::string> keeps;
  for (const Node* n : g.AllNodesRecursive()) {
    auto kappa = Cancellation(*n);
    if (!kappa || *kappa <= kMaxBatchNormCancellation) continue;
    keeps.try_emplace(n, kReason);
    if (const Node* p = n->input(0) ? n->input(0)->producer() : nullptr) keeps.try_emplace(p, kInputReason);
  }
  return keeps;
}

}  // namespace onnxsurgeon::passes::fp16
