// The places a rewrite touched, for the HTML report: removed or changed nodes of the
// original, grouped by connectivity, each with the added or changed nodes of the result
// that connect to the same values, as two small Graphviz DOT graphs (before, after).
#pragma once

#include <string>
#include <vector>

#include "core/ir/model.h"

namespace onnxsurgeon {

struct RewriteRegion {
  std::string title;                  // "MatMul, Add -> Gemm"
  std::string dot_before, dot_after;  // graphviz source; neighbours drawn grey
  size_t nodes_before = 0, nodes_after = 0;
};

// At most max_regions regions, biggest first; a region's graphs keep at most max_nodes
// touched nodes each (the title says when one was cut).
std::vector<RewriteRegion> FindRewriteRegions(const Model& before, const Model& after, size_t max_regions = 6,
                                              size_t max_nodes = 24);

}  // namespace onnxsurgeon
