// AtomicFile: writes go to a temporary file beside the target, synced to disk before it
// takes the target's name, so a reader sees the old file or the complete new one.
//
// Temporaries are named `.NAME.tmp.PID.TOKEN` (model) or `.NAME.tmp.PID.TOKEN.d`
// (external data): every file of one save shares TOKEN, and PID says whose they are, so
// a later save can remove what a killed one left (core/io/output_files.h). A file that
// is never committed (or published, then abandoned) is removed by the destructor.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/ir/status.h"

namespace onnxsurgeon {

class AtomicFile {
 public:
  enum class Role { kModel, kData };
  // Given the final path, the role and the token shared by one save's files.
  // Execute creates the temporary (exclusively) beside `path`.
  static StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path, Role role = Role::kModel,
                                                      const std::string& token = NewToken());
  // Six random characters for temporary names.
  static std::string NewToken();
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Buffered append; large writes go straight to the file.
  Status Write(std::string_view bytes);
  // Appends `n` zero bytes (a hole where the filesystem supports it).
  Status Skip(uint64_t n);
  uint64_t size() const { return size_; }

  // Flushes, sizes, fsyncs and closes the temporary. Commit and Publish call it.
  Status Sync();
  // Renames the temporary over the target (replacing it). The commit point of a save.
  Status Commit();
  // Renames the temporary to the target, which must not exist (never replaces a file).
  // Undone by the destructor unless Finish() is called: for data files, which are only
  // final once the model referencing them is committed.
  Status Publish();
  // After the model's Commit: the published file stays.
  void Finish();
  // Device and inode of the file being written (the journal records them).
  uint64_t device() const { return device_; }
  uint64_t inode() const { return inode_; }

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }

 private:
  AtomicFile() = default;
  Status Flush();
  enum class State { kWriting, kSynced, kPublished, kDone };
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string buffer_;
  State state_ = State::kWriting;
  uint64_t device_ = 0, inode_ = 0;
};

// Fsyncs a folder, so renames and links in it survive a crash.
Status SyncDirectory(const std::string& dir);

}  // namespace onnxsurgeon
