// Where an external-data file may live: inside the model's folder, reached without ".."
// or a symbolic link that leads out. Loading and saving both ask this one function.
#pragma once

#include <string>

#include "core/ir/status.h"

namespace onnxsurgeon {

// Checks that an external-data location stays inside `base_dir` (no absolute path, no
// "..", no symlink leading out). Result the resolved path.
StatusOr<std::string> ResolveExternalLocation(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name);

}  // namespace onnxsurgeon
