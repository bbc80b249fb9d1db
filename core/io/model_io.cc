// Loading: parse, map external data, import (core/io/model_io.h).
#include "core/io/model_io.h"

#include <unistd.h>
#include <climits>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "core/io/atomic_file.h"
#include "core/io/exporter.h"
#include "core/io/external_location.h"
#include "core/io/importer.h"
#include "core/io/mapped_file.h"
#include "core/io/output_files.h"
#include "core/io/validate.h"
#include "core/io/wire.h"
#include "google/protobuf/io/coded_stream.h"

namespace onnxsurgeon {
namespace fs = std::filesystem;

namespace {

Status WithFile(const Status& s, const std::string& path) {
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

std::string ParentDir(const std::string& path) {
  fs::path p = fs::absolute(fs::path(path)).parent_path();
  return p.string();
}

// Maps every external-data file once and points tensors into it.
class ExternalDataLoader {
 public:
  explicit ExternalDataLoader(std::string base_dir) : base_dir_(std::move(base_dir)) {}

  // Identities of the files mapped so far.
  std::vector<FileIdentity> Identities() const {
    std::vector<FileIdentity> ids;
    for (const auto& [path, file] : files_) ids.push_back({file->device(), file->inode()});
    return ids;
  }

  // Initializers (main graph and subgraphs) keep a view into the mapped file.
  Status Load(Graph& g) {
    for (Value* v : g.initializers()) {
      Tensor* t = v->mutable_initializer();
      if (t->meta().data_location() != onnx::TensorProto::EXTERNAL) continue;
      OS_ASSIGN_OR_RETURN(Range range, Read(t->meta(), v->name()));
      t->AttachLoadedBytes(range.file, range.bytes, TensorStorage::kExternal);
    }
    for (Node* n : g.nodes())
      for (Graph* sub : n->subgraphs()) OS_RETURN_IF_ERROR(Load(*sub));
    return absl::OkStatus();
  }

  // Every other tensor that may be external (attribute tensors such as a Constant's value,
  // sparse initializers) has no external storage in the IR: its bytes are read into the
  // proto before it is imported. Left external, the saved model would name a file that is
  // not beside it, and a pass folding the Constant would read no data.
  Status InlineOtherTensors(onnx::ModelProto& model) {
    for (onnx::FunctionProto& f : *model.mutable_functions())
      for (onnx::NodeProto& n : *f.mutable_node()) OS_RETURN_IF_ERROR(InlineAttributes(n));
    return InlineGraph(*model.mutable_graph());
  }

 private:
  struct Range {
    std::shared_ptr<MappedFile> file;
    std::string_view bytes;
  };

  // The bytes an external tensor names, after every rule on where they may come from.
  StatusOr<Range> Read(const onnx::TensorProto& meta, const std::string& name) {
    if (base_dir_.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor '", name, "' has external data, but the model was loaded from bytes without a base folder"));
    }
    OS_ASSIGN_OR_RETURN(ExternalRef ref, ParseExternalRef(meta, name));
    OS_ASSIGN_OR_RETURN(std::string path, ResolveExternalLocation(base_dir_, ref.location, name));
    auto it = files_.find(path);
    if (it == files_.end()) {
      auto mapped = MappedFile::Open(path);
      if (!mapped.ok()) {
        return absl::NotFoundError(absl::StrCat("tensor '", name, "': external data file '", ref.location,
                                                "' cannot be read: ", mapped.status().message()));
      }
      // onnx's checker refuses a data file with several links (its other name may be
      // outside the folder, where no location may point); so does this loader.
      if ((*mapped)->links() > 1) {
        return absl::PermissionDeniedError(absl::StrCat("tensor '", name, "': external data file '", ref.location,
                                                        "' has ", (*mapped)->links(),
                                                        " hard links; onnx refuses such files, as another link may "
                                                        "lie outside the model's folder"));
      }
      it = files_.emplace(path, *std::move(mapped)).first;
    }
    std::string_view bytes = it->second->bytes();
    // No length: the tensor's own size (onnx reads to the end of the file, which is the
    // same for a file holding one tensor and a mismatch error otherwise).
    std::optional<uint64_t> length_given = ref.length ? ref.length : ExpectedRawBytes(meta);
    uint64_t length = length_given.value_or(ref.offset <= bytes.size() ? bytes.size() - ref.offset : 0);
    if (ref.offset > bytes.size() || length > bytes.size() - ref.offset) {
      return absl::OutOfRangeError(absl::StrCat("tensor '", name, "': external data range of ", length,
                                                " bytes at offset ", ref.offset, " lies outside '", ref.location, "' (",
                                                bytes.size(), " bytes)"));
    }
    OS_RETURN_IF_ERROR(ValidateTensorData(meta, length, absl::StrCat("tensor '", name, "'")));
    return Range{it->second, bytes.substr(ref.offset, length)};
  }

  Status Inline(onnx::TensorProto& t, const std::string& fallback_name) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return absl::OkStatus();
    OS_ASSIGN_OR_RETURN(Range range, Read(t, t.name().empty() ? fallback_name : t.name()));
    t.set_raw_data(std::string(range.bytes));
    t.clear_external_data();
    t.clear_data_location();
    return absl::OkStatus();
  }

  Status InlineSparse(onnx::SparseTensorProto& s, const std::string& name) {
    OS_RETURN_IF_ERROR(Inline(*s.mutable_values(), name));
    return Inline(*s.mutable_indices(), name + " indices");
  }

  Status InlineAttributes(onnx::NodeProto& n) {
    for (onnx::AttributeProto& a : *n.mutable_attribute()) {
      std::string name = absl::StrCat(n.name().empty() ? n.op_type() : n.name(), ".", a.name());
      if (a.has_t()) OS_RETURN_IF_ERROR(Inline(*a.mutable_t(), name));
      for (onnx::TensorProto& t : *a.mutable_tensors()) OS_RETURN_IF_ERROR(Inline(t, name));
      if (a.has_sparse_tensor()) OS_RETURN_IF_ERROR(InlineSparse(*a.mutable_sparse_tensor(), name));
      for (onnx::SparseTensorProto& s : *a.mutable_sparse_tensors()) OS_RETURN_IF_ERROR(InlineSparse(s, name));
      if (a.has_g()) OS_RETURN_IF_ERROR(InlineGraph(*a.mutable_g()));
      for (onnx::GraphProto& g : *a.mutable_graphs()) OS_RETURN_IF_ERROR(InlineGraph(g));
    }
    return absl::OkStatus();
  }

  // Not the dense initializers: Load maps those.
  Status InlineGraph(onnx::GraphProto& g) {
    for (onnx::SparseTensorProto& s : *g.mutable_sparse_initializer())
      OS_RETURN_IF_ERROR(InlineSparse(s, s.values().name()));
    for (onnx::NodeProto& n : *g.mutable_node()) OS_RETURN_IF_ERROR(InlineAttributes(n));
    return absl::OkStatus();
  }

  std::string base_dir_;
  absl::flat_hash_map<std::string, std::shared_ptr<MappedFile>> files_;
};

// Why protobuf refused a ModelProto. Its parser reports no cause; the one a well-formed
// file can hit is its recursion limit (subgraphs nested about 31 deep), so that is named.
// (A graph k levels down sits at message level 1 + 3k; its value types reach 5 below it.)
Status ParseFailure(std::string_view model) {
  const int limit = google::protobuf::io::CodedInputStream::GetDefaultRecursionLimit();
  wire::Nesting nesting = wire::MeasureNesting(model, /*max_level=*/10 * limit);
  if (nesting.messages > limit) {
    const char* at_least = nesting.messages >= 10 * limit ? "at least " : "";  // the walk stopped there
    std::string graphs =
        nesting.graphs > 1 ? absl::StrCat(" (subgraphs nested ", at_least, nesting.graphs - 1, " deep)") : "";
    return absl::DataLossError(absl::StrCat("not a valid ONNX model: its messages nest ", at_least, nesting.messages,
                                            " deep", graphs, ", past protobuf's parse limit of ", limit,
                                            " nested messages (about ", (limit - 6) / 3, " levels of subgraphs)"));
  }
  return absl::DataLossError("not a valid ONNX model: the protobuf does not parse as a ModelProto");
}

StatusOr<std::unique_ptr<Model>> LoadFromBuffer(std::shared_ptr<const void> owner, std::string_view bytes,
                                                const LoadOptions& options, const std::string& base_dir,
                                                std::optional<FileIdentity> model_file,
                                                std::vector<DetachedPayload>* parts = nullptr) {
  OS_ASSIGN_OR_RETURN(wire::StrippedModel stripped, wire::StripInitializerPayloads(bytes));
  onnx::ModelProto proto;
  if (!proto.ParseFromString(stripped.remainder)) return ParseFailure(stripped.remainder);
  std::vector<std::shared_ptr<const void>> part_owners;
  std::vector<std::shared_ptr<const DeferredBytes>> deferred;
  std::vector<std::optional<uint64_t>> sizes;
  for (const auto& raw : stripped.raw_data) sizes.push_back(raw ? std::optional<uint64_t>(raw->size()) : std::nullopt);
  if (parts && !parts->empty()) {
    const int count = proto.graph().initializer_size();
    stripped.raw_data.resize(count);
    sizes.resize(count);
    part_owners.resize(count);
    deferred.resize(count);
    for (DetachedPayload& p : *parts) {
      if (p.index < 0 || p.index >= count) {
        return absl::InvalidArgumentError(absl::StrCat("detached payload for initializer #", p.index,
                                                       ", but the main graph has ", count, " initializers"));
      }
      const onnx::TensorProto& tp = proto.graph().initializer(p.index);
      if (stripped.raw_data[p.index] || deferred[p.index]) {
        return absl::InvalidArgumentError(absl::StrCat("initializer '", tp.name(), "' (#", p.index,
                                                       ") has raw_data already, or two detached payloads"));
      }
      if (p.deferred) {
        std::optional<uint64_t> size = ExpectedRawBytes(tp);
        if (!size || tp.has_raw_data() || tp.data_location() == onnx::TensorProto::EXTERNAL) {
          return absl::InvalidArgumentError(absl::StrCat("initializer '", tp.name(), "' (#", p.index,
                                                         ") cannot hold deferred raw_data: its dims and type give no "
                                                         "size, or it has data of its own"));
        }
        deferred[p.index] = std::make_shared<const DeferredBytes>(*size, p.deferred->source, p.deferred->fetch);
        sizes[p.index] = size;
        continue;
      }
      stripped.raw_data[p.index] = p.bytes;
      sizes[p.index] = p.bytes.size();
      part_owners[p.index] = std::move(p.owner);
    }
  }
  // Everything the IR and passes rely on, before the importer builds anything.
  OS_RETURN_IF_ERROR(ValidateModelProto(proto, &sizes));
  std::optional<ExternalDataLoader> external;
  if (options.load_external_data) {
    external.emplace(base_dir);
    OS_RETURN_IF_ERROR(external->InlineOtherTensors(proto));
  }
  ImportOptions import;
  import.main_initializer_raw = std::move(stripped.raw_data);
  import.raw_owner = std::move(owner);
  import.main_initializer_owner = std::move(part_owners);
  import.main_initializer_deferred = std::move(deferred);
  OS_ASSIGN_OR_RETURN(std::unique_ptr<Model> model, ImportModel(std::move(proto), std::move(import)));
  model->set_base_dir(base_dir);
  std::vector<FileIdentity> sources;
  if (model_file) sources.push_back(*model_file);
  if (external) {
    OS_RETURN_IF_ERROR(external->Load(model->graph()));
    for (const FileIdentity& id : external->Identities()) sources.push_back(id);
  }
  // Registered while the model lives: no save may write over what it reads.
  model->set_source_files(RegisterInputFiles(std::move(sources)));
  return model;
}

}  // namespace

StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options) {
  auto mapped = MappedFile::Open(path);
  if (!mapped.ok()) return mapped.status();
  std::shared_ptr<MappedFile> file = *std::move(mapped);
  if (file->bytes().empty()) return absl::DataLossError(absl::StrCat(path, ": empty file, not an ONNX model"));
  std::string_view bytes = file->bytes();
  auto model = LoadFromBuffer(file, bytes, options, ParentDir(path), FileIdentity{file->device(), file->inode()});
  if (!model.ok()) return WithFile(model.status(), path);
  std::error_code ec;
  (*model)->set_source_path(fs::absolute(path, ec).lexically_normal().string());
  return model;
}

StatusOr<std::unique_ptr<Model>> LoadModelFromBytes(std::string bytes, const LoadOptions& options) {
  if (bytes.empty()) return absl::DataLossError("empty buffer, not an ONNX model");
  auto owned = std::make_shared<std::string>(std::move(bytes));
  std::string_view view(*owned);
  return LoadFromBuffer(owned, view, options, options.base_dir, std::nullopt);
}

StatusOr<std::unique_ptr<Model>> LoadModelFromParts(std::shared_ptr<const void> owner, std::string_view bytes,
                                                    std::vector<DetachedPayload> parts, const LoadOptions& options) {
  return LoadFromBuffer(std::move(owner), bytes, options, options.base_dir, std::nullopt, &parts);
}

StatusOr<std::unique_ptr<Model>> LoadModelFromBuffer(std::shared_ptr<const void> owner, std::string_view bytes,
                                                     const LoadOptions& options) {
  if (bytes.empty()) return absl::DataLossError("empty buffer, not an ONNX model");
  return LoadFromBuffer(std::move(owner), bytes, options, options.base_dir, std::nullopt);
}

}  // namespace onnxsurgeon
