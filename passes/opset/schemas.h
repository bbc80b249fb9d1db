// onnx's schema registry as the opset converter reads it: every version of an op, and
// the schema in force at an opset. Internal to passes/opset.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnx/defs/schema.h"

namespace onnxsurgeon::opset {

using VersionIndex = std::map<std::pair<std::string, std::string>, std::vector<int>>;

// (domain, op) -> every since_version, ascending.
const VersionIndex& Versions();

// The schema of `op` in force at `opset` of `domain`, or null.
const onnx::OpSchema* SchemaAt(const std::string& domain, const std::string& op, int64_t opset);

}  // namespace onnxsurgeon::opset
