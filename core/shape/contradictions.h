// Subgraphs that fail whenever they run, for the shapes the model now has.
//
// An If branch can be valid ONNX and still fail whenever it runs, for the input shapes the
// model now has: Silero VAD's 8 kHz branch, once its input is fixed at a 16 kHz chunk
// (`--input-shapes`), reshapes a frame count computed at run time into a rank the LSTM
// after it refuses. The model hides that behind shapes computed at run time, so onnx's
// checker accepts it, and onnxruntime only fails if the branch is taken. Folding those
// shapes into constants makes the contradiction static: onnx's checker then refuses the
// model, and the run writes nothing. A pass that turns computed values inside a subgraph
// into constants asks FoldingContradicts with what it would fold (fold-constants: its
// folds; resolve-shapes: what the symbolic analysis decides), and leaves a subgraph that
// would contradict itself as it was.
#pragma once

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/model.h"
#include "core/ir/tensor.h"
#include "core/shape/symbolic.h"

namespace onnxsurgeon {

// Given a subgraph of `model` and constants that would replace some of the values defined
// in it or in the subgraphs nested in it. Result true when onnx's checker-strict shape
// inference (no data propagation) accepts the subgraph alone as it is and refuses it with
// those constants in place. The subgraph alone: its reads of enclosing values become
// graph inputs typed as the values are (small initializers keep their data); when one of
// them has no type, or the subgraph fails as it is, there is no verdict (false).
bool FoldingContradicts(const Model& model, const Graph& subgraph,
                        const absl::flat_hash_map<const Value*, Tensor>& constants);

// Given a model and the symbolic analysis of it. Result the subgraphs (each with the
// subgraphs nested in it) that fail whenever they run as far as the analysis knows: with
// every small integer vector it decides (Shape of static dims, the arithmetic on them)
// in place as a constant, FoldingContradicts. Empty for a model without subgraphs.
absl::flat_hash_set<const Graph*> SubgraphsFailingForTheseShapes(const Model& model, const SymbolicShapes& shapes);

}  // namespace onnxsurgeon
