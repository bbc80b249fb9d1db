// Exporter: IR -> onnx::ModelProto. The inverse of the importer: shells are copied back
// and filled with names, so a model that no pass touched exports equal to what was loaded.
#pragma once

#include <functional>

#include "core/ir/model.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// Decides how an initializer's tensor is written. The default copies its bytes inline.
// The saver uses it to stream large payloads instead of copying them into the proto.
using TensorWriter = std::function<void(const Value& value, const Tensor& tensor, onnx::TensorProto* out)>;

struct ExportOptions {
  // Applied to the main graph's initializers only; others are always copied inline.
  TensorWriter main_initializer_writer;
};

// Given a model. Execute builds the ModelProto (bytes copied unless a writer says
// otherwise). Result a proto equal to the loaded one if nothing changed.
onnx::ModelProto ExportModel(const Model& model, const ExportOptions& options = {});

// The graph alone (for printing a subgraph, tests).
onnx::GraphProto ExportGraph(const Graph& graph);

}  // namespace onnxsurgeon
