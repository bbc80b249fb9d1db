// What gather-nonnegative-indices decides, for the pass and for the negative-constant-index
// condition's remedy (passes/targeting/conditions/negative_constant_index.cc).
#pragma once

#include <optional>
#include <string>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes {

// "" when gather-nonnegative-indices writes the Gather `gather`'s negative constant indices
// as non-negative ones, its data being shaped `data_shape` (nullopt: unknown); else why not.
std::string WhyGatherIndicesStay(const Node& gather, const std::optional<Shape>& data_shape);

}  // namespace onnxsurgeon::passes
