// fix-layernorm: turns every LayerNorm in the model, whatever form it takes, into the
// standard form the target opset allows.
//
// Recognised (see passes/layernorm/fusion_rules.h for the exact forms and refusals):
//   1. custom-domain ops named like a LayerNorm (Custom_LayerNorm, LayerNormPlugin, ...;
//      `names=` adds more), epsilon and axis from their attributes; a LayerNormalization
//      written at an opset below 17 (old onnxruntime optimizers did) is lowered;
//   2. model-local functions that compute a LayerNorm: judged by body. Calls of functions
//      whose body holds a LayerNorm candidate are inlined, the body's LayerNorm is then
//      fused like any other, and functions left uncalled are removed;
//   3. decomposed subgraphs: torch's legacy export, hand-written variants (Pow or Mul,
//      Div or Reciprocal/Div(1, .)/Pow(-0.5), duplicated Sub, with or without affine,
//      epsilon as initializer or Constant), Cast-wrapped fp16 blocks, ReduceMean axes as
//      attribute or input, the Keras/tf2onnx Reciprocal-Mul-Sub form, and channels-first
//      LayerNorm2d (between Transposes, the only equivalent LayerNormalization).
// Output, per graph: a LayerNormalization node at opset >= 17 (to=auto or to=op), or at
// opset < 17 (to=auto) or with to=decomposed the ReduceMean/Sub/Pow/ReduceMean/Add/Sqrt/
// Div/Mul/Add decomposition (passes/lowering/layer_norm.h). to=op at opset < 17 is an
// error. to=native fuses into LayerNormalization at opset >= 17 and leaves models below
// 17 alone (simplify uses it with custom-ops=false: a decomposed LayerNorm becomes the
// native op, a custom op is never reinterpreted by its name). Custom-domain opset
// imports that no node uses any more are dropped.
// Pipelines: to=decomposed forbids LayerNormalization for the rest of the pipeline
// (core/pass/pass.h ForbiddenOps); after a pass that forbade it, to=native does nothing,
// to=auto decomposes and to=op is an error.
//
// Before (opset 17):
//   m = ReduceMean<axes=[-1]>(x)  d = Sub(x, m)  v = ReduceMean<axes=[-1]>(Pow(d, 2))
//   y = Add(Mul(Div(d, Sqrt(Add(v, 1e-5))), w), b)
// After:
//   y = LayerNormalization<axis=-1, epsilon=1e-5>(x, w, b)
#include <set>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "core/analysis/type_facts.h"
#include "core/interop/onnx_interop.h"
#include "core/pass/pattern_pass.h"
#include "core/rewrite/greedy_driver.h"
#include "core/shape/propagate.h"
#include "passes/functions/inline_functions.h"
#include "passes/layernorm/decompose_rule.h"
#include "passes/layernorm/fusion_rules.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

enum class Target { kAuto, kOp, kDecomposed, kNative };

// An op named like a LayerNorm (the custom-op names, case aside).
bool NamedLikeLayerNorm(const Node& n, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(),
                     [&](const std::string& name) { return absl::EqualsIgnoreCase(n.op_type(), name); });
}

// A cheap look for a LayerNorm inside a function body: a LayerNormalization-like op,
// or Sub(a, ReduceMean(a)). The fusion rules decide after inlining.
bool BodyMayHoldLayerNorm(const Function& f, const std::vector<std::string>& names) {
  for (Node* n : f.body().AllNodesRecursive()) {
    if (NamedLikeLayerNorm(*n, names)) return true;
    if (n->Is("Sub") && n->num_inputs() == 2 && n->input(1) && n->input(1)->producer() &&
        n->input(1)->producer()->Is("ReduceMean") && n->input(1)->producer()->input(0) == n->input(0)) {
      return true;
    }
  }
  return false;
}

// Every fusion rule is rooted at or passes through a mean (ReduceMean, GlobalAveragePool,
// ReduceSum * 1/N: decomposed and Keras forms, LayerNorm2d) or matches a custom op by
// name; without either the rules cannot fire.
bool MayHoldLayerNorm(const Model& model, const std::vector<std::string>& names) {
  for (Node* n : model.graph().AllNodesRecursive()) {
    if (n->Is("ReduceMean") || n->Is("GlobalAveragePool") || n->Is("ReduceSum") || NamedLikeLayerNorm(*n, names)) {
      return true;
    }
  }
  return false;
}

Status InlineLayerNormCalls(Model& model, Graph& g, const std::vector<std::string>& names,
                            absl::flat_hash_set<const Function*>& inlined, PassResult& result) {
  for (Node* n = g.first_node(); n;) {
    Node* next = n->next();
    const Function* f = model.FindFunction(n->domain(), n->op_type(), n->proto().overload());
    if (f && BodyMayHoldLayerNorm(*f, names)) {
      OS_RETURN_IF_ERROR(InlineCall(model, n, *f, result));
      inlined.insert(f);
    } else {
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(InlineLayerNormCalls(model, *sub, names, inlined, result));
    }
    n = next;
  }
  return absl::OkStatus();
}

class FixLayerNormPass : public Pass {
 public:
  FixLayerNormPass(Target target, std::vector<std::string> names) : target_(target), names_(std::move(names)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    PassResult result;
    // An earlier pass of this pipeline decomposed LayerNormalization on purpose: native
    // leaves the model alone, auto keeps the decomposed form, op cannot be honoured.
    Target goal = target_;
    if (context.IsForbidden("LayerNormalization")) {
      if (goal == Target::kNative) return result;
      if (goal == Target::kOp) {
        return absl::FailedPreconditionError(absl::StrCat("fix-layernorm(to=op): LayerNormalization was removed by '",
                                                          context.ForbiddenBy("LayerNormalization"),
                                                          "' earlier in this pipeline"));
      }
      goal = Target::kDecomposed;
    }
    if (goal == Target::kDecomposed) context.Forbid("LayerNormalization", "fix-layernorm");
    // to=native only fuses into the op the model's opset has; below 17 there is no such
    // op, and rewriting one decomposed form into another is not a simplification.
    if (goal == Target::kNative && model.graph().OpsetVersion("") < 17) return result;
    std::set<std::string> domains_before = UsedDomains(model);

    absl::flat_hash_set<const Function*> inlined;
    OS_RETURN_IF_ERROR(InlineLayerNormCalls(model, model.graph(), names_, inlined, result));
    // Functions we inlined that nothing calls any more go; the others stay.
    if (!inlined.empty()) result.Count("functions-removed", Rewriter().RemoveUncalledFunctions(model, &inlined));

    // Nothing to fuse: no inference (building onnx's schema registry alone costs ~11 ms).
    if (!MayHoldLayerNorm(model, names_)) return result;

    // The rules check types and shapes; they are filled in memory only, by the local
    // rules and, where those leave a value untyped, onnx inference. Declared symbolic dims
    // are refined first: a dim computed from a graph input's is named as that dim, so
    // the rules see x's batch and the broadcast mean's batch as one (TypeFacts::Refresh).
    if (!TypeFacts::Refresh(model).ok()) result.Count("shape-inference-failed");
    TypeRequest request;
    request.infer.record_value_info = false;
    if (!TypeFacts::Ensure(model, HasUntypedOutputs, request).ok()) result.Count("shape-inference-failed");

    GreedyOptions options = WithDebugPatterns({}, context);
    // Below opset 17 (to=auto) or with to=decomposed, a matched LayerNorm is written out
    // decomposed directly; LayerNormalization nodes the model already had are lowered next.
    const Target target = goal;
    auto decompose = [target](const Node& n) {
      return target == Target::kDecomposed || (target == Target::kAuto && n.graph()->OpsetVersion("") < 17);
    };
    auto fusion = layernorm::MakeFusionRules(names_, decompose);
    std::vector<const RewriteRule*> rules;
    for (const auto& r : fusion) rules.push_back(r.get());
    OS_ASSIGN_OR_RETURN(auto fused, ApplyRulesGreedily(model, rules, options));
    for (const auto& [rule, n] : fused) result.Count(rule, n);

    if (goal == Target::kOp || goal == Target::kNative) {
      for (Graph* g : model.AllGraphs()) {
        if (g->OpsetVersion("") >= 17) continue;
        for (Node* n : g->nodes()) {
          if (n->Is("LayerNormalization")) {
            return absl::FailedPreconditionError(
                absl::StrCat("fix-layernorm(to=op): LayerNormalization '", n->name(), "' is in a graph at opset ",
                             g->OpsetVersion(""),
                             "; LayerNormalization needs opset 17 (use to=decomposed, or convert the opset first)"));
          }
        }
      }
    } else {
      auto lower = layernorm::MakeDecomposeRule(
          [target](const Node& n) { return target == Target::kDecomposed || n.graph()->OpsetVersion("") < 17; });
      const RewriteRule* lowering[] = {lower.get()};
      OS_ASSIGN_OR_RETURN(auto lowered, ApplyRulesGreedily(model, {lowering[0]}, options));
      for (const auto& [rule, n] : lowered) result.Count(rule, n);
    }

    std::set<std::string> domains_after = UsedDomains(model);
    auto* imports = model.mutable_proto().mutable_opset_import();
    for (int i = imports->size() - 1; i >= 0; --i) {
      std::string domain(CanonicalDomain(imports->Get(i).domain()));
      if (!IsStandardDomain(domain) && domains_before.count(domain) && !domains_after.count(domain)) {
        imports->DeleteSubrange(i, 1);
        result.Count("opset-imports-removed");
      }
    }
    return result;
  }

 private:
  Target target_;
  std::vector<std::string> names_;
};

}  // namespace

StatusOr<std::unique_ptr<Pass>> CreateFixLayerNormPass(const PassOptions& o) {
  const std::string& to = o.String("to");  // one of the choices passes.def declares
  Target target = to == "op"           ? Target::kOp
                  : to == "decomposed" ? Target::kDecomposed
                  : to == "native"     ? Target::kNative
                                       : Target::kAuto;
  std::vector<std::string> names;
  if (o.Bool("custom-ops")) names = layernorm::DefaultCustomNames();
  for (std::string& n : o.List("names")) names.push_back(std::move(n));
  return std::make_unique<FixLayerNormPass>(target, std::move(names));
}

}  // namespace onnxsurgeon::passes
