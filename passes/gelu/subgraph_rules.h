// The GELU subgraphs exporters and hand code write, as pattern rules. Shared by
// fuse-gelu (subgraph -> Gelu) and rewrite-gelu(subgraphs=true) (subgraph -> another form).
//
//   exact:  x * 0.5 * (1 + Erf(x / sqrt(2)))
//   tanh:   x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))
//
// matched in any operand order and any association of the products (x * (0.5 * (1+f)),
// (x * 0.5) * (1+f), ...), with x / 2 for x * 0.5, Erf(x * 0.70710678) for Erf(x / sqrt 2),
// x^3 as any Mul tree of x, x, x (0.044715 anywhere in it) or Pow(x, 3), and Megatron's
// sqrt(2/pi) * x * (1 + 0.044715 * x * x). sqrt 2, sqrt(2/pi) and 0.044715 must be right
// to the precision of their own type (fp32/fp64 within 1e-4 relative; fp16, bf16 within
// their rounding); 0.5, 1, 2 and the exponent 3 exactly. Every intermediate must feed only
// the match.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/pass/pattern_pass.h"
#include "core/rewrite/rule.h"

namespace onnxsurgeon::gelu {

enum class GeluKind { kExact, kTanh };

// Given the matched x and the rewriter (insertion point at the root), returns the value
// that replaces the subgraph.
using GeluReplace = std::function<StatusOr<Value*>(GeluKind kind, Value* x, const pattern::Match&, Rewriter&)>;

// A check that may refuse a match, saying why.
using GeluCheck = std::function<Verdict<>(const pattern::Match&)>;

// Adds to `pass` one rule per root form of each kind, named "<prefix>-erf#N" /
// "<prefix>-tanh#N"; `check` (null: every match) may refuse a match, saying why.
//   Given:   %d = Div(%x, 1.4142135)   %e = Erf(%d)   %a = Add(%e, 1.0)
//            %m = Mul(%x, %a)          %y = Mul(%m, 0.5)
//   Execute: the kExact rule, replace = (x -> Gelu(x))
//   Result:  %y = Gelu(%x)
void AddGeluSubgraphRules(PatternPass& pass, const std::string& prefix, const std::vector<GeluKind>& kinds,
                          GeluReplace replace, GeluCheck check = {});

// "gelu-erf#3" -> "gelu-erf": one count per kind rather than per root form.
PassResult MergeFormCounts(const PassResult& raw);

}  // namespace onnxsurgeon::gelu
