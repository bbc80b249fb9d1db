// Saving: where each tensor goes (inline or which external file), the checks on the
// output path, and the atomic write (core/io/model_io.h).
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
