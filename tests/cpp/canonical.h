// Canonical text of a model for golden tests: intermediate values and non-input
// initializers renamed in order of appearance (v0, v1, ... / c0, c1, ...), node names,
// provenance metadata and value_info dropped, initializers sorted. Two models that differ
// only in generated names print the same.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"

namespace onnxsurgeon::testing {

std::string CanonicalText(onnx::ModelProto model);

}  // namespace onnxsurgeon::testing
