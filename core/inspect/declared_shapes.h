// Declared shapes (graph outputs, value_info) that contradict what the graph computes.
//
// Exporters sometimes declare a shape the computation does not produce (torch 1.x traced
// a graph output as rank 2 that is rank 3). onnxruntime runs such a model with a warning,
// and onnx's checker accepts it as long as its inference cannot prove the real shape; after
// a rewrite (an opset upgrade gives onnx data propagation through Shape -> Reshape) the
// checker proves it and rejects the model. `inspect` reports these declarations; the
// fix-declared-shapes pass replaces each by the computed shape, and so do the rewrites
// that make one visible (RepairDeclaredShapes).
#pragma once

#include <string>
#include <vector>

#include "core/ir/model.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

struct DeclaredShapeConflict {
  std::string value;          // the value's name
  bool graph_output = false;  // else a main-graph value_info entry
  onnx::TypeProto declared;
  onnx::TypeProto inferred;  // what the local rules and onnx inference (data propagation on) compute
};

// Given a model. Execute nothing (the model is read; inference runs on a copy whose
// declarations are removed). Result the main-graph declarations whose rank or a static
// dim differs from the computed one.
std::vector<DeclaredShapeConflict> DeclaredShapeConflicts(const Model& model);

// Given a model. Execute replaces each declaration DeclaredShapeConflicts finds by the
// computed type (what fix-declared-shapes does; convert-opset and the pass manager's final
// check do it where a rewrite made a stale declaration visible to onnx's checker).
// Result the declarations replaced.
std::vector<DeclaredShapeConflict> RepairDeclaredShapes(Model& model);

}  // namespace onnxsurgeon
