// The rule that lowers a LayerNormalization node to standard ops older opsets know
// (see passes/lowering/layer_norm.h for the emitted form). Used by decompose-layernorm
// and by fix-layernorm when the target has no LayerNormalization.
#pragma once

#include <functional>
#include <memory>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::layernorm {

// `applies(node)` says whether this LayerNormalization node is to be lowered.
std::unique_ptr<RewriteRule> MakeDecomposeRule(std::function<bool(const Node&)> applies);

}  // namespace onnxsurgeon::layernorm
