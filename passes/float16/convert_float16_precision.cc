#include "passes/float16/convert_float16_precision.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/ir/constant.h"

namespace onnxsurgeon::passes::fp16 {
namespace {

constexpr char kReason[] =
    "BatchNormalization whose input cancels ((|mean| + sd) / sd > 4): float16 rounding of the input grows by that "
    "factor";
constexpr char kInputReason[] = "makes the input of a BatchNormalization that cancels ((|mean| + sd) / sd > 4)";

constexpr char kDynamicReason[] =
    "computes a value a dynamic quantizer reads: float16 rounding moves its quantized levels by a full step";

// Ops that quantize a float input from its own range at run time, and that input.
bool DynamicQuantizer(const Node& n) {
  return n.Is("DynamicQuantizeLinear") || n.Is("DynamicQuantizeLSTM", "com.microsoft") ||
         n.Is("DynamicQuantizeMatMul", "com.microsoft");
}

// Every node whose outputs reach a dynamic quantizer's float input, in that node's graph:
// a rounding anywhere upstream (a bias, a scale, an activation) changes the quantizer's
// levels, by one step (1/255 of the range, not float16's 2^-11).
void KeepDynamicQuantizerInputs(const Graph& g, absl::flat_hash_map<const Node*, std::string>& keeps) {
  std::vector<const Node*> work;
  absl::flat_hash_set<const Node*> seen;
  for (const Node* n : g.nodes()) {
    if (!DynamicQuantizer(*n) || !n->input(0)) continue;
    if (const Node* p = n->input(0)->producer(); p && p->graph() == &g && seen.insert(p).second) work.push_back(p);
  }
  while (!work.empty()) {
    const Node* n = work.back();
    work.pop_back();
    keeps.try_emplace(n, kDynamicReason);
    for (const Value* v : n->inputs()) {
      const Node* p = v ? v->producer() : nullptr;
      if (p && p->graph() == &g && seen.insert(p).second) work.push_back(p);
    }
  }
}

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
  for (const Graph* sg : g.SelfAndSubgraphs()) KeepDynamicQuantizerInputs(*sg, keeps);
  return keeps;
}

}  // namespace onnxsurgeon::passes::fp16
