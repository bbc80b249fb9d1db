// resolve-shapes: evaluates shape arithmetic symbolically and rewrites what it decides.
//
// Exporters compute shapes at run time even where the answer is known up to a symbol:
// `x.view(x.size(0), -1)` becomes Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])).
// fold-constants folds such chains only when every dim is static; this pass also follows
// dynamic dims. The symbolic shape analysis (core/shape/symbolic.h) describes every small
// integer or bool vector of the model; the rules (rules.h: constant-vector, same-vector,
// reshape-shape, where-constant, expand-noop, slice-noop, tile-noop, flatten-noop,
// unsqueeze-chain, slice-chain)
// read it and run under the greedy driver, which erases what they leave unused (so
// nothing only they read is materialized). Counts per rule in the pass result;
// --debug-patterns says why a candidate stays.
//
// Types come from the model and onnx shape inference, run (types kept in memory, no
// value_info saved) only when a Shape/Size/Reshape/Expand/Slice/Tile/Where reads a value (a Flatten: its rank)
// without a known shape, or with a dim that is neither static nor symbolic (then the
// in-memory types are inferred afresh, as onnx's data propagation may decide it now); a
// model without such reads pays nothing.
//
// Before:  s = Shape(X)  b = Gather(s, zero)  u = Unsqueeze(b, ax)  c = Concat(u, minus1)
//          Y = Reshape(X, c)                    (X : float[batch,8,4,4])
// After:   Y = Reshape(X, {0,-1})
#include <algorithm>

#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/ir/shape.h"
#include "core/pass/pattern_pass.h"
#include "passes/registry.h"
#include "passes/resolve_shapes/rules.h"

namespace onnxsurgeon::passes {
namespace {

// True when an op this pass reads shapes for reads a value whose shape is unknown (no
// rank; with `any_dim`, also a rank with a dim neither static nor symbolic).
bool ReadsUnknownShape(const Model& model, bool any_dim) {
  auto unknown = [any_dim](const Value* v) {
    auto shape = ShapeOf(v);
    if (!shape) return true;
    return any_dim && std::any_of(shape->begin(), shape->end(), [](const Dim& d) { return d.is_unknown(); });
  };
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (!CanonicalDomain(n->domain()).empty() || n->num_inputs() == 0) continue;
    const std::string& op = n->op_type();
    if (op == "Shape" || op == "Size" || op == "Reshape" || op == "Expand" || op == "Slice" || op == "Tile") {
      if (n->input(0) && unknown(n->input(0))) return true;
    } else if (op == "Flatten") {  // its rank is all flatten-noop reads
      if (n->input(0) && !ShapeOf(n->input(0))) return true;
    } else if (op == "Where") {
      for (Value* in : n->inputs())
        if (in && unknown(in)) return true;
    }
  }
  return false;
}
bool NeedsShapeInference(const Model& model) { return ReadsUnknownShape(model, false); }
bool ReadsUnknownDim(const Model& model) { return ReadsUnknownShape(model, true); }

constexpr int kMaxWalks = 64;

// How many nodes the rules' rewrites erased (the report's nodes-erased).
class ErasedNodes : public RewriteListener {
 public:
  void NodeErased(Node*) override { ++erased_; }
  int64_t erased() const { return erased_; }

 private:
  int64_t erased_ = 0;
};

// The rules, made once: they are const and stateless.
const std::vector<const RewriteRule*>& Rules() {
  static const auto* rules = [] {
    auto* all = new std::vector<const RewriteRule*>;
    std::vector<std::unique_ptr<RewriteRule>> owned = resolve_shapes::VectorRules();
    for (auto& r : resolve_shapes::NoopRules()) owned.push_back(std::move(r));
    owned.push_back(resolve_shapes::UnsqueezeChainRule());
    owned.push_back(resolve_shapes::SliceChainRule());
    for (auto& r : owned) all->push_back(r.release());
    return all;
  }();
  return *rules;
}

Status SortTopologically(Graph& g) {
  if (!g.IsTopologicallySorted()) OS_RETURN_IF_ERROR(g.TopologicalSort());
  for (Node* n : g.nodes())
    for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(SortTopologically(*sub));
  return absl::OkStatus();
}

// Given a model. Execute: the analysis walks every graph (subgraphs that fail for these
// shapes are left as they are), then the rules rewrite what it decided, to a fixed point,
// and the in-memory types below the nodes whose inputs they changed are dropped (they may
// be decidable now). Result the rules' counts added to `result`; whether a rewrite changed
// some node's inputs.
StatusOr<bool> RunOnce(Model& model, const PassContext& context, PassResult& result) {
  OS_RETURN_IF_ERROR(SortTopologically(model.graph()));
  for (auto& f : model.functions()) OS_RETURN_IF_ERROR(SortTopologically(f->body()));
  RewriteFacts facts(model);
  TypeFacts& types = facts.Emplace<TypeFacts>(model, TypeFactsOptions{.symbolic_skips_failing_subgraphs = true});
  types.Symbolic();  // walked before any rewrite

  ErasedNodes erased;
  GreedyOptions options = WithDebugPatterns(GreedyOptions{}, context);
  options.listener = &erased;
  OS_ASSIGN_OR_RETURN(auto counts, ApplyRulesGreedily(model, Rules(), facts, options));
  for (const auto& [rule, n] : counts) result.Count(rule.substr(rule.find('/') + 1), n);
  if (erased.erased() > 0) result.Count("nodes-erased", erased.erased());
  return types.ForgetBelowRewrites() > 0;
}

class ResolveShapesPass : public Pass {
 public:
  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    TypeRequest request;
    request.infer.record_value_info = false;  // types for deciding, not saved
    // Local rules first; onnx inference only if a shape is still unknown. The local rules
    // leave a dim unknown where it follows from shape arithmetic (a Reshape whose shape is
    // a Concat of Gathers of a Shape); onnx inference's data propagation follows it, so when
    // such a dim is read, the in-memory types are inferred afresh by onnx. Without that, a
    // chain of k such layers took k simplify rounds, and a run on the output found more.
    bool afresh = ReadsUnknownDim(model);
    TypeRequest first = request;
    if (afresh) first.sources = TypeSources::kOnnxAfresh;
    if (!TypeFacts::Ensure(model, afresh ? TypeFacts::AnyMissing : NeedsShapeInference, first).ok())
      result.counts["left/shape-inference-failed"] += 1;
    // A rewrite makes a Reshape's shape constant; only then do the local rules know its
    // output's dims, which the next layer's Shape reads. So analysis and rules repeat, with
    // the types below the rewritten nodes dropped (RunOnce) and re-derived by the local rules
    // (cheap; no onnx inference), until nothing changes: one run resolves a whole chain of
    // layers (it took one simplify round per layer, and a run on the output found more).
    for (int walk = 0; walk < kMaxWalks; ++walk) {
      OS_ASSIGN_OR_RETURN(bool changed, RunOnce(model, context, result));
      if (!changed) break;
      // Untyped values (dropped, or never typed) below the rewrites: the local rules first,
      // onnx only if a shape this pass reads is still missing.
      if (!TypeFacts::Ensure(model, NeedsShapeInference, request).ok())
        result.counts["left/shape-inference-failed"] += 1;
    }
    return result;
  }
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateResolveShapesPass(const PassOptions&) {
  return std::make_unique<ResolveShapesPass>();
}

}  // namespace onnxsurgeon::passes
