// The picture of a `compare`: one point per compared tensor along model A's topological
// order, its error relative to tolerance on a log scale (1 = at the tolerance), the
// tolerance as a line, points over it in red and the first divergence marked and named.
// Read at a glance: flat and low, then where the curve jumps is where the models part.
#pragma once

#include <string>

#include "core/verify/compare.h"

namespace onnxsurgeon {

// The error of a row relative to its tolerance: max over elements of
// |a - b| / (atol + rtol * |b|) (the helper's); for exact types 0 (equal) or large.
double ToleranceRatio(const TensorComparison& row);

// An inline SVG (no script), or a paragraph saying there was nothing to plot.
std::string TensorErrorPlotSvg(const CompareResult& result);

}  // namespace onnxsurgeon
