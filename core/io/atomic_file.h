// AtomicFile: writes go to a temporary file beside the target; Commit() renames it into
// place. A file that is never committed is removed, so a failed run leaves any existing
// output untouched.
#pragma once

#include <string>
#include <string_view>

#include "core/ir/status.h"

namespace onnxsurgeon {

class AtomicFile {
 public:
  static StatusOr<std::unique_ptr<AtomicFile>> Create(const std::string& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Buffered append; large writes go straight to the file.
  Status Write(std::string_view bytes);
  // Appends `n` zero bytes (a hole where the filesystem supports it).
  Status Skip(uint64_t n);
  uint64_t size() const { return size_; }
  // Flushes, closes and renames over the target.
  Status Commit();
  const std::string& path() const { return path_; }

 private:
  AtomicFile() = default;
  Status Flush();
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  std::string buffer_;
  bool committed_ = false;
};

}  // namespace onnxsurgeon
