// Load-time validation: what the IR and every pass rely on, checked once in the importer
// so that no pass or pattern rule ever sees a node or tensor that breaks it. Cheap by
// design (one walk, no shape inference, not onnx's full checker):
//
//  - ir_version in [1, the newest onnx knows]; a graph; opset_import present, one entry
//    per domain, versions onnx knows for its own domains; every domain a node uses imported;
//  - no duplicate local functions (domain, name, overload), no output of a function or of
//    the main graph listed twice (a subgraph's outputs bind by position, so one value may
//    stand for two of them);
//  - every node has an op_type, and a node with an onnx schema has an input and output
//    count that schema allows, and no empty name where it requires a value (unknown and
//    custom-domain ops are left alone);
//  - every tensor (initializers, sparse initializer parts, attribute tensors) has a known
//    data type, dims >= 0 whose product does not overflow, and exactly as much data as
//    its dims and type say (raw_data bytes, typed-field count, external range length).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/ir/status.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// Given a parsed model and, when the loader cut them out (or they are held elsewhere), the
// sizes of the main graph's initializer raw_data payloads (one entry per initializer, in
// order).
// Result OK, or an error naming the graph, node or tensor at fault.
Status ValidateModelProto(const onnx::ModelProto& model,
                          const std::vector<std::optional<uint64_t>>* main_initializer_raw_sizes = nullptr);

// Given a tensor's metadata and the byte count of its payload (raw_data or an external
// range; nullopt: typed fields or still-unloaded external data).
// Result OK when the data matches the dims and type; the error names `where`.
Status ValidateTensorData(const onnx::TensorProto& tensor, std::optional<uint64_t> payload_bytes,
                          std::string_view where);

// The input or output count an onnx schema allows, and no empty operand where it requires
// one (OpSchema::Verify's arity rules, without its attribute and type checks). Both the
// loader (on NodeProtos) and the pass manager (on IR nodes, before and after a pipeline)
// call it, so a node is judged the same way on the way in and on the way out.
// Given the node's schema, the count of its inputs (`kind` "input") or outputs ("output"),
// trailing empty ones included as onnx counts them, and which of them are empty.
// Result OK, or an error like "has 1 inputs; MatMul-13 takes 2" for the caller to prefix
// with the node's name.
Status CheckOperandCount(const onnx::OpSchema& schema, std::string_view kind, int count,
                         absl::FunctionRef<bool(int)> is_empty);

// The raw-data byte count a tensor's dims and type call for; nullopt when the type has no
// raw layout or the dims are malformed.
std::optional<uint64_t> ExpectedRawBytes(const onnx::TensorProto& tensor);

}  // namespace onnxsurgeon
