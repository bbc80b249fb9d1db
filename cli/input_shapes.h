// --input-shapes / --overwrite-input-shape, as onnx-simplifier spells them:
//   name:1,3,320,320   (or 1x3x320x320; '?' or -1 keeps the model's dim)
//   1,3,320,320        a bare shape, for a model with one input
// Several go in several arguments or one ';'-separated argument.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/input_shapes.h"
#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon::cli {

// Does this argument look like a shape spec (so it follows --input-shapes, not a model path)?
bool LooksLikeInputShape(const std::string& arg);

// The arguments' items (core/ir/input_shapes.h), or an error starting "--input-shapes: ".
StatusOr<InputShapes> ParseInputShapeArgs(const std::vector<std::string>& args);

// Given specs and the loaded model. Execute names the bare shape's input and checks each
// name is a graph input. Result input -> dims.
StatusOr<std::map<std::string, std::vector<int64_t>>> ResolveInputShapes(const InputShapes& specs, const Model& model);

// set-input-shape's shapes= value for them: "a:1x3;b:?x4".
std::string SetInputShapeValue(const std::map<std::string, std::vector<int64_t>>& shapes);

}  // namespace onnxsurgeon::cli
