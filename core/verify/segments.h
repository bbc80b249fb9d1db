// A model cut into segments for `compare`: consecutive runs of its main graph's nodes
// (topological order), each saved as a model of its own whose outputs are the tensors to
// compare it computes and the values later segments read. Running the segments in order,
// feeding each the values it reads, computes every node once while exposing every tensor,
// and holds only a batch of exposed tensors and the live values at a time (a model with
// every intermediate as an output would hold them all at the end of its one run).
//
// A cut is made once a segment exposes `batch` tensors, at the first place where every
// value crossing it has an element type and a rank (a segment's inputs need them); types
// missing from the model come from one onnx shape inference of the whole model. Each
// segment is the `extract` pass run on a copy of the model that shares its weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

struct Segment {
  std::string path;                  // the saved segment model
  std::vector<std::string> inputs;   // values it reads: graph inputs, earlier segments' outputs
  std::vector<std::string> outputs;  // everything it computes for others
  std::vector<std::string> exposed;  // of those, the tensors to compare
  std::vector<std::string> release;  // values no later segment reads (dropped after it)
};

struct SegmentOptions {
  int64_t batch = 64;  // exposed tensors per segment before a cut
};

// Given a model (its main graph is sorted topologically first, a reorder only), names of
// its values to expose, a folder and a file prefix. Execute saves the segments there as
// PREFIX_NNN.onnx with their weights in PREFIX_NNN.onnx.data. Result the segments in
// order; exposed names that are not main-graph node outputs, or have no type onnx can
// infer, are left out (the caller reports them as not computed).
StatusOr<std::vector<Segment>> WriteSegments(Model& model, const std::vector<std::string>& exposed,
                                             const SegmentOptions& options, const std::string& dir,
                                             const std::string& prefix);

// Given a model. Result a copy sharing its weights (serialized without them and loaded back
// viewing them): what compare cuts and bisect runs passes on, leaving the original as it is.
StatusOr<std::unique_ptr<Model>> CopySharingWeights(const Model& model);

// The inputs a model must be fed (graph inputs that are not initializers): name, element
// type and dims (-1 for a symbolic or unknown dim, with its symbol in `symbols`).
struct InputSpec {
  std::string name;
  int32_t elem_type = 0;
  std::vector<int64_t> dims;
  std::vector<std::string> symbols;
};
std::vector<InputSpec> InputSpecs(const Model& model);

}  // namespace onnxsurgeon
