// What gather-scalar-to-reshape decides, for the pass and for the drops-leading-axis
// condition's remedy (passes/targeting/conditions/drops_leading_axis.cc).
#pragma once

#include <optional>
#include <string>

#include "core/ir/node.h"
#include "core/ir/shape.h"

namespace onnxsurgeon::passes {

// Whether `gather` picks one slice of axis 0 by a constant scalar index from data of rank 3 or
// more (`data_shape`, nullopt: unknown rank): the form the pass rewrites.
bool DropsLeadingAxis(const Node& gather, const std::optional<Shape>& data_shape);

// "" when gather-scalar-to-reshape writes `gather` (a DropsLeadingAxis one) as a Gather of the
// one-element index and a Reshape, its data shaped `data_shape`; else why not.
std::string WhyScalarGatherStays(const Node& gather, const std::optional<Shape>& data_shape);

}  // namespace onnxsurgeon::passes
