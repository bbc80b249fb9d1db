// transpose-to-reshape: writes a Transpose that only moves dims of size 1 as a Reshape, for
// runtimes that mistranslate such Transposes: nncase 1.9 computes Transpose(Squeeze(Y))
// after an LSTM wrong (torch's batch_first LSTM export, [24,1,16] -> [1,24,16]: off by
// 0.73; measured here) and gets the same move right as a Reshape.
//
// Exact: a permutation that keeps the dims of size above 1 in their order leaves every
// element at the same row-major offset; it only changes where the unit dims stand, which is
// what Reshape to the output shape does. The input's shape must be known with static unit
// dims; at most one other dim may be dynamic (it becomes the Reshape's -1), and no dim may
// be 0 (a 0 in Reshape's shape copies a dim).
//
// Given:  %y = Transpose<perm = [1, 0, 2]>(%x)          %x: float[24,1,16]
// Result: %y = Reshape(%x, [1,24,16])
#include "passes/registry.h"
#include "passes/reshapes/as_reshape.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes {

StatusOr<std::unique_ptr<Pass>> CreateTransposeToReshapePass(const PassOptions&) {
  return reshapes::MakeAsReshapePass("transpose-to-reshape", "Transpose", reshapes::TransposeAsReshape);
}

}  // namespace onnxsurgeon::passes
