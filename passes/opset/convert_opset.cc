// convert-opset, downgrade-opset, upgrade-opset: rewrite every ai.onnx node (and, with
// ml-opset, every ai.onnx.ml node) to the signature of its op at opset N, and import N.
// Model-local functions (their own imports) and subgraphs are converted too; other
// domains are left alone. The engine is passes/opset/ (schema-derived steps, an adapter
// per step whose meaning moved, decompositions of ops the target lacks).
//
// Options:
//   opset=N           the target (primary: `downgrade-opset=15`)
//   allow-partial     when some node cannot reach N, go to the nearest opset every node
//                     reaches and report the nodes that blocked N (default: stop with an
//                     error naming each node, its op, the versions and why)
//   ml-opset=M        also convert the ai.onnx.ml domain to M
// downgrade-opset leaves a model already at or below N as it is; upgrade-opset one at or
// above N.
//
// Before (downgrade-opset=13, model at 18):
//   S = ReduceSum<keepdims=1>(X, axes)     axes = [1] (initializer)
//   Y = LayerNormalization<axis=-1>(S, scale, bias)
// After:
//   S = ReduceSum<keepdims=1>(X, axes)     (ReduceSum-13: axes still an input)
//   M = ReduceMean<axes=[-1]>(S) ...       (the LayerNormalization decomposition)
#include "core/inspect/declared_shapes.h"
#include "core/inspect/inspect.h"
#include "passes/opset/converter.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class ConvertOpsetPass : public Pass {
 public:
  ConvertOpsetPass(opset::ConvertOptions options) : options_(options) {}

  StatusOr<PassResult> Run(Model& model, const PassContext&) override {
    PassResult result;
    int64_t source = model.OpsetVersion("");
    if ((options_.direction == opset::Direction::kDownOnly && source >= 0 && source <= options_.target) ||
        (options_.direction == opset::Direction::kUpOnly && source >= options_.target)) {
      return result;  // already where the runtime needs it
    }
    opset::ConvertOptions options = options_;
    options.direction = opset::Direction::kAny;
    OS_ASSIGN_OR_RETURN(opset::ConvertReport report, opset::ConvertOpset(model, options));
    // A declaration the computation contradicts passes onnx's checker only while inference
    // cannot prove it; at a newer opset it may (Reshape-14+ follows Shape through data
    // propagation). Such a declaration is stale: it is replaced by what the graph computes,
    // as fix-declared-shapes does. Only upgrades pay for the check (an inference on a copy,
    // ~50 ms on the corpus models): older schemas infer less, and downgrades are the hot path.
    if (report.reached > report.source)
      for (const DeclaredShapeConflict& c : RepairDeclaredShapes(model))
        result.Count(c.graph_output ? "graph-output-shapes-repaired" : "value-info-shapes-repaired");
    for (const auto& [what, n] : report.counts) result.Count(what, n);
    if (report.source != report.reached) result.Count(absl::StrCat("opset-", report.source, "-to-", report.reached));
    if (report.reached != report.target) {
      result.Count(absl::StrCat("partial: opset ", report.target, " not reached, stopped at ", report.reached));
      for (const auto& b : report.blockers) result.Count(absl::StrCat("blocked: ", b.Describe()));
    }
    return result;
  }

 private:
  opset::ConvertOptions options_;
};

StatusOr<std::unique_ptr<Pass>> MakeConvertOpsetPass(const PassOptions& o, opset::Direction direction) {
  opset::ConvertOptions options;
  options.direction = direction;
  options.target = o.Int("opset");
  options.allow_partial = o.Bool("allow-partial");
  options.ml_target = o.Int("ml-opset");
  int64_t latest = opset::LatestOpset("");
  if (options.target > latest)
    return absl::InvalidArgumentError(absl::StrCat("opset must be 7..", latest, ", not ", options.target));
  return std::make_unique<ConvertOpsetPass>(options);
}

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateConvertOpsetPass(const PassOptions& o) {
  return MakeConvertOpsetPass(o, opset::Direction::kAny);
}
StatusOr<std::unique_ptr<Pass>> CreateDowngradeOpsetPass(const PassOptions& o) {
  return MakeConvertOpsetPass(o, opset::Direction::kDownOnly);
}
StatusOr<std::unique_ptr<Pass>> CreateUpgradeOpsetPass(const PassOptions& o) {
  return MakeConvertOpsetPass(o, opset::Direction::kUpOnly);
}

std::vector<UnconvertibleNode> UnconvertibleOpsetNodes(const Model& model, int64_t opset) {
  std::vector<UnconvertibleNode> out;
  auto report = opset::CheckOpsetConversion(model, opset);
  if (!report.ok()) return out;  // the conversion itself will say why
  for (const opset::Blocker& b : report->blockers) out.push_back({b.node, b.op, b.where, b.why});
  return out;
}

}  // namespace onnxsurgeon::passes
