// Exact ScatterND reductions without the `reduction` attribute. Shared by
// lower-scatternd-reduction and rewrite-index-put (accumulate=True below opset 16).
#pragma once

#include <cstdint>

#include "core/ir/value.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::lowering {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// "Add", "Mul", "Max", "Min".
const char* CombineOp(Reduction r);

// Given ScatterND's data, indices and updates, a reduction other than none, and the
// default-domain opset (>= 13), the element type of data (0: unknown; then, for add and
// mul, the identity is made with CastLike, which needs opset >= 15). Execute emits, at the insertion point,
//   total[i] = reduce over j with indices[j] == indices[i] (whole tuples, negative
//              entries normalised against data's shape) of updates[j]
// as an N x N x M Where (N index tuples, M elements per update) and a reduction over j.
// Result total, shaped as updates: ScatterND(data, indices, data[indices] (op) total)
// then equals the reduction, repeated indices included.
Value* CombineDuplicateUpdates(Rewriter& rw, Value* data, Value* indices, Value* updates, Reduction reduction,
                               int64_t opset, int32_t elem_type);

}  // namespace onnxsurgeon::lowering
