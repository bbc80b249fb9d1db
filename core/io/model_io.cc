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

// Protobuf refuses to parse messages past 2 GiB; leave room for the non-weight fields.
constexpr uint64_t kInlineLimit = (uint64_t{1} << 31) - (uint64_t{64} << 20);

Status WithFile(const Status& s, const std::string& path) {
  if (s.ok()) return s;
  return Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

std::string ParentDir(const std::string& path) {
  fs::path p = fs::absolute(fs::path(path)).parent_path();
  return p.string();
}

struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

StatusOr<ExternalRef> ParseExternalRef(const onnx::TensorProto& meta, const std::string& name) {
  ExternalRef ref;
  for (const auto& kv : meta.external_data()) {
    char* end = nullptr;
    if (kv.key() == "location") {
      ref.location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      errno = 0;
      unsigned long long v = std::strtoull(kv.value().c_str(), &end, 10);
      // strtoull takes "-1" (as 2^64-1) and leading blanks: only plain digits are a size.
      bool digits = !kv.value().empty() && kv.value().find_first_not_of("0123456789") == std::string::npos;
      if (!digits || *end != '\0' || errno != 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor '", name, "' has a malformed external-data ", kv.key(), " '", kv.value(), "'"));
      }
      if (kv.key() == "offset") ref.offset = v;
      else ref.length = v;
    }
  }
  if (ref.location.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("tensor '", name, "' is external but names no location"));
  }
  return ref;
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

// ---- saving ------------------------------------------------------------------------

namespace {

// Where one initializer's bytes go.
struct Placement {
  bool external = false;
  std::string location;  // relative to the model's folder
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct ExternalFilePlan {
  // (offset, tensor bytes) in file order.
  std::vector<std::pair<uint64_t, std::string_view>> pieces;
  uint64_t end = 0;
};

uint64_t AlignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

// Decides inline vs external for every main-graph initializer, and the file layout.
// kKeep keeps each external tensor at its original offset where the layout allows, so a
// model saved without changes has byte-identical external files.
StatusOr<absl::flat_hash_map<const Value*, Placement>> PlanPlacements(
    const Model& model, const SaveOptions& options, const std::string& model_file_name,
    std::map<std::string, ExternalFilePlan>& files, std::deque<std::string>& converted,
    const std::function<StatusOr<std::string>(const std::string&)>& keep_location) {
  absl::flat_hash_map<const Value*, Placement> plan;
  const Graph& g = model.graph();
  ExternalDataMode mode = options.external_data;
  uint64_t inline_bytes = 0;
  for (Value* v : g.initializers()) {
    const Tensor* t = v->initializer();
    if (t->has_raw_bytes() && !(mode == ExternalDataMode::kKeep && t->storage() == TensorStorage::kExternal))
      inline_bytes += t->raw_size();
  }
  if (inline_bytes > kInlineLimit && mode != ExternalDataMode::kAll) {
    if (mode == ExternalDataMode::kInline) {
      return absl::FailedPreconditionError(
          absl::StrCat("the model holds ", inline_bytes >> 20,
                       " MiB of weights, more than protobuf's 2 GiB limit for one file: "
                       "save with external data"));
    }
    mode = ExternalDataMode::kAll;  // kKeep: the only way to write a loadable file
  }
  std::string default_location = options.location.empty() ? model_file_name + ".data" : options.location;

  // kKeep: first the tensors that already were external, at their original offsets.
  std::vector<std::tuple<std::string, uint64_t, const Value*>> keep;
  for (Value* v : g.initializers()) {
    const Tensor* t = v->initializer();
    if (!t->has_raw_bytes()) continue;
    if (mode == ExternalDataMode::kKeep && t->storage() == TensorStorage::kExternal) {
      OS_ASSIGN_OR_RETURN(ExternalRef ref, ParseExternalRef(t->meta(), v->name()));
      OS_ASSIGN_OR_RETURN(std::string location, keep_location(ref.location));
      keep.emplace_back(location, ref.offset, v);
    }
  }
  std::sort(keep.begin(), keep.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  for (auto& [location, offset, v] : keep) {
    ExternalFilePlan& f = files[location];
    uint64_t at = offset >= f.end ? offset : AlignUp(f.end, 4096);
    std::string_view bytes = v->initializer()->raw_bytes();
    f.pieces.emplace_back(at, bytes);
    f.end = at + bytes.size();
    plan[v] = {true, location, at, bytes.size()};
  }
  if (mode == ExternalDataMode::kAll) {
    for (Value* v : g.initializers()) {
      const Tensor* t = v->initializer();
      if (!t->CanBeRaw()) continue;
      std::string_view bytes;
      if (t->has_raw_bytes()) {
        bytes = t->raw_bytes();
      } else {  // typed fields (float_data, ...): externalize them too, as raw bytes
        OS_ASSIGN_OR_RETURN(std::string raw, t->RawBytesCopy());
        if (raw.size() < options.size_threshold) continue;
        bytes = converted.emplace_back(std::move(raw));
      }
      if (bytes.size() < options.size_threshold) continue;
      ExternalFilePlan& f = files[default_location];
      uint64_t at = AlignUp(f.end, bytes.size() >= 65536 ? 4096 : 64);
      f.pieces.emplace_back(at, bytes);
      f.end = at + bytes.size();
      plan[v] = {true, default_location, at, bytes.size()};
    }
  }
  return plan;
}

void SetExternalEntry(onnx::TensorProto* tp, std::string_view key, std::string value) {
  for (auto& kv : *tp->mutable_external_data()) {
    if (kv.key() == key) {
      kv.set_value(std::move(value));
      return;
    }
  }
  auto* kv = tp->add_external_data();
  kv->set_key(std::string(key));
  kv->set_value(std::move(value));
}

// Serializes `proto` (whose main-graph initializers carry no raw_data) to `out`,
// streaming each initializer's payload after its metadata.
Status StreamModel(onnx::ModelProto& proto, const std::vector<std::string_view>& payloads,
                   const std::vector<bool>& has_payload, bool has_graph,
                   const std::function<Status(std::string_view)>& write) {
  onnx::GraphProto graph;
  if (has_graph) graph.Swap(proto.mutable_graph());
  proto.clear_graph();
  auto initializers = std::move(*graph.mutable_initializer());
  graph.clear_initializer();

  std::string model_bytes = proto.SerializeAsString();
  std::string graph_bytes = graph.SerializeAsString();
  std::vector<std::string> metas;
  metas.reserve(initializers.size());
  uint64_t graph_len = graph_bytes.size();
  std::vector<uint64_t> tensor_lens;
  for (int i = 0; i < initializers.size(); ++i) {
    metas.push_back(initializers[i].SerializeAsString());
    uint64_t len = metas.back().size();
    if (has_payload[i]) len += 1 + wire::VarintSize(payloads[i].size()) + payloads[i].size();
    tensor_lens.push_back(len);
    graph_len += 1 + wire::VarintSize(len) + len;
  }
  OS_RETURN_IF_ERROR(write(model_bytes));
  if (!has_graph) return absl::OkStatus();
  std::string header;
  wire::AppendTag(header, wire::kModelGraph, wire::kWireLen);
  wire::AppendVarint(header, graph_len);
  header += graph_bytes;
  OS_RETURN_IF_ERROR(write(header));
  for (size_t i = 0; i < metas.size(); ++i) {
    header.clear();
    wire::AppendTag(header, wire::kGraphInitializer, wire::kWireLen);
    wire::AppendVarint(header, tensor_lens[i]);
    header += metas[i];
    if (has_payload[i]) {
      wire::AppendTag(header, wire::kTensorRawData, wire::kWireLen);
      wire::AppendVarint(header, payloads[i].size());
    }
    OS_RETURN_IF_ERROR(write(header));
    if (has_payload[i]) OS_RETURN_IF_ERROR(write(payloads[i]));
  }
  return absl::OkStatus();
}

// `detached`: when given, main-graph initializers with at least `min_bytes` raw bytes are
// written without raw_data and listed there instead.
Status SerializeTo(const Model& model, const absl::flat_hash_map<const Value*, Placement>* plan,
                   const std::function<Status(std::string_view)>& write,
                   std::vector<DetachedPayload>* detached = nullptr, size_t min_bytes = 0) {
  std::vector<std::string_view> payloads;
  std::vector<bool> has_payload;
  ExportOptions eo;
  eo.main_initializer_writer = [&](const Value& v, const Tensor& t, onnx::TensorProto* out) {
    const int index = static_cast<int>(payloads.size());
    *out = t.meta();
    out->set_name(v.name());
    const Placement* p = nullptr;
    if (plan) {
      auto it = plan->find(&v);
      if (it != plan->end()) p = &it->second;
    }
    if (p && p->external) {
      out->set_data_location(onnx::TensorProto::EXTERNAL);
      SetExternalEntry(out, "location", p->location);
      SetExternalEntry(out, "offset", std::to_string(p->offset));
      SetExternalEntry(out, "length", std::to_string(p->length));
      out->clear_float_data();
      out->clear_int32_data();
      out->clear_int64_data();
      out->clear_double_data();
      out->clear_uint64_data();
      payloads.emplace_back();
      has_payload.push_back(false);
    } else if (detached && t.deferred()) {
      out->clear_external_data();
      out->clear_data_location();
      detached->push_back({index,
                           nullptr,
                           {},
                           std::make_shared<const DeferredPayload>(DeferredPayload{t.deferred()->source(), nullptr})});
      payloads.emplace_back();
      has_payload.push_back(false);
    } else if (t.has_raw_bytes()) {
      out->clear_external_data();
      out->clear_data_location();
      bool detach = detached && t.raw_bytes().size() >= min_bytes;
      if (detach) detached->push_back({index, t.owner(), t.raw_bytes(), nullptr});
      payloads.push_back(detach ? std::string_view() : t.raw_bytes());
      has_payload.push_back(!detach);
    } else {
      payloads.emplace_back();
      has_payload.push_back(false);
    }
  };
  onnx::ModelProto proto = ExportModel(model, eo);
  return StreamModel(proto, payloads, has_payload, model.has_graph(), write);
}

}  // namespace

namespace {

Status Refuse(const std::string& what) { return absl::FailedPreconditionError(what); }

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::symlink_status(path, ec).type() != fs::file_type::not_found;
}

// Checks the output model path: an existing folder holds it, it is not a folder or a
// special file, and it is not a file any loaded input reads.
Status CheckOutputPath(const Model& model, const std::string& path, const std::string& full, bool replace_source) {
  std::error_code ec;
  fs::path parent = fs::path(full).parent_path();
  if (!fs::is_directory(parent, ec)) {
    return Refuse(absl::StrCat("cannot write '", path, "': its folder '", parent.string(), "' does not exist"));
  }
  auto status = fs::status(full, ec);
  if (fs::is_directory(status)) return Refuse(absl::StrCat("cannot write '", path, "': it is a folder"));
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    return Refuse(absl::StrCat("cannot write '", path, "': it exists and is not a regular file"));
  }
  if (auto id = IdentityOf(full)) {
    const std::vector<FileIdentity>* own = model.source_files().get();
    bool own_source = own && !own->empty() && own->front() == *id;  // front(): the .onnx file
    if (IsInputFile(*id, replace_source && own_source ? own : nullptr)) {
      return Refuse(
          absl::StrCat("refusing to write '", path, "': it is ",
                       own_source ? "the input model" : "a file an input model reads (its .onnx or external data)",
                       "; choose another output"));
    }
  }
  return absl::OkStatus();
}

// Folders a save creates for data locations in subfolders; removed again on failure.
class CreatedFolders {
 public:
  Status Ensure(const fs::path& dir) {
    std::error_code ec;
    if (fs::is_directory(dir, ec)) return absl::OkStatus();
    OS_RETURN_IF_ERROR(Ensure(dir.parent_path()));
    if (!fs::create_directory(dir, ec) && !fs::is_directory(dir)) {
      return Refuse(absl::StrCat("cannot create folder '", dir.string(), "': ", ec.message()));
    }
    created_.push_back(dir);
    return absl::OkStatus();
  }
  void Keep() { created_.clear(); }
  ~CreatedFolders() {
    std::error_code ec;
    for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);  // only if empty
  }

 private:
  std::vector<fs::path> created_;
};

}  // namespace

Status CheckSaveTarget(const Model& model, const std::string& path, const SaveOptions& options) {
  fs::path target(path);
  std::string file_name = target.filename().string();
  if (file_name.empty() || file_name == "." || file_name == "..") {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' names no file"));
  }
  std::string full_target = fs::absolute(target).lexically_normal().string();
  OS_RETURN_IF_ERROR(CheckOutputPath(model, path, full_target, options.replace_source));
  if (options.location.empty()) return absl::OkStatus();
  std::string dir = fs::path(full_target).parent_path().string();
  auto resolved = ResolveExternalLocation(dir, options.location, "(save)");
  if (!resolved.ok()) {
    std::string message(resolved.status().message());
    return absl::InvalidArgumentError(message.substr(message.find("external data location")));
  }
  auto id = IdentityOf(*resolved);
  const std::vector<FileIdentity>* own = options.replace_source ? model.source_files().get() : nullptr;
  if (id && IsInputFile(*id, own)) {
    return Refuse(absl::StrCat("refusing to write '", options.location,
                               "': it is a file an input model reads (its .onnx or external data); choose another "
                               "--external-location or output folder"));
  }
  return absl::OkStatus();
}

Status SaveModel(const Model& model, const std::string& path, const SaveOptions& options) {
  OS_RETURN_IF_ERROR(CheckSaveTarget(model, path, options));
  std::string file_name = fs::path(path).filename().string();
  std::string full_target = fs::absolute(fs::path(path)).lexically_normal().string();
  std::string dir = fs::path(full_target).parent_path().string();
  const std::vector<FileIdentity>* own_sources = options.replace_source ? model.source_files().get() : nullptr;
  auto is_input = [&](const std::string& full) {
    auto id = IdentityOf(full);
    return id && IsInputFile(*id, own_sources);
  };

  // kKeep writes external tensors to files of the same names beside the output. When that
  // name is a file an input reads (saving beside the source), the output gets its own
  // data file instead, at the same offsets.
  std::string own_location = options.location.empty() ? file_name + ".data" : options.location;
  auto keep_location = [&](const std::string& location) -> StatusOr<std::string> {
    OS_ASSIGN_OR_RETURN(std::string full, ResolveExternalLocation(dir, location, "(save)"));
    if (!is_input(full)) return location;
    OS_ASSIGN_OR_RETURN(std::string own_full, ResolveExternalLocation(dir, own_location, "(save)"));
    if (is_input(own_full)) {
      return Refuse(absl::StrCat("refusing to write '", own_location,
                                 "': it is a file an input model reads; choose another output folder or "
                                 "--external-location"));
    }
    return own_location;
  };
  std::map<std::string, ExternalFilePlan> files;
  std::deque<std::string> converted;  // raw bytes made from typed fields; the plan points here
  OS_ASSIGN_OR_RETURN(auto plan, PlanPlacements(model, options, file_name, files, converted, keep_location));

  // Where each data file goes. First remove what killed saves left in these folders.
  std::vector<std::string> dirs = {dir};
  std::map<std::string, std::string> full_of;
  for (const auto& [location, f] : files) {
    OS_ASSIGN_OR_RETURN(std::string full, ResolveExternalLocation(dir, location, "(save)"));
    full_of[location] = full;
    dirs.push_back(fs::path(full).parent_path().string());
  }
  RemoveStaleTemporaries(dirs);
  std::vector<std::string> previous =
      Exists(full_target) ? ReferencedDataFiles(full_target) : std::vector<std::string>{};
  auto previous_uses = [&](const std::string& full) {
    auto id = IdentityOf(full);
    for (const std::string& p : previous)
      if (p == full || (id && IdentityOf(p) == id)) return true;
    return false;
  };
  std::map<std::string, std::string> final_location;  // planned -> written
  std::set<std::string> taken;
  for (const auto& [location, full] : full_of) {
    auto target_id = IdentityOf(full_target);
    if (full == full_target || (target_id && IdentityOf(full) == target_id)) {
      return Refuse(absl::StrCat("external-data location '", location, "' is the output model itself"));
    }
    if (is_input(full)) {
      return Refuse(absl::StrCat("refusing to write '", location,
                                 "': it is a file an input model reads (its .onnx or external data); choose another "
                                 "--external-location or output folder"));
    }
    std::string chosen = location;
    if (Exists(full)) {
      if (!previous_uses(full)) {
        return Refuse(absl::StrCat("refusing to replace '", location, "': it exists, and '", file_name,
                                   "' (the model being replaced) does not use it, so it may hold another model's "
                                   "weights; remove it or choose another --external-location"));
      }
      // The model being replaced still reads it until the commit: a new name for the new data.
      chosen.clear();
      for (int version = 1; version <= 64 && chosen.empty(); ++version) {
        std::string candidate = VersionedLocation(location, version);
        OS_ASSIGN_OR_RETURN(std::string candidate_full, ResolveExternalLocation(dir, candidate, "(save)"));
        if (!Exists(candidate_full) && !taken.count(candidate_full)) chosen = candidate;
      }
      if (chosen.empty()) return Refuse(absl::StrCat("no free versioned name for '", location, "'"));
    }
    OS_ASSIGN_OR_RETURN(std::string chosen_full, ResolveExternalLocation(dir, chosen, "(save)"));
    taken.insert(chosen_full);
    final_location[location] = chosen;
    full_of[location] = chosen_full;
  }
  for (auto& [value, placement] : plan)
    if (placement.external) placement.location = final_location.at(placement.location);

  // Write everything to synced temporaries; nothing has a final name yet.
  const std::string token = AtomicFile::NewToken();
  CreatedFolders folders;
  OS_ASSIGN_OR_RETURN(auto model_file, AtomicFile::Create(full_target, AtomicFile::Role::kModel, token));
  std::vector<std::unique_ptr<AtomicFile>> data_files;
  for (auto& [location, f] : files) {
    const std::string& full = full_of.at(location);
    OS_RETURN_IF_ERROR(folders.Ensure(fs::path(full).parent_path()));
    OS_ASSIGN_OR_RETURN(auto out, AtomicFile::Create(full, AtomicFile::Role::kData, token));
    std::sort(f.pieces.begin(), f.pieces.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [offset, bytes] : f.pieces) {
      OS_RETURN_IF_ERROR(out->Skip(offset - out->size()));
      OS_RETURN_IF_ERROR(out->Write(bytes));
    }
    OS_RETURN_IF_ERROR(out->Sync());
    data_files.push_back(std::move(out));
  }
  OS_RETURN_IF_ERROR(SerializeTo(model, &plan, [&](std::string_view b) { return model_file->Write(b); }));
  OS_RETURN_IF_ERROR(model_file->Sync());

  // The replaced model's data files are garbage once the new model is committed (the new
  // data files all have new names), unless an input still reads them.
  std::vector<SaveJournal::Entry> journal_entries;
  std::vector<std::string> obsolete;
  auto target_id = IdentityOf(full_target);
  for (const std::string& old : previous) {
    bool rewritten = std::any_of(full_of.begin(), full_of.end(), [&](const auto& kv) { return kv.second == old; });
    auto id = IdentityOf(old);
    if (!id || rewritten || old == full_target || id == target_id || is_input(old)) continue;
    obsolete.push_back(old);
    journal_entries.push_back({false, *id, old});
  }
  for (auto& f : data_files) journal_entries.push_back({true, {f->device(), f->inode()}, f->path()});
  // Written before anything takes a final name: a save killed from here on is finished
  // (or undone) by the next one (RemoveStaleTemporaries).
  OS_ASSIGN_OR_RETURN(auto journal, SaveJournal::Write(full_target, token, journal_entries));

  // Data files take their (new) names, then the model's rename commits the save.
  std::set<std::string> synced_dirs;
  for (auto& f : data_files) {
    OS_RETURN_IF_ERROR(f->Publish());
    std::string d = fs::path(f->path()).parent_path().string();
    if (d != dir && synced_dirs.insert(d).second) OS_RETURN_IF_ERROR(SyncDirectory(d));
  }
  OS_RETURN_IF_ERROR(model_file->Commit());
  for (auto& f : data_files) f->Finish();
  folders.Keep();
  SyncDirectory(dir).IgnoreError();  // committed already; this only hastens durability
  for (const std::string& old : obsolete) ::unlink(old.c_str());
  return absl::OkStatus();
}

StatusOr<DetachedModel> SaveModelDetached(const Model& model, size_t min_bytes) {
  DetachedModel out;
  OS_RETURN_IF_ERROR(SerializeTo(
      model, nullptr,
      [&](std::string_view b) {
        out.bytes.append(b);
        return absl::OkStatus();
      },
      &out.parts, min_bytes));
  return out;
}

StatusOr<std::string> SaveModelToBytes(const Model& model) {
  uint64_t total = 0;
  for (Value* v : model.graph().initializers()) total += v->initializer()->raw_size();
  if (total > kInlineLimit) {
    return absl::FailedPreconditionError(absl::StrCat("the model holds ", total >> 20,
                                                      " MiB of weights, too many for one protobuf: save to a file "
                                                      "with external data instead"));
  }
  std::string out;
  out.reserve(total + (1 << 20));
  OS_RETURN_IF_ERROR(SerializeTo(model, nullptr, [&](std::string_view b) {
    out.append(b);
    return absl::OkStatus();
  }));
  return out;
}

}  // namespace onnxsurgeon
