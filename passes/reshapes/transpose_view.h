// transpose-view: a Transpose that only moves dims of size 1, next to a Reshape, written as
// the Reshape it is, so fuse-reshapes' chain rules merge the two (transpose_view.cc).
#pragma once

#include <memory>

#include "core/rewrite/rule.h"

namespace onnxsurgeon::passes::reshapes {

std::unique_ptr<RewriteRule> MakeTransposeViewRule();

}  // namespace onnxsurgeon::passes::reshapes
