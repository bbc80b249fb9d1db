// What pool-to-global and the pool-kernel-exceeds-input condition ask of a pooling node: its
// window per spatial axis, against the input's static dims.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ir/node.h"

namespace onnxsurgeon::passes {

// Given a pooling node (AveragePool, MaxPool, LpPool) and its input's static dims (-1 where
// not static). Result the first spatial axis whose (dilated) kernel is larger than the input
// along it plus its pads ("kernel 320 over 2 on axis 2"), or nullopt when none is (or the
// kernel, an attribute or a dim is unknown).
std::optional<std::string> KernelExceedsInput(const Node& n, const std::vector<int64_t>& dims);

// Given an AveragePool and its input's dims. Result "" when the pool takes one window over the
// whole input (no pads, dilations 1, auto_pad NOTSET, every spatial axis static with a kernel
// at least as large, and one output position per axis: kernel == dim, or ceil_mode=1 and
// kernel - dim < stride), which makes it GlobalAveragePool; else why not.
std::string WhyNotWholeInputAveragePool(const Node& n, const std::vector<int64_t>& dims);

}  // namespace onnxsurgeon::passes
