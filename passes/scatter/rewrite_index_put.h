// What rewrite-index-put rewrites, for the target check to ask.
#pragma once

#include "core/ir/node.h"

namespace onnxsurgeon::passes {

// An index_put torch left behind: org.pytorch.aten::ATen<operator="index_put" | "index_put_">,
// or index_put / index_put_ in another non-standard domain.
bool IsIndexPut(const Node& n);

}  // namespace onnxsurgeon::passes
