// The resolve-shapes rules: ordinary rewrite rules, run by the greedy driver, that read the
// symbolic shape analysis (core/shape/symbolic.h) the pass ran first, as MLIR's
// IntRangeOptimizations patterns read their DataFlowSolver.
//
//   constant-vector  a computed vector whose every element is a constant (e.g. an Equal of
//                    a dim and -1) -> that constant
//   same-vector      a computed vector whose element list equals an earlier vector's (two
//                    Gathers of the same symbolic dim from different Shape nodes; Concat of
//                    every dim of x; a [n]-vector reshaped to [-1]) -> the earlier value
//   reshape-shape    Reshape(x, s), s computed -> Reshape(x, constant): each element a
//                    constant, or 0 where it is dim i of x (i < rank of x; allowzero=0 only,
//                    as 0 means "copy dim i" only then)
//   where-constant   Where(c, a, b), c a constant or decided all true (all false), the
//                    others broadcasting into a (b) without growing it -> a (b)
//   expand-noop      Expand(x, s), every element of s 1 or x's aligned dim -> x
//   slice-noop       Slice(x, ...), every sliced axis from 0 (step 1) to its dim or past it -> x
//   tile-noop        Tile(x, repeats), every repeat 1 -> x
//   unsqueeze-chain  Unsqueeze(Unsqueeze(x, a1), a2), the inner read only here
//                    -> Unsqueeze(x, a1 and a2 as axes of the result); x not a graph
//                    input (a mask's Unsqueeze pair is what onnxruntime's fusions match)
//   slice-chain      Slice(Slice(x, ...), ...), constant parameters, the inner read only here,
//                    the two cutting different axes -> one Slice of x cutting both
//   flatten-noop     Flatten(x, axis=1), x of rank 2 -> x
// Never introduced: a -1 the model did not have. Reshape's -1 divides the element count by
// the product of the other dims, which is ambiguous (onnxruntime refuses it) when another
// dim is 0; a constant or a copied dim (0) is exactly the value the model computed for
// every input, zero-size tensors included, so rewriting to them never changes a result.
// Graph outputs are never replaced (their names are the model's interface).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/analysis/type_facts.h"
#include "core/rewrite/rule.h"
#include "core/shape/symbolic.h"

namespace onnxsurgeon::resolve_shapes {

// A rule that decides from the analysis: Decide reads the graph and the symbolic analysis
// of the run's TypeFacts (the pass seeds it, RewriteFacts), touching nothing, and returns the plan (or nullopt,
// with `why` saying why when it has something to say); Replace carries the plan out
// through the Rewriter. Named "resolve-shapes/<name>".
template <typename Plan>
class SymbolicRule : public NodeRule<Plan> {
 public:
  SymbolicRule(std::string name, std::string root_op, int benefit = 1)
      : NodeRule<Plan>(absl::StrCat("resolve-shapes/", name), std::move(root_op), "", benefit) {}

 protected:
  Verdict<Plan> Check(Node* root, RewriteFacts& facts) const final {
    std::string why;
    std::optional<Plan> plan = Decide(root, facts.Get<TypeFacts>().Symbolic(), why);
    return Verdict<Plan>::From(std::move(plan), std::move(why));
  }
  virtual std::optional<Plan> Decide(Node* root, const SymbolicShapes& shapes, std::string& why) const = 0;
};

// True when `v`'s uses may be moved to another value.
inline bool Replaceable(const Value* v) { return v && v->HasUsers() && !v->IsGraphOutput(); }

// The rules of the pass; each reads the symbolic analysis of the run (TypeFacts::Symbolic).
std::vector<std::unique_ptr<RewriteRule>> VectorRules();  // constant-vector, same-vector, reshape-shape
std::vector<std::unique_ptr<RewriteRule>> NoopRules();    // where, expand, slice, tile, flatten
std::unique_ptr<RewriteRule> UnsqueezeChainRule();
std::unique_ptr<RewriteRule> SliceChainRule();

}  // namespace onnxsurgeon::resolve_shapes
