// The one place a constant must stay a Constant node rather than an initializer:
// onnxruntime's transformer optimizer fuses a residual Add and the LayerNormalization that
// reads it into SkipLayerNormalization, but refuses the Add when either operand is an
// initializer (onnxruntime/python/tools/transformers/fusion_skiplayernorm.py: "for
// add_input in add.input: if self.model.get_initializer(add_input) ...: return"). A
// position embedding computed at run time in the export (DINOv2's and YOLOS's
// interpolation, DETR's folded first decoder self-attention) fuses there; written as an
// initializer after folding it would not. As a Constant node it fuses, one node more.
#pragma once

#include <cstdint>
#include <vector>

#include "core/ir/value.h"

namespace onnxsurgeon::passes {

// True when `v` (a constant) is the skip operand of an Add that onnxruntime's
// SkipLayerNormalization fusion would take if `v` were not an initializer: the Add's
// output is read by a LayerNormalization as its input 0 (or by the ReduceMean and Sub that
// start a decomposed one), its other operand is computed (not constant) with a rank-3 shape
// [B, S, H], and `v` is [S, H], [1, S, H] or [B, S, H] with those sizes (the fusion's skip
// shapes; a dim inference could not compute counts as fitting, a graph input's symbolic one
// does not). An other operand that is a Gather (an embedding lookup) counts only as the
// fusion takes it: indices a graph input or a ConstantOfShape, and `v` of its very shape.
bool IsSkipNormOperand(const Value* v);
// The same for a value about to become the constant of `dims` (fold-constants), where a
// lookup's indices computed from anything not constant count as ids (a Reshape of them may
// go later; extract-constants checks the graph simplify leaves).
bool IsSkipNormOperand(const Value* v, const std::vector<int64_t>& dims);

}  // namespace onnxsurgeon::passes
