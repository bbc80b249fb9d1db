// simplify: the standard cleanup pipeline as one pass. Each round runs
//   inline-functions(when=simplifies), fold-constants, resolve-shapes, simplify-reductions, fuse-conv-bn, fold-into-weights,
//   fix-layernorm(to=native,custom-ops=false), strip-identity-cast, fuse-reshapes,
//   fuse-transposes, extract-constants, dedupe-initializers, cse, dce
// and rounds repeat until a whole round changes nothing (a fixed point), at most
// `max-rounds` times. Every step is the registered pass of that name, with the options
// written in kSteps (parsed by the pipeline grammar); a build without one of them fails
// with "unknown pass". fix-layernorm fuses decomposed LayerNorms into the native op only
// where the opset has it (>= 17), as onnx-simplifier does, and never takes a custom op
// for a LayerNorm by its name: simplify keeps what the model computes, op for op.
// resolve-shapes follows fold-constants: it reads the types fold-constants' shape inference
// left in memory (so it rarely infers again) and resolves the shape arithmetic that
// dynamic dims kept from folding (on the corpus: bert_op14 150 -> 124 nodes,
// cnn_clutter_op13 11 -> 7, t5_op14 120 -> 118); cse and dce then take what it leaves unread.
// Every round after the first starts without the non-static types earlier rounds inferred
// in memory (ForgetInferredTypes), so a round that changes nothing is a true fixed point:
// simplify on its own output changes nothing (issue 12 item 8).
// The report counts per step, e.g. `strip-identity-cast/identity`, and `rounds`.
// extract-constants (Constant nodes -> initializers, as onnx-simplifier leaves them) is
// in the list because a Constant node is a node: without it, every exporter's Constant
// count stays in the graph (218 of 1205 nodes left on the corpus; docs/benchmarks.md).
//
// Options:
//   max-rounds=10   stop after this many rounds even if the last one changed something
//   skip=           steps to leave out, ';'-separated: simplify(skip=fuse-conv-bn;cse)
//   size-limit=     fold-constants' max-size (bytes a folded output may take), as
//                   onnx-simplifier's --no-large-tensor
//   inline=simplifies  model-local functions: a call is inlined only where that cannot
//                   add nodes (inline-functions when=simplifies; fix-layernorm still
//                   inlines and fuses a LayerNorm body at opset >= 17); always: every call
//
// Before:  s = Shape(X); n = Gather(s, 0); a = Identity(X); Y = Reshape(a, ...) ...
// After:   what the steps leave, with nothing left for any of them to do.
#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/pass/pipeline.h"
#include "core/shape/propagate.h"
#include "core/util/suggest.h"
#include "passes/list_option.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr const char* kSteps[] = {"inline-functions(when=simplifies)",
                                  "fold-constants",
                                  "resolve-shapes",
                                  "simplify-reductions",
                                  "fuse-conv-bn",
                                  "fold-into-weights",
                                  "fix-layernorm(to=native,custom-ops=false)",
                                  "strip-identity-cast",
                                  "fuse-reshapes",
                                  "fuse-transposes",
                                  "extract-constants",
                                  "dedupe-initializers",
                                  "cse",
                                  "dce"};

std::string StepName(std::string_view step) { return std::string(step.substr(0, step.find('('))); }

// Given skip=, size-limit= and inline=. Execute checks the skipped names. Result the step texts.
StatusOr<std::vector<std::string>> StepTexts(const std::vector<std::string>& skip, const std::string& size_limit,
                                             const std::string& inline_when) {
  std::vector<std::string> names, texts;
  for (const char* text : kSteps) names.push_back(StepName(text));
  for (const std::string& s : skip) {
    if (std::find(names.begin(), names.end(), s) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat("skip: '", s, "' is not a simplify step", DidYouMean(s, names),
                                                     "; the steps: ", absl::StrJoin(names, ", ")));
    }
  }
  for (const char* text : kSteps) {
    std::string name = StepName(text);
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    if (name == "fold-constants" && !size_limit.empty()) texts.push_back(absl::StrCat(name, "(max-size=", size_limit, ")"));
    else if (name == "inline-functions") texts.push_back(absl::StrCat(name, "(when=", inline_when, ")"));
    else texts.push_back(text);
  }
  return texts;
}

class SimplifyPass : public Pass {
 public:
  SimplifyPass(int64_t max_rounds, std::vector<std::string> steps) : max_rounds_(max_rounds), texts_(std::move(steps)) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    std::vector<std::pair<std::string, std::unique_ptr<Pass>>> steps;
    for (const std::string& text : texts_) {
      auto items = ParsePipeline(text);
      if (!items.ok()) return absl::Status(items.status().code(), absl::StrCat("simplify step '", text, "': ", items.status().message()));
      for (const PipelineItem& item : *items) {
        OS_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, item.info->create(item.options));
        steps.emplace_back(item.info->name, std::move(pass));
      }
    }
    PassResult result;
    for (int64_t round = 0; round < max_rounds_; ++round) {
      bool changed = false;
      // The steps keep the types they infer in memory. After a round that changed the
      // graph, a type inferred before a fold may hold an unknown dim that is decidable now;
      // a round that started from such types could report "no change" where a run on the
      // saved output (which re-infers) finds more. So every round starts from the types a
      // reload would see, plus the static ones (always still true).
      if (round > 0) ForgetInferredTypes(model);
      for (auto& [name, pass] : steps) {
        auto step = pass->Run(model, context);
        if (!step.ok()) {
          return absl::Status(step.status().code(), absl::StrCat("step '", name, "': ", step.status().message()));
        }
        changed |= step->changed;
        for (const auto& [what, n] : step->counts) result.counts[absl::StrCat(name, "/", what)] += n;
      }
      result.counts["rounds"] = round + 1;
      result.changed |= changed;
      if (!changed) break;
      if (round + 1 == max_rounds_) result.counts["stopped-at-max-rounds"] = 1;  // not a fixed point yet
    }
    return result;
  }

 private:
  int64_t max_rounds_;
  std::vector<std::string> texts_;
};

}  // namespace

PassInfo SimplifyPassInfo() {
  return {"simplify",
          "inline-functions(when=simplifies), fold-constants, resolve-shapes, simplify-reductions, fuse-conv-bn, fold-into-weights, "
          "fix-layernorm(to=native,custom-ops=false), strip-identity-cast, fuse-reshapes, fuse-transposes, "
          "extract-constants, dedupe-initializers, cse, dce, to a fixed point",
          {{"max-rounds", "at most this many rounds", "10"},
           {"skip", "steps to leave out, ';'-separated (e.g. fuse-conv-bn;cse)", ""},
           {"size-limit", "fold-constants' max-size: bytes a folded output may take", ""},
           {"inline", "simplifies (inline a local function's call only where that cannot add nodes) | always", "simplifies"}},
          [](const PassOptions& o) -> StatusOr<std::unique_ptr<Pass>> {
            OS_ASSIGN_OR_RETURN(int64_t rounds, o.GetInt("max-rounds", 10));
            if (rounds < 1) return absl::InvalidArgumentError("max-rounds must be at least 1");
            std::string size_limit = o.GetString("size-limit", "");
            int64_t bytes;
            if (!size_limit.empty() && (!absl::SimpleAtoi(size_limit, &bytes) || bytes < 0))
              return absl::InvalidArgumentError(absl::StrCat("size-limit must be a byte count, not '", size_limit, "'"));
            std::string inline_when = o.GetString("inline", "simplifies");
            if (inline_when != "simplifies" && inline_when != "always")
              return absl::InvalidArgumentError(absl::StrCat("inline must be simplifies or always, not '", inline_when, "'"));
            OS_ASSIGN_OR_RETURN(auto steps, StepTexts(o.GetList("skip"), size_limit, inline_when));
            return std::make_unique<SimplifyPass>(rounds, std::move(steps));
          }};
}

}  // namespace onnxsurgeon::passes
