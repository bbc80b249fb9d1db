// flatten-to-reshape: writes a Flatten whose axis is not 1 as a Reshape to its 2-D shape, for
// runtimes that mistranslate such Flattens: nncase 1.9 refuses Flatten with axis 0, 2 or 3
// ('Shapes must be same') and, behind optimum's Llama mask (Cast(attention_mask, bool) ->
// Flatten(axis=2) -> Gather), compiles it and corrupts memory (the decoder's logits 99.7%
// off; targets/probes/embedding_models.py). The same moves as Reshapes match.
//
// Exact: Flatten(x, axis) is x in row-major order as [prod(dims[:axis]), prod(dims[axis:])],
// which is what Reshape to that shape does. The input's rank must be known; each side's
// dims must be static, except that one side may hold dynamic dims (it becomes the
// Reshape's -1). A dim of size 0 makes a 0 side, which Reshape would read as "copy": refused.
//
// Given:  %y = Flatten<axis = 2>(%x)          %x: bool[1,5]
// Result: %y = Reshape(%x, [5,1])
#include "passes/registry.h"
#include "passes/reshapes/as_reshape.h"
#include "passes/reshapes/reshape_facts.h"

namespace onnxsurgeon::passes {

StatusOr<std::unique_ptr<Pass>> CreateFlattenToReshapePass(const PassOptions&) {
  return reshapes::MakeAsReshapePass("flatten-to-reshape", "Flatten", reshapes::FlattenAsReshape);
}

}  // namespace onnxsurgeon::passes
