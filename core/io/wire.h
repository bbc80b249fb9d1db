// Protobuf wire-format helpers for the load/save fast path.
//
// Loading: protobuf's C++ parser copies every bytes field, and it refuses messages over
// 2 GiB. Weights are almost all in GraphProto.initializer[].raw_data, so the loader first
// walks the ModelProto wire format, cuts those payloads out (recording where they are in
// the mapped file) and parses only the small remainder. Tensors then point into the map.
//
// Saving does the reverse: the small protos are serialized by protobuf and the payloads
// are streamed between them as length-delimited fields (see model_io.cc).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/status.h"

namespace onnxsurgeon::wire {

// Field numbers of the ONNX schema that the fast path touches.
inline constexpr int kModelGraph = 7;        // ModelProto.graph
inline constexpr int kGraphInitializer = 5;  // GraphProto.initializer
inline constexpr int kTensorRawData = 9;     // TensorProto.raw_data
inline constexpr int kWireLen = 2;           // length-delimited wire type

struct StrippedModel {
  std::string remainder;  // the ModelProto without the main graph's initializer raw_data
  // One entry per main-graph initializer, in file order: the raw_data bytes if present.
  std::vector<std::optional<std::string_view>> raw_data;
};

// Given the bytes of a serialized ModelProto.
// Execute strips main-graph initializer raw_data payloads, validating the wire format.
// Result the remainder and views into `bytes`; an error for truncated or corrupt input.
StatusOr<StrippedModel> StripInitializerPayloads(std::string_view bytes);

// How deep the messages of a serialized ModelProto nest, along the message fields of
// onnx.proto (graph -> node -> attribute -> graph, functions, nested TypeProtos, ...).
// protobuf's parser refuses more than its recursion limit (100 nested messages); this
// names that cause when a parse fails. Counting stops at `max_level`.
struct Nesting {
  int messages = 0;      // the deepest message's level (the ModelProto is level 0)
  int graphs = 0;        // the most GraphProtos on one path (the main graph counts 1)
  bool corrupt = false;  // a field on the way did not parse; the figures are a lower bound
};
Nesting MeasureNesting(std::string_view model, int max_level);

// The external-data locations that the tensors of a serialized ModelProto (raw payloads
// stripped or not) reference, in file order, each once. Only tensors whose
// data_location is EXTERNAL count. An error for a corrupt message.
StatusOr<std::vector<std::string>> ExternalDataLocations(std::string_view model);

// Appends a varint / a field tag to `out`.
void AppendVarint(std::string& out, uint64_t value);
void AppendTag(std::string& out, int field, int wire_type);
size_t VarintSize(uint64_t value);

}  // namespace onnxsurgeon::wire
