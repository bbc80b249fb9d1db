// Importer: onnx::ModelProto -> IR. Moves strings and sub-messages out of the proto rather
// than copying them, resolves names to Values (outer scopes included), and rejects models
// whose names do not form a valid graph: duplicate definitions, dangling references, cycles.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

struct ImportOptions {
  // Raw bytes of the main graph's initializers, cut out of the file by the loader (one
  // entry per initializer, in order) and the owner that keeps them alive. Empty when the
  // proto still holds its raw_data.
  std::vector<std::optional<std::string_view>> main_initializer_raw;
  std::shared_ptr<const void> raw_owner;
  // Per-initializer owners (same indexing as main_initializer_raw), for payloads that
  // came apart from the model (LoadModelFromParts); a null entry, or none, means raw_owner.
  std::vector<std::shared_ptr<const void>> main_initializer_owner;
  // Per-initializer bytes held elsewhere (same indexing; a null entry, or none: not deferred).
  std::vector<std::shared_ptr<const DeferredBytes>> main_initializer_deferred;
};

// Given a parsed model (consumed).
// Execute builds the IR.
// Result the model, or an error naming the graph, node and value at fault.
StatusOr<std::unique_ptr<Model>> ImportModel(onnx::ModelProto proto, ImportOptions options = {});

}  // namespace onnxsurgeon
