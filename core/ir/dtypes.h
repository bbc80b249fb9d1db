// Element types by name: one definition of how a TensorProto data type is spelled.
#pragma once

#include <cstdint>
#include <string>

namespace onnxsurgeon {

// Given a TensorProto data type. Result onnx's name of it ("FLOAT16"), or "data type N"
// for a number onnx does not define.
std::string DataTypeName(int32_t data_type);
// The same in lower case ("float16", "data type N"): the spelling of profiles, reports
// and messages.
std::string DataTypeNameLower(int32_t data_type);

}  // namespace onnxsurgeon
