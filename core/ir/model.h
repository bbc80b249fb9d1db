// Model: the root of the IR. Holds the main graph, the model-local functions, and a
// ModelProto shell with every other field (ir_version, opset_import, producer, metadata,
// doc_string, training_info, configuration, unknown fields) exactly as loaded.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/ir/domains.h"
#include "core/ir/function.h"
#include "core/ir/graph.h"
#include "onnx/onnx_pb.h"

namespace onnxsurgeon {

// A file by device and inode: the same file whatever the path spelling (symlinks, "./",
// hard links).
struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  bool operator==(const FileIdentity&) const = default;
};

class Model {
 public:
  Model();
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const onnx::ModelProto& proto() const { return proto_; }
  onnx::ModelProto& mutable_proto() { return proto_; }

  Graph& graph() { return *graph_; }
  const Graph& graph() const { return *graph_; }

  const std::vector<std::unique_ptr<Function>>& functions() const { return functions_; }
  std::vector<std::unique_ptr<Function>>& mutable_functions() { return functions_; }
  Function* FindFunction(std::string_view domain, std::string_view name, std::string_view overload = "") const;

  // Opset version imported for `domain` ("" and "ai.onnx" are the same), or -1.
  int64_t OpsetVersion(std::string_view domain) const;
  // Given a domain and version. Execute sets (or adds) the opset import.
  void SetOpsetVersion(std::string_view domain, int64_t version);

  bool has_graph() const { return had_graph_ || graph_->num_nodes() > 0; }

  // Folder that relative external-data locations are resolved against (empty if none).
  const std::string& base_dir() const { return base_dir_; }
  void set_base_dir(std::string dir) { base_dir_ = std::move(dir); }
  // The file the model was loaded from (empty when loaded from bytes or built).
  const std::string& source_path() const { return source_path_; }
  void set_source_path(std::string path) { source_path_ = std::move(path); }
  // The files the model was read from: its .onnx file and every external-data file.
  // Shared with core/io's registry of live inputs (core/io/output_files.h), which savers
  // consult so that no save writes over a file a loaded model reads.
  const std::shared_ptr<const std::vector<FileIdentity>>& source_files() const { return source_files_; }
  void set_source_files(std::shared_ptr<const std::vector<FileIdentity>> files) { source_files_ = std::move(files); }

  // A name unused by any value or node in the model, derived from `base`.
  std::string UniqueName(std::string_view base);
  // Records a name as used (the importer and node creation call it).
  void ReserveName(std::string_view name);

  // Every graph in the model: the main graph, subgraphs, function bodies (pre-order).
  std::vector<Graph*> AllGraphs() const;

 private:
  friend class GraphImporter;
  friend class GraphExporter;
  onnx::ModelProto proto_;  // shell: graph and functions cleared
  std::unique_ptr<Graph> graph_;
  std::vector<std::unique_ptr<Function>> functions_;
  std::string base_dir_;
  std::string source_path_;
  std::shared_ptr<const std::vector<FileIdentity>> source_files_;
  bool had_graph_ = true;  // a ModelProto without a graph field stays without one
  absl::flat_hash_set<std::string> used_names_;
  absl::flat_hash_map<std::string, int64_t> name_counters_;
};

}  // namespace onnxsurgeon
