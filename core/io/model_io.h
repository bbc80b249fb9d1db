// Loading and saving models: files or bytes, inline or external weights.
//
//   auto model = LoadModel("model.onnx");            // weights stay in the file's mmap
//   SaveModel(*model, "out.onnx");                   // atomic; external data kept external
//   SaveModel(*model, "out.onnx", {.external_data = ExternalDataMode::kAll});
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

struct LoadOptions {
  // Folder for relative external-data locations when loading from bytes (from a file:
  // the file's folder).
  std::string base_dir;
  // Map external-data files now (validating every location and range). When false the
  // tensors keep their external references and cannot be saved elsewhere.
  bool load_external_data = true;
};

// Given a path. Execute maps the file, cuts out initializer payloads, parses the rest,
// builds the IR and maps external data. Result the model, or an error naming the file
// and what is wrong (truncated, dangling name, cycle, unsafe external location...).
StatusOr<std::unique_ptr<Model>> LoadModel(const std::string& path, const LoadOptions& options = {});
// Same from bytes (copied once into a buffer the tensors then share).
StatusOr<std::unique_ptr<Model>> LoadModelFromBytes(std::string bytes, const LoadOptions& options = {});
// Same from bytes someone else owns, without a copy: the tensors view `bytes` and keep
// `owner` alive (the Python bindings pass a bytes object's buffer).
StatusOr<std::unique_ptr<Model>> LoadModelFromBuffer(std::shared_ptr<const void> owner, std::string_view bytes,
                                                     const LoadOptions& options = {});

// A main-graph initializer's raw_data kept apart from a serialized model: the initializer's
// position in GraphProto.initializer, its bytes, and what keeps them alive. Or, with
// `deferred` set (bytes and owner unused), bytes held elsewhere: loading gives the tensor
// DeferredBytes of the size its dims and type declare, fetched by deferred->fetch on first
// use; saving hands back an untouched tensor's deferred->source instead of its bytes.
struct DeferredPayload {
  std::shared_ptr<const void> source;
  DeferredBytes::Fetcher fetch;
};
struct DetachedPayload {
  int index = 0;
  std::shared_ptr<const void> owner;
  std::string_view bytes;
  std::shared_ptr<const DeferredPayload> deferred;
};

// Given a serialized ModelProto whose listed main-graph initializers carry no raw_data,
// and their payloads (the Python bindings pass a slimmed onnx.ModelProto's bytes and the
// big tensors' raw_data objects, so protobuf never serializes the weights).
// Execute loads as LoadModelFromBuffer, each listed initializer viewing its payload (no
// copy) and keeping its owner alive.
// Deferred payloads: the tensor holds DeferredBytes (nothing is fetched while loading).
// Result the model; an error for an index out of range, given twice, or naming an
// initializer that has raw_data of its own (or, deferred, one whose size its dims and type
// do not give).
StatusOr<std::unique_ptr<Model>> LoadModelFromParts(std::shared_ptr<const void> owner, std::string_view bytes,
                                                    std::vector<DetachedPayload> parts,
                                                    const LoadOptions& options = {});

// A model serialized without its big main-graph initializer payloads, and those payloads
// (views into the model's tensors: valid while the model and its tensors are unchanged).
struct DetachedModel {
  std::string bytes;
  std::vector<DetachedPayload> parts;
};
// Given a model and a size. Execute serializes it as SaveModelToBytes, except that every
// main-graph initializer with at least `min_bytes` raw bytes, and every one whose bytes are
// still deferred (TensorStorage::kDeferred, fetched or not), is written without raw_data
// (and without external-data markers) and returned in `parts` instead: deferred ones as
// their DeferredBytes' source (parts[i].deferred->source; no bytes, nothing fetched).
// Result setting parts[i].bytes (or the deferred source's bytes) as raw_data of initializer
// parts[i].index of the parsed bytes gives what SaveModelToBytes gives.
StatusOr<DetachedModel> SaveModelDetached(const Model& model, size_t min_bytes);

enum class ExternalDataMode {
  kKeep,    // tensors loaded from external files stay external (same locations); others inline
  kInline,  // every tensor inline (error past protobuf's 2 GiB limit)
  kAll,     // every tensor of at least size_threshold bytes into one external file
};

struct SaveOptions {
  ExternalDataMode external_data = ExternalDataMode::kKeep;
  size_t size_threshold = 1024;
  // External file for kAll, relative to the model's folder; default "<model file>.data".
  // It may take a versioned name ("w.1.bin") when the model being replaced uses it.
  std::string location;
  // Allow `path` to be the model's own source file (an explicit in-place save). Other
  // inputs' files are never written over.
  bool replace_source = false;
};

// Given a model and a path. Execute checks every file it would write against the rules
// of core/io/output_files.h, writes the external-data files and the model to synced
// temporaries, gives the data files new names and renames the model into place (the
// single commit point), then removes the data files the replaced model used.
// Result nothing is written on error; an existing output is replaced whole or not at all.
Status SaveModel(const Model& model, const std::string& path, const SaveOptions& options = {});
// The checks SaveModel makes on `path` and `options.location` before writing anything
// (existing folder, not a folder, not an input's file), for callers that want to fail
// before a long pipeline rather than after it. SaveModel repeats them.
Status CheckSaveTarget(const Model& model, const std::string& path, const SaveOptions& options = {});
// Serialized ModelProto with every tensor inline.
StatusOr<std::string> SaveModelToBytes(const Model& model);

}  // namespace onnxsurgeon
