// --calibrate: value ranges measured in onnxruntime on real inputs, for convert-float16's
// ranges= option (python/onnxsurgeon/calibrate.py, run as a helper as --check runs its own).
#pragma once

#include <string>
#include <vector>

#include "core/ir/status.h"

namespace onnxsurgeon {

// Given the model file and .npz input sets (arrays named as the inputs). Execute runs the
// model in onnxruntime with every float value of the main graph exposed, and writes
// `ranges_path` ("MIN MAX NAME" lines). Result how many values were measured, or an error
// naming what to install or what failed.
StatusOr<int64_t> MeasureRanges(const std::string& model_path, const std::vector<std::string>& inputs,
                                const std::string& ranges_path);

}  // namespace onnxsurgeon
