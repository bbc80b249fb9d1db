// Constant values: what a pass may treat as a known number.
//
// A value is constant when it is an initializer that is not also a graph input (inputs
// can be overridden at run time) or the output of a Constant node (any of its attribute
// forms). ConstantData gives its elements in raw little-endian layout plus decoders.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/value.h"

namespace onnxsurgeon {

struct ConstantData {
  int32_t data_type = 0;  // onnx::TensorProto::DataType
  std::vector<int64_t> dims;
  std::string_view raw;  // elements, little-endian (points into `owned` or the tensor)
  std::shared_ptr<const std::string> owned;

  int64_t num_elements() const;
  bool is_scalar() const { return num_elements() == 1; }
  // Elements as doubles (float/double/float16/bfloat16/ints/bool); nullopt otherwise.
  std::optional<std::vector<double>> AsDoubles() const;
  std::optional<std::vector<int64_t>> AsInt64s() const;  // integer and bool types
  std::optional<double> ScalarAsDouble() const;
};

// The constant behind `value`, or nullopt when it is not a constant.
std::optional<ConstantData> GetConstant(const Value* value);
// The data type and dims GetConstant(value) would give, nullopt exactly when it gives
// nullopt, without reading a tensor's elements (a deferred weight is not fetched).
std::optional<std::pair<int32_t, std::vector<int64_t>>> GetConstantTypeAndDims(const Value* value);
// The elements of a tensor attribute (Constant's or ConstantOfShape's `value`).
std::optional<ConstantData> GetConstant(const onnx::TensorProto& tensor);

// The integer elements behind `value`, looking through ops that only reshape a constant
// (Reshape, Squeeze, Unsqueeze, Flatten, Identity), as exporters write axes and shapes;
// nullopt when it is not such a constant.
std::optional<std::vector<int64_t>> ConstantInt64s(const Value* value);

// FLOAT or DOUBLE: the element types passes that recompute weights in double write back.
bool IsFloatOrDouble(int32_t data_type);
// `values` as raw little-endian bytes of a FLOAT (rounded once from double) or DOUBLE tensor.
std::string EncodeFloatOrDouble(const std::vector<double>& values, int32_t data_type);

// float16 / bfloat16 bit patterns to float, and back (round to nearest even, subnormals
// kept, as onnxruntime's MLFloat16 / BFloat16 constructors do).
float HalfToFloat(uint16_t bits);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToHalf(float f);
uint16_t FloatToBFloat16(float f);

}  // namespace onnxsurgeon
