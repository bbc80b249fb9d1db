// decompose-rmsnorm, decompose-rotary-embedding, decompose-attention: opset 23's
// RMSNormalization, RotaryEmbedding and Attention as the standard ops convert-opset lowers
// them to (passes/opset/decompose.cc: RMSNormalization's function body with its axes a
// constant, the other two through their function bodies), at the model's own opset, for a
// runtime that reads opset 23 but lacks the op. Nodes whose decomposition does not apply
// stay, each named in the result as "left: <op>: <reason>" (not a change). Later passes of
// the pipeline do not bring the op back (ForbiddenOps).
//
// Before:  y = RMSNormalization<axis=-1>(x, scale)                 (opset 23, float)
// After:   r = Sqrt(Add(ReduceMean(Mul(x, x), [-1]), epsilon))   y = Mul(Div(x, r), scale)
#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/ir/domains.h"
#include "passes/opset/step.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

class DecomposeOpPass : public Pass {
 public:
  DecomposeOpPass(std::string op, std::string pass) : op_(std::move(op)), pass_(std::move(pass)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    context.Forbid(op_, pass_);
    PassResult result;
    std::vector<Node*> nodes;
    for (Graph* g : model.AllGraphs())
      for (Node* n : g->nodes())
        if (CanonicalDomain(n->domain()).empty() && n->op_type() == op_) nodes.push_back(n);
    if (nodes.empty()) return result;
    TypeFacts types(model);
    for (Node* n : nodes) {
      Rewriter rw;
      rw.SetRule(pass_);
      rw.SetInsertionPoint(n);
      std::vector<opset::Pending> emitted;
      std::string why_not;
      opset::DecomposeContext d;
      d.node = n;
      d.domain = "";
      d.opset = d.target = n->graph()->OpsetVersion("");
      d.rewriter = &rw;
      d.types = &types;
      d.emitted = &emitted;
      d.why_not = &why_not;
      OS_ASSIGN_OR_RETURN(bool done, opset::Decompose(d));
      if (done) {
        result.Count(pass_);
      } else {
        ++result.counts[absl::StrCat("left: ", op_, ": ", why_not)];
      }
    }
    return result;
  }

 private:
  std::string op_, pass_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateDecomposeRmsNormPass(const PassOptions&) {
  return std::make_unique<DecomposeOpPass>("RMSNormalization", "decompose-rmsnorm");
}
StatusOr<std::unique_ptr<Pass>> CreateDecomposeRotaryEmbeddingPass(const PassOptions&) {
  return std::make_unique<DecomposeOpPass>("RotaryEmbedding", "decompose-rotary-embedding");
}
StatusOr<std::unique_ptr<Pass>> CreateDecomposeAttentionPass(const PassOptions&) {
  return std::make_unique<DecomposeOpPass>("Attention", "decompose-attention");
}

}  // namespace onnxsurgeon::passes
