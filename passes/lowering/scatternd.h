// Exact ScatterND reductions without the `reduction` attribute. Shared by
// lower-scatternd-reduction and rewrite-index-put (accumulate=True below opset 16).
#pragma once

#include <cstdint>
#include <optional>

#include "core/ir/value.h"
#include "core/rewrite/rewriter.h"

namespace onnxsurgeon::lowering {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

// "Add", "Mul", "Max", "Min".
const char* CombineOp(Reduction r);

// True when `indices` is a constant whose index tuples are distinct elements of `data`
// (negative entries normalised against data's static shape): then each update hits its
// own element, and ScatterND(data, indices, data[indices] (op) updates) is the reduction.
bool ProvablyDistinct(const Value* indices, const Value* data);

// The largest pair tensor built by default (lower-scatternd-reduction's max-pair-elements,
// and convert-opset's ScatterND-16 step): 64 Mi elements, 256 MB of float32.
inline constexpr int64_t kDefaultMaxPairElements = 67108864;

// CombineDuplicateUpdates builds an N x N x M tensor (N index tuples, M elements per
// update). When N and M are static and N*N*M exceeds `max_elements`, the error saying so
// (`who` names the pass or step); otherwise OK.
Status CheckPairSize(const Node& scatter, const Value* indices, const Value* updates, int64_t max_elements,
                     const std::string& who);

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

// Given ScatterND's data, indices and updates and a reduction other than none (the node
// `scatter` names it in errors). Execute emits the reduction without the attribute:
//   ScatterND(data, indices, data[indices] (op) total)
// with total = updates where the indices are provably distinct (ProvablyDistinct), else
// CombineDuplicateUpdates; with max_pair_elements > 0 a larger pair tensor is the error
// CheckPairSize gives (`who` names the caller). Result the new ScatterND's output.
StatusOr<Value*> ScatterWithoutReduction(Rewriter& rw, const Node& scatter, Value* data, Value* indices, Value* updates,
                                         Reduction reduction, int64_t opset, int32_t elem_type,
                                         int64_t max_pair_elements, const std::string& who);

}  // namespace onnxsurgeon::lowering
