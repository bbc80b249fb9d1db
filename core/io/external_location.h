// Where an external-data file may live: inside the model's folder, reached without ".."
// or a symbolic link that leads out. Loading and saving both ask this one function.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "onnx/onnx_pb.h"

#include "core/ir/status.h"

namespace onnxsurgeon {

// Checks that an external-data location stays inside `base_dir` (no absolute path, no
// "..", no symlink leading out). Result the resolved path.
StatusOr<std::string> ResolveExternalLocation(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name);

// Protobuf refuses to parse messages past 2 GiB; leave room for the non-weight fields.
inline constexpr uint64_t kInlineLimit = (uint64_t{1} << 31) - (uint64_t{64} << 20);

// A tensor's external_data entries: where its bytes are.
struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

// Given a tensor's metadata and its name (for the message). Result its entries, or an
// error for a malformed offset or length or a missing location.
StatusOr<ExternalRef> ParseExternalRef(const onnx::TensorProto& meta, const std::string& name);

}  // namespace onnxsurgeon
