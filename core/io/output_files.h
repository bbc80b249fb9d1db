// The rules for what a save may write (docs/reliability.md, "Files: what is read, what is
// written, and when"):
//
//  - Inputs are untouchable. Every loaded model registers the identity (device, inode) of
//    its .onnx and external-data files while it lives; a save refuses any output or data
//    path that is one of them, however it is spelled (symlink, "./", hard link).
//  - A save never writes into an existing file. Each file is written to a temporary beside
//    its target and synced; data files then take a name that does not exist yet, and the
//    model's rename over its target is the single commit point.
//  - A data file name is the output's own when it does not exist, or when the model being
//    replaced references it (then the new data takes a versioned name, and the old file is
//    removed after the commit). Any other existing file is another model's: refused.
//  - Temporaries a killed save left (dead PID) are removed by the next save into the folder.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/model.h"
#include "core/ir/status.h"

namespace onnxsurgeon {

// The file `path` names (following symlinks), or nullopt when there is none.
std::optional<FileIdentity> IdentityOf(const std::string& path);

// Given the identities of a loaded model's files.
// Execute registers them as live inputs for as long as the returned handle lives.
std::shared_ptr<const std::vector<FileIdentity>> RegisterInputFiles(std::vector<FileIdentity> files);
// True when `id` is a file some live loaded model reads (registered, or still mapped).
// `except` (may be null) is left out: a model replacing its own source.
bool IsInputFile(const FileIdentity& id, const std::vector<FileIdentity>* except = nullptr);

// Given folders a save is about to write into.
// Execute removes the temporaries (`.NAME.tmp.PID.TOKEN[.d|.journal]`) of saves whose
// process is gone, and finishes what such a save's journal says: a save that never
// committed (its model temporary is still there) leaves the data files it published
// unreferenced; one that committed leaves the replaced model's data files unreferenced.
// Either set is removed, each file only if its device and inode match the journal.
void RemoveStaleTemporaries(const std::vector<std::string>& dirs);
// The files RemoveStaleTemporaries removes, in the order it removes them. The order makes a
// cleanup killed after any prefix safe to redo (tests replay every prefix).
std::vector<std::string> StaleTemporaryRemovals(const std::vector<std::string>& dirs);

// The journal of one save, `.MODEL.tmp.PID.TOKEN.journal` beside the output model:
// written (and synced) before any data file takes its final name, removed when the save
// is over, whichever way it ends.
class SaveJournal {
 public:
  struct Entry {
    bool published;  // a new data file (else a data file of the replaced model, deleted after the commit)
    FileIdentity id;
    std::string path;  // absolute
  };
  static StatusOr<std::unique_ptr<SaveJournal>> Write(const std::string& model_path, const std::string& token,
                                                      const std::vector<Entry>& entries);
  ~SaveJournal();
  SaveJournal(const SaveJournal&) = delete;
  SaveJournal& operator=(const SaveJournal&) = delete;

 private:
  SaveJournal() = default;
  std::string path_;
};

// Given an existing model file. Result the absolute paths of the external-data files it
// references inside its folder (empty when it cannot be read: it is being replaced).
std::vector<std::string> ReferencedDataFiles(const std::string& model_path);

// "w.bin", 2 -> "w.2.bin"; "sub/out.onnx.data", 1 -> "sub/out.onnx.1.data".
std::string VersionedLocation(const std::string& location, int version);

}  // namespace onnxsurgeon
