// The rule that lowers a LayerNormalization node to standard ops older opsets know
// (see passes/lowering/layer_norm.h for the emitted form). Used by decompose-layernorm
// and by fix-layernorm when the target has no LayerNormalization.
#pragma once

#include <functional>
#include <memory>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::layernorm {

// The rule lowering each LayerNormalization node for which `applies(node)` holds:
//   Given:   %y = LayerNormalization<axis=-1, epsilon=1e-5>(%x, %w, %b)
//   Result:  %y = Add(Mul(Div(Sub(%x, %mean), Sqrt(Add(%var, 1e-5))), %w), %b)
//            (%mean, %var: ReduceMeans over the normalized axes; passes/lowering/layer_norm.h)
std::unique_ptr<RewriteRule> MakeDecomposeRule(std::function<bool(const Node&)> applies);

}  // namespace onnxsurgeon::layernorm
