// The bounds if-to-where, unroll-loop and unroll-scan take by default, for the pass table
// (passes/passes.def) and the `--target` planner's questions (passes/targeting), which run
// them with their defaults. Here, not in passes/control_flow/, so the table's registry.cc
// does not include a folder whose passes include it.
#pragma once

#include <cstdint>

namespace onnxsurgeon::passes::control_flow {

// if-to-where: most nodes (Constants not counted) a branch may have: both always run.
inline constexpr int64_t kDefaultMaxBranchNodes = 64;
// unroll-loop: most iterations, and most body nodes over all iterations (unroll-scan:
// most steps, and most body nodes over all steps).
inline constexpr int64_t kDefaultMaxTrips = 64;
inline constexpr int64_t kDefaultMaxUnrolledNodes = 4096;

}  // namespace onnxsurgeon::passes::control_flow
