#include "core/ir/dtypes.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

std::string DataTypeName(int32_t data_type) {
  if (!onnx::TensorProto_DataType_IsValid(data_type)) return absl::StrCat("data type ", data_type);
  return onnx::TensorProto_DataType_Name(static_cast<onnx::TensorProto_DataType>(data_type));
}

std::string DataTypeNameLower(int32_t data_type) { return absl::AsciiStrToLower(DataTypeName(data_type)); }

}  // namespace onnxsurgeon
