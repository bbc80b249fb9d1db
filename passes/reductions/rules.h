// Rules for reductions that need no reduction, used by the simplify-reductions pass.
//
//   sum-to-mean       ReduceSum(x) * (1/N) | (1/N) * ReduceSum(x) | ReduceSum(x) / N
//                       -> ReduceMean(x), same axes and keepdims (passes/reductions/mean.h:
//                       N static, the factor 1/N within one ulp of its float type)
//   reduce-over-ones  Reduce{Mean,Max,Min,Sum,Prod}(x) over axes that all have static
//                       size 1 -> x (keepdims=1) | Squeeze(x, axes) (keepdims=0); with
//                       noop_with_empty_axes=1 and no axes -> x
//   arg-over-one      ArgMax/ArgMin(x) over an axis of static size 1 -> zeros
//                       (ConstantOfShape of the static output shape)
//   softmax-over-one  Softmax/LogSoftmax over an axis of static size 1 (below opset 13:
//                       the flattened axes from `axis` on) -> ones / zeros of x's shape
//                       and type; only with assume_finite (see below)
//
// Exactness. Reducing one element gives that element for Mean, Max, Min, Sum and Prod
// (NaN and infinities included; a Sum of -0 may print +0 in runtimes that add it to a
// zero accumulator), and the index of one element is 0 whatever it holds. Softmax of one
// element is exp(x - x) / exp(x - x) = 1, and LogSoftmax 0, only for finite x: for NaN or
// +-inf, x - x is NaN and so is the result. The fold is therefore opt-in
// (assume_finite: the caller vouches its inputs are finite) and refused otherwise, saying
// so. ReduceSum * (1/N) -> ReduceMean rounds the mean once instead of twice (and uses the
// exact 1/N rather than the stored factor): within an ulp of the original, and exact when
// 1/N is (N a power of two).
#pragma once

#include <memory>
#include <vector>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::reductions {

std::vector<std::unique_ptr<RewriteRule>> MakeRules(bool assume_finite);

// The ops the rules are rooted at (a pass skips shape inference when none is present).
const std::vector<std::string>& RootOps();

}  // namespace onnxsurgeon::reductions
