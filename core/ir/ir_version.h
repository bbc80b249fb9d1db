// IR versions and opset imports: the lowest ir_version a model can declare, and the
// opset imports nothing uses.
//
// A runtime refuses a model whose ir_version is newer than it knows ("Unsupported model IR
// version: 10") even when every op is one it has. The lowest IR version a model allows is
// the highest of
//   - the opset imports' floors, from onnx.helper.VERSION_TABLE (ai.onnx 15 needs IR 8,
//     19 needs 9, 21 needs 10, 23 needs 11, 24 needs 12, 25 needs 13, 28 needs 14; ai.onnx.ml
//     likewise), and
//   - the floors of the features it uses (onnx.in.proto's IR history): initializers that
//     are not graph inputs and bfloat16 (4), quantization annotations (5), sparse tensors
//     (6), training info (7), model-local functions, Optional and SparseTensor types (8),
//     function attribute defaults and float8 types (9), int4/uint4 and overloads (10),
//     float4e2m1 and multi-device configurations (11), float8e8m0 (12), int2/uint2 (13),
//     float6 (14).
// metadata_props (IR 10) is not a floor: it is documentation, and readers of older IR
// versions skip the field as an unknown protobuf field.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

// The lowest IR version that can import `domain` at `version` (-1: no floor known, e.g. a
// custom domain).
int64_t MinIrVersionForOpset(const std::string& domain, int64_t version);

struct IrFloor {
  int64_t ir = 3;
  std::string why;  // the feature (or import) that sets the floor, e.g. "float8 type FLOAT8E4M3FN (value 'x')"
};

// Given a model. Result the lowest ir_version it can declare, and why.
IrFloor MinIrVersion(const Model& model);

// Given a model and the highest IR version the target reads (-1: no limit). Execute sets
// ir_version to the lowest the model allows (never raises it above what it was unless the
// opset imports need it). Result the new ir_version; an error naming the feature when
// that is still above max_ir (the model is left unchanged).
StatusOr<int64_t> LowerIrVersion(Model& model, int64_t max_ir = -1);

// Given a model. Execute removes the opset imports of domains no node (main graph,
// subgraphs, function bodies) and no function uses; the default domain stays. Function
// bodies' own imports are pruned the same way. Result the domains removed from the model's
// imports.
std::vector<std::string> RemoveUnusedOpsetImports(Model& model);

}  // namespace onnxsurgeon
