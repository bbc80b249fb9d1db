// simplify: the standard cleanup pipeline as one pass, declared below (SimplifyPipeline:
// its steps, max rounds and what happens between rounds) and run by core/pass/fixed_point:
// each round runs the steps, and rounds repeat until a whole round changes nothing (a
// fixed point), at most `max-rounds` times. Every step is the registered pass of that
// name, with the options its text writes (parsed by the pipeline grammar); a build
// without one of them fails with "unknown pass". The declaration is the one list of
// steps: skip= accepts its names, and `onnxsurgeon passes` and docs/passes.md print it.
// fix-layernorm fuses decomposed LayerNorms into the native op only where the opset has it (>= 17), as onnx-simplifier
// does, and never takes a custom op for a LayerNorm by its name: simplify keeps what the model computes, op for op.
// resolve-shapes follows fold-constants: it reads the types fold-constants' shape inference
// left in memory (so it rarely infers again) and resolves the shape arithmetic that
// dynamic dims kept from folding (on the corpus: bert_op14 150 -> 124 nodes,
// cnn_clutter_op13 11 -> 7, t5_op14 120 -> 118); cse and dce then take what it leaves unread.
// Every round starts from types re-inferred from the graph inputs, with
// declared types refined by what inference now knows (TypeFacts::Refresh), so a round that
// changes nothing is a true fixed point: simplify on its own output changes nothing, and neither does
// infer-shapes(reset=true) then simplify. The report counts per step, e.g. `strip-identity-cast/identity`, and
// `rounds`. extract-constants (Constant nodes -> initializers, as onnx-simplifier leaves them) is in the list because a
// Constant node is a node: without it, every exporter's Constant count stays in the graph (218 of 1205 nodes left on
// the corpus; docs/benchmarks.md); with keep-skip-operands=true it leaves the one Constant
// onnxruntime needs as a node (passes/fold/skip_operand.h: a residual Add's constant operand
// before a LayerNormalization, which its SkipLayerNormalization fusion refuses as an initializer).
//
// Options (passes/passes.def): max-rounds, skip=fuse-conv-bn;cse, size-limit (fold-constants'
// max-size, as onnx-simplifier's --no-large-tensor).
//
// Before:  s = Shape(X); n = Gather(s, 0); a = Identity(X); Y = Reshape(a, ...) ...
// After:   what the steps leave, with nothing left for any of them to do.
#include "core/analysis/type_facts.h"
#include "core/pass/fixed_point.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {

const FixedPointPipeline& SimplifyPipeline() {
  static const FixedPointPipeline pipeline{
      .steps = {"inline-functions(when=simplifies)", "fold-constants", "resolve-shapes", "simplify-reductions",
                "absorb-inputs", "fuse-conv-bn", "fold-into-weights", "fix-layernorm(to=native,custom-ops=false)",
                "strip-identity-cast", "fuse-reshapes", "fuse-transposes", "extract-constants(keep-skip-operands=true)",
                "dedupe-initializers", "cse", "dce"},
      .max_rounds = 10,
      // The steps keep the types they infer in memory. After a round that changed the
      // graph, a type inferred before a fold may hold an unknown dim that is decidable now;
      // a round that started from such types could report "no change" where a run on the
      // saved output (which re-infers) finds more. A declared type (value_info, written by
      // the exporter or by infer-shapes before simplify) goes stale the same way, and a
      // reload keeps it. So every round, the first too, re-infers from the graph inputs as
      // infer-shapes(reset=true) would, and declarations take the static sizes inference
      // adds (TypeFacts::Refresh; the report counts them as before-round): each round folds what
      // the last one made decidable, and a round that changes nothing is the fixed point
      // that re-inferring and simplifying again would reach. Inference that fails leaves
      // the types forgotten; the steps infer what they need themselves.
      .before_round = [](Model& model) { return TypeFacts::Refresh(model); },
  };
  return pipeline;
}

StatusOr<std::unique_ptr<Pass>> CreateSimplifyPass(const PassOptions& o) {
  FixedPointRun run;
  run.max_rounds = o.Int("max-rounds");
  run.skip = o.List("skip");
  if (o.Has("size-limit")) run.step_options["fold-constants"]["max-size"] = std::to_string(o.Int("size-limit"));
  // inline=simplifies (default): a call is inlined only where that cannot add nodes;
  // fix-layernorm still inlines and fuses a LayerNorm body at opset >= 17. always: every call.
  run.step_options["inline-functions"]["when"] = o.String("inline");
  return MakeFixedPointPass(SimplifyPipeline(), run);
}

}  // namespace onnxsurgeon::passes
