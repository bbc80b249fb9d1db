// Input shapes as users give them (--input-shapes, set-input-shape's shapes=, the target
// pass's input-shapes=): one type and one parser.
//   images:1,3,320,320    NAME:DIMS (split at the last ':': names may hold ':'); dims
//   ids:1x?               separated by 'x' or ','; '?' (or -1) keeps the model's dim
//   1,3,320,320           DIMS alone: the model's only input (where names are optional)
// Several items are ';'-separated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/status.h"

namespace onnxsurgeon {

struct InputShape {
  std::string name;           // empty: the model's only input (a bare DIMS)
  std::vector<int64_t> dims;  // kKeepDim: keep the model's dim
  static constexpr int64_t kKeepDim = -1;
};
using InputShapes = std::vector<InputShape>;

enum class ShapeNames { kRequired, kOptional };

// Given ';'-separated items. Result them in order, or an error naming the item (or the
// dim) that is not NAME:DIMS (or DIMS, where names are optional).
StatusOr<InputShapes> ParseInputShapes(std::string_view text, ShapeNames names);

// Given shapes. Result their text, NAME:DIMS items joined by ';', dims by 'x' ("a:1x3;b:?x4").
std::string InputShapesText(const InputShapes& shapes);

}  // namespace onnxsurgeon
