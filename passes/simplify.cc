// simplify: the standard cleanup pipeline as one pass. Each round runs
//   inline-functions, fold-constants, fuse-conv-bn, strip-identity-cast,
//   extract-constants, dedupe-initializers, cse, dce
// and rounds repeat until a whole round changes nothing (a fixed point), at most
// `max-rounds` times. Every step is the registered pass of that name with its default
// options (looked up with FindPass); a build without one of them fails with "unknown pass".
// The report counts per step, e.g. `strip-identity-cast/identity`, and `rounds`.
// extract-constants (Constant nodes -> initializers, as onnx-simplifier leaves them) is
// in the list because a Constant node is a node: without it, every exporter's Constant
// count stays in the graph (218 of 1205 nodes left on the corpus; docs/benchmarks.md).
//
// Options:
//   max-rounds=10   stop after this many rounds even if the last one changed something
//
// Before:  s = Shape(X); n = Gather(s, 0); a = Identity(X); Y = Reshape(a, ...) ...
// After:   what the eight passes leave, with nothing left for any of them to do.
#include "absl/strings/str_join.h"
#include "passes/registry.h"

namespace onnxsurgeon::passes {
namespace {

constexpr const char* kSteps[] = {"inline-functions",  "fold-constants",      "fuse-conv-bn", "strip-identity-cast",
                                  "extract-constants", "dedupe-initializers", "cse",          "dce"};

class SimplifyPass : public Pass {
 public:
  explicit SimplifyPass(int64_t max_rounds) : max_rounds_(max_rounds) {}

  StatusOr<PassResult> Run(Model& model, const PassContext& context) override {
    std::vector<std::pair<std::string, std::unique_ptr<Pass>>> steps;
    for (const char* name : kSteps) {
      const PassInfo* info = FindPass(name);
      if (!info) {
        std::vector<std::string> known;
        for (const PassInfo& p : AllPasses()) known.push_back(p.name);
        return absl::NotFoundError(absl::StrCat("unknown pass '", name,
                                                "' (not in this build; known passes: ", absl::StrJoin(known, ", "), ")"));
      }
      OS_ASSIGN_OR_RETURN(std::unique_ptr<Pass> pass, info->create(PassOptions()));
      steps.emplace_back(name, std::move(pass));
    }
    PassResult result;
    for (int64_t round = 0; round < max_rounds_; ++round) {
      bool changed = false;
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
};

}  // namespace

PassInfo SimplifyPassInfo() {
  return {"simplify",
          "inline-functions, fold-constants, fuse-conv-bn, strip-identity-cast, extract-constants, "
          "dedupe-initializers, cse, dce, "
          "to a fixed point",
          {{"max-rounds", "at most this many rounds", "10"}},
          [](const PassOptions& o) -> StatusOr<std::unique_ptr<Pass>> {
            OS_ASSIGN_OR_RETURN(int64_t rounds, o.GetInt("max-rounds", 10));
            if (rounds < 1) return absl::InvalidArgumentError("max-rounds must be at least 1");
            return std::make_unique<SimplifyPass>(rounds);
          }};
}

}  // namespace onnxsurgeon::passes
